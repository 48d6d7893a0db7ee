/* SPDX-License-Identifier: GPL-2.0 */
/* NDJSON snapshots of the model: one line per interval (the format is in doc/json.md). */
#ifndef MEVITOP_JSON_H
#define MEVITOP_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include "engine/engine.h"
#include "engine/frame.h"

struct json_opts {
	bool maps;		/* include mappings and runs */
	bool touches;		/* a recorder: take exact mode's first touches into the frame */
	uint64_t interval_ms;
	bool whole_system;	/* "memory", and "files" beyond the watched ones */
	uint32_t files_top;	/* --files-top (0: all) */
};

/* Fills f from the engine (caller holds the engine lock; f->procs are the engine's). */
int json_frame_from_engine(struct json_frame *f, struct engine *e, const struct json_opts *o,
			   uint64_t mono_ns, double wall);
/* Frees what json_frame_from_engine allocated (not the procs). */
void json_frame_release(struct json_frame *f);
int json_frame_write(FILE *out, const struct json_frame *f, const struct json_opts *o);

/* One first touch: [pid, tid, "0xADDRESS", "r"|"w", monotonic seconds] (", " first if
 * comma): in "recorded_touches" and exact mode's "first_touches". */
struct buf;
void json_put_touch(struct buf *b, const struct first_touch *t, bool comma);

/* Writes one snapshot line; `mono_ns`/`wall` are when the drain before it started, so every
 * event that happened before that moment is in it.  Caller holds the engine lock. */
int json_snapshot(FILE *out, struct engine *e, const struct json_opts *o, uint64_t mono_ns,
		  double wall);

#endif
