/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEVITOP_OUT_WEB_LIVE_H
#define MEVITOP_OUT_WEB_LIVE_H

#include "engine/engine.h"
#include "out/web.h"

/* The live engine as the web view's source: each request copies what it needs from the
 * model under the engine lock (waiting for it at most HTTP_LOCK_WAIT_MS, else 503) and
 * writes its answer after releasing it. */
void web_live_source(struct engine *e, struct web_source *out);

#endif
