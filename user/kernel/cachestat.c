// SPDX-License-Identifier: GPL-2.0
/* cachestat(2) and the page set of one file (cachestat.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "kernel/cachestat.h"

#ifndef __NR_cachestat
#define __NR_cachestat 451	/* x86_64, and every architecture's generic table */
#endif

struct cachestat_range_ {
	uint64_t off, len;
};

struct cachestat_ {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

int cachestat_read(int fd, uint64_t off, uint64_t len, struct cstat *out)
{
	struct cachestat_range_ r = { off, len };
	struct cachestat_ cs;

	if (syscall(__NR_cachestat, fd, &r, &cs, 0))
		return -errno;
	out->cached = cs.nr_cache;
	out->dirty = cs.nr_dirty;
	out->writeback = cs.nr_writeback;
	out->evicted = cs.nr_evicted;
	out->recently_evicted = cs.nr_recently_evicted;
	return 0;
}

#define PG 4096ULL
#define CHUNK_PAGES (1ULL << 18)	/* 1 GiB of file per mapping: 256 KiB of vector */

/* Marks pages of [start, end) that are dirty (want == CST_DIRTY) or under writeback in
 * st[] (indexes relative to base), halving only ranges that hold some. */
static int bisect(int fd, uint64_t base, uint64_t start, uint64_t end, unsigned char *st,
		  uint64_t known)
{
	struct cstat c;
	int err;

	if (known == UINT64_MAX) {
		err = cachestat_read(fd, start * PG, (end - start) * PG, &c);
		if (err)
			return err;
		known = c.dirty + c.writeback;
	}
	if (!known)
		return 0;
	if (end - start == 1) {
		err = cachestat_read(fd, start * PG, PG, &c);
		if (err)
			return err;
		/* Each mark is kept apart so a page both dirty and under writeback (rewritten
		 * while being written) counts as writeback. */
		st[start - base] = c.writeback ? 3 : c.dirty ? 2 : st[start - base];
		return 0;
	}
	{
		uint64_t mid = start + (end - start) / 2;

		err = bisect(fd, base, start, mid, st, UINT64_MAX);
		if (!err)
			err = bisect(fd, base, mid, end, st, UINT64_MAX);
	}
	return err;
}

int cachestat_runs(int fd, uint64_t pages, cstat_run_fn fn, void *ctx)
{
	unsigned char *vec = NULL;
	uint64_t base;
	int err = 0;
	/* An open run carried across chunks. */
	uint64_t rs = 0;
	int rstate = 0;

	for (base = 0; base < pages && !err; base += CHUNK_PAGES) {
		uint64_t n = pages - base < CHUNK_PAGES ? pages - base : CHUNK_PAGES, i;
		void *m;

		if (!vec && !(vec = malloc(CHUNK_PAGES)))
			return -ENOMEM;
		/* PROT_READ, MAP_SHARED and never touched: mincore reads the page cache of the
		 * range, not page tables (nothing is faulted in). */
		m = mmap(NULL, n * PG, PROT_READ, MAP_SHARED, fd, base * PG);
		if (m == MAP_FAILED) {
			err = -errno;
			break;
		}
		if (mincore(m, n * PG, vec))
			err = -errno;
		munmap(m, n * PG);
		if (err)
			break;
		for (i = 0; i < n; i++)
			vec[i] &= 1;
		err = bisect(fd, base, base, base + n, vec, UINT64_MAX);
		for (i = 0; i < n && !err; i++) {
			int s = vec[i];	/* 0 not cached, 1 cached, 2 dirty, 3 writeback */

			if (s == rstate)
				continue;
			if (rstate)
				err = fn(ctx, rs, base + i, (enum cstat_state)(rstate - 1));
			rs = base + i;
			rstate = s;
		}
	}
	if (!err && rstate)
		err = fn(ctx, rs, pages, (enum cstat_state)(rstate - 1));
	free(vec);
	return err;
}
