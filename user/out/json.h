/* SPDX-License-Identifier: GPL-2.0 */
/* NDJSON snapshots of the model: one line per interval (the format is in README.md). */
#ifndef MEVITOP_JSON_H
#define MEVITOP_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include "engine/engine.h"

struct json_opts {
	bool maps;		/* include mappings and runs */
	bool touches;		/* a recorder: take exact mode's first touches into the frame */
	uint64_t interval_ms;
	bool whole_system;	/* "memory", and "files" beyond the watched ones */
	uint32_t files_top;	/* --files-top (0: all) */
};

/*
 * One snapshot as the writer sees it: what live mode reads from the engine, and what a
 * recording stores and replay rebuilds (user/rec/), so both print the same lines.
 */
struct stacks;

struct json_frame {
	uint64_t mono_ns;		/* CLOCK_MONOTONIC when the drain before it started */
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

/* Fills f from the engine (caller holds the engine lock; f->procs are the engine's). */
int json_frame_from_engine(struct json_frame *f, struct engine *e, const struct json_opts *o,
			   uint64_t mono_ns, double wall);
/* Frees what json_frame_from_engine allocated (not the procs). */
void json_frame_release(struct json_frame *f);
int json_frame_write(FILE *out, const struct json_frame *f, const struct json_opts *o);

/* Writes one snapshot line; `mono_ns`/`wall` are when the drain before it started, so every
 * event that happened before that moment is in it.  Caller holds the engine lock. */
int json_snapshot(FILE *out, struct engine *e, const struct json_opts *o, uint64_t mono_ns,
		  double wall);

#endif
