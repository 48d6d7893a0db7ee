/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEVITOP_FRAME_H
#define MEVITOP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "engine/engine.h"

/*
 * One snapshot as the writers see it: what live mode reads from the engine, what a recording
 * stores and replay rebuilds (user/rec/), and what the view draws a recording from (ui/), so
 * each prints or draws the same thing.  The engine's type: out/json.c fills it and writes it.
 */
struct stacks;

struct json_frame {
	uint64_t mono_ns;		/* CLOCK_MONOTONIC when the drain before it started */
	uint64_t tick;			/* live: engine_ticks() when read, telling one tick's
					 * model from the next; 0 in a recorded frame (its
					 * mono_ns tells it) */
	double wall;
	const char *mode;		/* engine_mode_name() */
	uint64_t interval_ms;		/* as printed: scaled by --max-cpu */
	struct engine_stats stats;
	size_t engine_bytes;
	size_t nprocs;			/* every process the engine holds, ready or not */
	struct proc **procs;		/* sorted by pid; only ready ones are written */
	size_t *proc_bytes;		/* model bytes of procs[i] */
	size_t n;
	char *extra_stats;		/* exact mode's and --stacks' members ("name": value, ...),
					 * as written (recordings keep the text), or NULL */
	struct stacks *stacks;		/* --stacks: first touches for "first_touch" (live
					 * only: the engine's, valid under its lock), or NULL */
	/* Exact mode's first touches since the previous frame (json_opts.touches; replay of
	 * a recording that has them): "recorded_touches". */
	bool has_touches;
	const struct first_touch *touches;
	size_t ntouches;
	uint64_t touches_dropped;
	/* The page cache members (out/json_files.h) as written, or NULL. */
	char *files_text;
};

#endif
