// SPDX-License-Identifier: GPL-2.0
/*
 * exact_fast.c - the fast variant's first touches: what a PAGEMAP_SCAN (or a pread of
 * pagemap) finds present that the previous picture of the process did not have.
 *
 * Everything here runs in the engine's thread with the engine lock held, called from the
 * hooks of exact_track.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "lib/clock.h"
#include "exact/exact_int.h"
#include "lib/log.h"
#include "kernel/pagemap.h"
#include "lib/page.h"

/* ---- first touches are what a scan finds that the previous one did not ---- */

struct cat_run {
	uint64_t start, end;
	uint32_t cats;
};

struct cat_runs {
	struct cat_run *v;
	size_t n, cap;
	bool lost;		/* a run did not fit: the picture is incomplete, not applied */
};

static void collect_cat(uint64_t start, uint64_t end, uint32_t cats, void *arg)
{
	struct cat_runs *r = arg;

	if (r->lost || array_reserve(r->v, r->n, r->cap, 64)) {
		r->lost = true;
		return;
	}
	r->v[r->n++] = (struct cat_run){ start, end, cats };
}

/* Pages [s, t) of p became present since the last scan: first touches. */
static void fast_touches(struct exact *x, struct proc *p, uint64_t s, uint64_t t, uint32_t cats,
			 uint64_t now)
{
	uint64_t pg;
	enum page_state st = (cats & PMC_PRESENT) ? PS_RESIDENT : PS_SWAPPED;

	x->eng.st.touches += t - s;
	x->eng.st.touches_interval += t - s;
	model_set_state(p, s, t, st);
	for (pg = s; pg < t && (x->eng.keep_all || x->eng.nlog < LOG_MAX); pg++)
		touchlog_add(x, p->pid, 0, pg << PAGE_SHIFT_4K, now, !(cats & PMC_ZERO));
	if (t - s > (uint64_t)(pg - s))
		x->eng.st.logged_dropped += t - pg;
	heat_add_range(&p->heat, s, t, now);
}

void fast_add_fresh(struct exact *x, struct xproc *xp, uint64_t s, uint64_t t)
{
	if (array_reserve(xp->fresh, xp->nfresh, xp->capfresh, 8)) {
		/* Without the range, a page the zap has not reached yet would be counted
		 * again: the picture is taken anew at the next refresh (not counted), and
		 * stats.exact.behind says exact mode fell behind. */
		xp->seeded = false;
		x->eng.st.behind++;
		return;
	}
	xp->fresh[xp->nfresh].start = s;
	xp->fresh[xp->nfresh].end = t;
	xp->nfresh++;
}

/* The first zapped range overlapping [s, t), or NULL. */
static const struct span *first_fresh(const struct xproc *xp, uint64_t s, uint64_t t)
{
	const struct span *best = NULL;
	size_t i;

	for (i = 0; i < xp->nfresh; i++)
		if (xp->fresh[i].start < t && s < xp->fresh[i].end &&
		    (!best || xp->fresh[i].start < best->start))
			best = &xp->fresh[i];
	return best;
}

/* Pages of run [s, t) absent from the last picture are first touches, except in ranges
 * zapped since it: the zap may still be in progress (its event comes first), so what is
 * there is counted at the next scan. */
static void diff_run(struct exact *x, struct xproc *xp, struct proc *p, uint64_t s, uint64_t t,
		     uint32_t cats, uint64_t now)
{
	uint64_t cur = s, end, rs, re;
	const struct span *z;

	while (cur < t) {
		z = first_fresh(xp, cur, t);
		end = z ? (z->start > cur ? z->start : cur) : t;
		while (cur < end) {
			if (!pageset_next_run(xp->seen, cur, end, &rs, &re)) {
				fast_touches(x, p, cur, end, cats, now);
				break;
			}
			if (rs > cur)
				fast_touches(x, p, cur, rs, cats, now);
			cur = re;
		}
		cur = z ? (z->end > end ? z->end : end) : t;
	}
}

/*
 * Spans less than CLUSTER_GAP apart are read with one PAGEMAP_SCAN (it skips holes and
 * reports present pages only): each call waits for the target's mmap lock, and a target
 * whose threads map and unmap flat out keeps a queue of writers on it (15-170 ms a call
 * measured with 16 such threads, and one registered stack per thread).  The pread
 * fallback reads every page of what it is given: span by span there.
 */
#define CLUSTER_GAP	(1ull << (30 - PAGE_SHIFT_4K))	/* 1 GiB, in pages */

/* One span of a cluster's runs (r, sorted; *from: the first run that may reach it). */
static void fast_apply_span(struct exact *x, struct xproc *xp, struct proc *p,
			    const struct span *sp, const struct cat_runs *r, size_t *from,
			    bool count, uint64_t now)
{
	size_t k;

	while (*from < r->n && r->v[*from].end <= sp->start)
		(*from)++;
	for (k = *from; count && k < r->n && r->v[k].start < sp->end; k++)
		diff_run(x, xp, p, r->v[k].start > sp->start ? r->v[k].start : sp->start,
			 r->v[k].end < sp->end ? r->v[k].end : sp->end, r->v[k].cats, now);
	pageset_remove_range(xp->seen, sp->start, sp->end);
	for (k = *from; k < r->n && r->v[k].start < sp->end; k++)
		pageset_add_range(xp->seen, r->v[k].start > sp->start ? r->v[k].start : sp->start,
				  r->v[k].end < sp->end ? r->v[k].end : sp->end);
	for (k = 0; k < xp->nfresh; k++)
		pageset_remove_range(xp->seen, xp->fresh[k].start, xp->fresh[k].end);
}

/* Scans spans (registered mappings, or young parts of them; sorted); with @count, what is
 * new since the last picture is first touches, else (seeding) what the process already had. */
static void fast_scan_spans(struct exact *x, struct xproc *xp, struct proc *p,
			    const struct span *v, size_t n, bool count)
{
	struct cat_runs r = { 0 };
	uint64_t now = clock_mono_ns();
	size_t i, j, k, from;
	int fd = mappings_pagemap_fd(xp);

	if (fd < 0 || (!xp->seen && !(xp->seen = pageset_new())))
		return;
	for (i = 0; i < n && !engine_quitting(); i = j) {
		for (j = i + 1; x->use_scan && j < n && v[j].start - v[j - 1].end <= CLUSTER_GAP; j++)
			;
		r.n = 0;
		r.lost = false;
		/* A run missing would read as a page gone, then as a first touch again at the
		 * next scan: an incomplete picture is not applied (the next scan retries). */
		if (pagemap_scan(fd, v[i].start, v[j - 1].end, x->use_scan, collect_cat, &r) ||
		    r.lost)
			continue;
		for (k = i, from = 0; k < j; k++)
			fast_apply_span(x, xp, p, &v[k], &r, &from, count, now);
	}
	free(r.v);
}

/* Every registered mapping: at each refresh, and to take the first picture. */
void fast_scan(struct exact *x, struct xproc *xp, struct proc *p, bool count)
{
	struct span *v;
	size_t n;

	if (mappings_collect(p, 0, ALL_PAGES, true, &v, &n))
		return;		/* the picture stays as it was: the next refresh retries */
	fast_scan_spans(x, xp, p, v, n, count);
	free(v);
	xp->nfresh = 0;
	xp->nyoung = 0;
	xp->seeded = true;
}

/*
 * Young mappings (registered from an mmap, brk or mremap less than YOUNG_NS ago) at every
 * drain: a buffer mapped, filled and unmapped between two refreshes (faultbench: 35 ms)
 * would otherwise never be seen.  Costs mevitop ~5 ns per present page per drain, for
 * YOUNG_NS only.
 */
#define YOUNG_NS	500000000ull
#define YOUNG_MAX	256	/* beyond: scanned at refreshes only (counted as behind) */

void fast_add_young(struct exact *x, struct xproc *xp, uint64_t s, uint64_t t)
{
	size_t i;

	for (i = 0; i < xp->nyoung; i++) {
		if (xp->young[i].start <= s && t <= xp->young[i].end) {
			xp->young[i].born_ns = clock_mono_ns();
			return;
		}
	}
	if (xp->nyoung >= YOUNG_MAX || array_reserve(xp->young, xp->nyoung, xp->capyoung, 8)) {
		x->eng.st.behind++;
		return;
	}
	xp->young[xp->nyoung].start = s;
	xp->young[xp->nyoung].end = t;
	xp->young[xp->nyoung].born_ns = clock_mono_ns();
	xp->nyoung++;
}

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The registered parts of every young mapping, scanned together (clusters: one call). */
void fast_scan_young(struct exact *x, struct xproc *xp, struct proc *p)
{
	uint64_t now = clock_mono_ns();
	struct span *v, *all = NULL;
	size_t i, keep = 0, n, nall = 0, capall = 0;
	bool lost = false;

	for (i = 0; i < xp->nyoung; i++) {
		if (now - xp->young[i].born_ns > YOUNG_NS)
			continue;
		xp->young[keep++] = xp->young[i];
		if (lost || mappings_collect(p, xp->young[i].start, xp->young[i].end, true, &v, &n)) {
			lost = true;
			continue;
		}
		if (n && array_reserve_n(all, nall + n, capall, 16))
			lost = true;
		else if (n)
			memcpy(all + nall, v, n * sizeof(*v));
		nall += lost ? 0 : n;
		free(v);
	}
	xp->nyoung = keep;
	if (lost) {
		free(all);	/* scanned at the next drain, or at the refresh */
		return;
	}
	if (nall)
		qsort(all, nall, sizeof(*all), span_cmp);
	for (i = 0, n = 0; i < nall; i++) {	/* young ranges may overlap: merge */
		if (n && all[i].start <= all[n - 1].end) {
			if (all[i].end > all[n - 1].end)
				all[n - 1].end = all[i].end;
		} else {
			all[n++] = all[i];
		}
	}
	fast_scan_spans(x, xp, p, all, n, true);
	free(all);
	xp->nfresh = 0;
}

