/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The web view's "who touched" layer (doc/web.md): --stacks' first touches of one process,
 * as the terminal's cursor line and its 'w' pane name them (ui/ui_heatmap.c fill_stacks).
 *
 *   GET /api/touch?pid=N  {"pid", "cut", "chunk_pages", "stacks": [{"pages", "tid",
 *                          "age_ms", "unwind", "frames"}],
 *                          "touches": [from, length, stack, tid, age_ms, ...]}
 *
 * stacks are the process's first-touch stacks, most resident pages first (the pane's
 * order: pages now resident in the ranges each first touched, its earliest touch's thread
 * and age; one with none resident now is kept, "pages": 0, for its touches' hover, where
 * the pane leaves it out); touches are the ranges (pages) each stack first touched, in
 * address order, `stack` an index into stacks, each within one chunk_pages-aligned chunk
 * (a page's touch is the first of its chunk's that holds it, as stacks_touch_at finds
 * it).  Ages are milliseconds before the frame.  A run of touches one thread made with one stack within
 * 0.1 s (exact mode's per-page touches) is one entry within its chunk, its age the
 * earliest's; past WEB_TOUCH_MAX entries the rest is left out ("cut").
 */
#ifndef MEVITOP_OUT_WEB_TOUCH_H
#define MEVITOP_OUT_WEB_TOUCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "engine/frame.h"
#include "out/json_buf.h"

#define WEB_TOUCH_MAX	(1u << 18)	/* touches sent (a GiB of exact mode's pages) */
#define WEB_TOUCH_MERGE_NS 100000000ULL	/* one entry for one thread's run within this */

struct web_touch {
	uint64_t from, to;		/* pages */
	uint32_t stack;			/* index into web_tsnap.stacks */
	uint32_t tid;
	uint64_t ts;			/* CLOCK_MONOTONIC ns: the run's earliest */
};

struct web_tstack {
	uint32_t idx;			/* the table's (stacks/stacks.h) */
	uint32_t tid;			/* of its earliest touch */
	uint64_t pages, ts;		/* resident pages of its ranges; its earliest touch */
	bool fp;			/* the caller chain was followed (UNWIND_FP) */
	char *frames;			/* "inner ← ... ← outer" */
};

/* One answer's copy, made under the source. */
struct web_tsnap {
	pid_t pid;
	uint64_t mono_ns;		/* the frame's */
	bool cut;
	struct web_touch *t;
	size_t n, cap;
	struct web_tstack *s;
	size_t ns;
};

/* Under the source: pid's first touches in frame f copied into out.  0, -ENOENT (no
 * --stacks in the frame), -ESRCH (no such process) or -ENOMEM. */
int web_touch_snap(const struct json_frame *f, pid_t pid, struct web_tsnap *out);
/* Without the lock: the answer's JSON. */
void web_touch_json(const struct web_tsnap *s, struct buf *b);
void web_touch_snap_free(struct web_tsnap *s);

#endif
