/* SPDX-License-Identifier: GPL-2.0 */
/* The page cache in JSON snapshots (doc/json.md, doc/pagecache.md): "memory",
 * "files", "files_omitted" and "files_stats", as text a frame carries. */
#ifndef MEVITOP_JSON_FILES_H
#define MEVITOP_JSON_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include "engine/engine.h"

/* The members (no leading comma) for engine e under its lock: whole_system adds "memory"
 * and the top `top` files (0: all), the rest summed; otherwise only watched files.  *out
 * is malloc'ed (NULL if nothing to write); 0 or -ENOMEM. */
int json_files_text(struct engine *e, uint32_t top, bool whole_system, char **out);

#endif
