/* SPDX-License-Identifier: GPL-2.0 */
/* --sharing in JSON snapshots (doc/sharing.md): "uss", "pss", "shared" (bytes) on each
 * process and mapping a sharing pass has read, and "stats.sharing", its cost. */
#ifndef MEVITOP_JSON_SHARE_H
#define MEVITOP_JSON_SHARE_H

#include <stdbool.h>
#include "engine/engine.h"
#include "out/json_buf.h"

/* ", \"uss\": ..., \"pss\": ..., \"shared\": ..., \"ksm\": ..., \"sharing_at\": ..." when p
 * has been read; nothing otherwise. */
void json_share_proc(struct buf *b, const struct proc *p);
/* ", \"uss\": ..., \"pss\": ..., \"shared\": ..., \"shared_runs\": [...]" when p has been
 * read: shared_runs are the runs of pages mapped by 2, 3-8 or 9+ ("by"). */
void json_share_mapping(struct buf *b, const struct proc *p, const struct mapping *m);
/* "\"sharing\": {...}" (after a comma when comma). */
void json_share_stats(struct buf *b, bool comma, const struct share_stats *st);

#endif
