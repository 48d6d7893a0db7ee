/* SPDX-License-Identifier: GPL-2.0 */
/* Exact mode's options: what the command line (user/cli.c) hands to exact_setup. */
#ifndef MEVITOP_EXACT_OPTS_H
#define MEVITOP_EXACT_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Exact mode's two ways of seeing first touches (exact/exact.h explains the trade-off). */
enum exact_variant {
	EXACT_AUTO,			/* the default: fast */
	EXACT_FAST,			/* per interval, unordered, ~1x */
	EXACT_ORDERED,			/* every first touch in order, each served by mevitop */
};

/* Read only: exact_setup copies what it keeps and writes nothing back. */
struct exact_opts {
	enum exact_variant variant;	/* --exact=HOW */
	uint64_t attach_timeout_ms;	/* --attach-timeout: longest a target may be held stopped */
	char **run_argv;		/* `mevitop run -- CMD`, else NULL */
	const pid_t *pids;		/* -p's processes (not for run) */
	size_t npids;
	bool no_children;		/* --no-children */
	bool json;			/* run --json: one last snapshot when CMD finished */
	bool record;			/* recording: the recorder takes every first touch */
	uint64_t interval_ms;		/* for that last snapshot */
};

#endif
