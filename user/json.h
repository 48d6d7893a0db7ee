/* SPDX-License-Identifier: GPL-2.0 */
/* NDJSON snapshots of the model: one line per interval (the format is in README.md). */
#ifndef MEVITOP_JSON_H
#define MEVITOP_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include "engine.h"

struct json_opts {
	bool maps;		/* include mappings and runs */
	uint64_t interval_ms;
};

/* Writes one snapshot line; `mono_ns`/`wall` are when the drain before it started, so every
 * event that happened before that moment is in it.  Caller holds the engine lock. */
int json_snapshot(FILE *out, struct engine *e, const struct json_opts *o, uint64_t mono_ns,
		  double wall);

#endif
