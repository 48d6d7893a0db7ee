/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One file's page cache through an fd: cachestat(2) counts (6.5+) and the page set
 * (mincore(2) on a fresh shared mapping: the cached pages, nothing faulted in; dirty and
 * writeback pages found by bisecting cachestat over the range).
 */
#ifndef MEVITOP_CACHESTAT_H
#define MEVITOP_CACHESTAT_H

#include <stdint.h>

struct cstat {
	uint64_t cached, dirty, writeback, evicted, recently_evicted;	/* pages */
};

/* [off, off + len) in bytes, len 0: to the end.  0, or -errno (-ENOSYS: no cachestat). */
int cachestat_read(int fd, uint64_t off, uint64_t len, struct cstat *out);

/* Page states of a run (cachestat_runs). */
enum cstat_state { CST_CACHED, CST_DIRTY, CST_WRITEBACK };

/*
 * Calls fn(start, end, state) for maximal runs of pages [start, end) of the first
 * `pages` pages of the file, in order: every cached page is in exactly one run, a dirty or
 * writeback one in a run of that state (writeback wins over dirty).  Pages cached is
 * from mincore, dirty/writeback from cachestat on halving ranges (cost: the cached pages'
 * bitmap plus log(pages) calls per dirty run).  0, or -errno (fn's non-zero return).
 */
typedef int (*cstat_run_fn)(void *ctx, uint64_t start, uint64_t end, enum cstat_state s);
int cachestat_runs(int fd, uint64_t pages, cstat_run_fn fn, void *ctx);

#endif
