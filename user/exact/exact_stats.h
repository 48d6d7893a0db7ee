/* SPDX-License-Identifier: GPL-2.0 */
/* Exact mode's counters and their JSON member, "stats.exact" (exact/exact.h says what each
 * means).  The engine only carries the text (engine_hooks.stats_json), so the JSON writer,
 * the recorder and the metrics below exact/ need not know this type. */
#ifndef MEVITOP_EXACT_STATS_H
#define MEVITOP_EXACT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "engine/engine.h"

/* Totals are as of the read; the interval's parts (touches_interval, log, unlisted) are
 * those of the interval that ended at the last tick. */
#define EXACT_HIST_BUCKETS	14	/* latency: < 1, 2, 4 ... 4096 us, more */
struct exact_stats {
	bool ordered;			/* the variant: ordered, else fast */
	uint64_t processes;		/* with a userfaultfd */
	uint64_t registered_pages;
	uint64_t touches, touches_interval, touches_dropped;
	uint64_t prereg_pages, prereg_max, stale, behind;
	uint64_t fork, remap, remove, unmap, gone;	/* events */
	uint64_t attaches, attach_ms_max;
	int server_threads, server_waiting;	/* started; waiting on the userfaultfds */
	uint64_t steered, parked;	/* servers woken by steering; parked (exact_server.c) */
	uint64_t reads, faults, resolved, raced, retried;	/* by the fault servers */
	uint64_t hist[EXACT_HIST_BUCKETS];	/* ordered: latency of each first touch */
	uint64_t lat_max_ns;
	const struct first_touch *log;	/* the interval's first touches, at most a few */
	size_t nlog;
	uint64_t unlisted;		/* the interval's first touches beyond the log */
};

/* x as the "exact": {...} member of "stats", malloc'ed; NULL if out of memory. */
char *exact_stats_json(const struct exact_stats *x);

#endif
