// SPDX-License-Identifier: GPL-2.0
/*
 * The largest rows by cached pages between ticks (files.h, struct ftop), the watched rows
 * and the totals, for the refresh, the JSON writer and the metrics: each costs what changed
 * since it last ran, not a pass over a table of 100,000 files.
 *
 * The candidates v are rebuilt by one pass over the table (fcache_top_cached) only when the
 * rows of v known to be in place (those sorting up to bound) are fewer than asked for: when
 * the largest files shrink below what was left out (drop_caches, a big file evicted).
 */
#include <stdlib.h>
#include "lib/array.h"
#include "engine/files.h"

#define TOP_MIN 64	/* candidates kept at least: the JSON's and a refresh's top fit */

/* fcache_sorted(FC_SORT_CACHED)'s order: true when f sorts before (cached, dev, ino). */
static bool sorts_before(const struct fc_file *f, uint64_t cached, uint64_t dev, uint64_t ino)
{
	if (f->pages.cached != cached)
		return f->pages.cached > cached;
	if (f->dev != dev)
		return f->dev < dev;
	return f->ino < ino;
}

static int cmp_order(const void *a, const void *b)
{
	const struct fc_file *x = *(struct fc_file *const *)a, *y = *(struct fc_file *const *)b;

	if (x == y)
		return 0;
	return sorts_before(x, y->pages.cached, y->dev, y->ino) ? -1 : 1;
}

/* f is one of the table's first rows: nothing left out of v sorts before it. */
static bool in_place(const struct ftop *t, const struct fc_file *f)
{
	if (t->complete || f->pages.cached != t->bound.cached)
		return t->complete || f->pages.cached > t->bound.cached;
	if (f->dev != t->bound.dev)
		return f->dev < t->bound.dev;
	return f->ino <= t->bound.ino;
}

static void set_bound(struct ftop *t, const struct fc_file *f)
{
	t->bound.cached = f->pages.cached;
	t->bound.dev = f->dev;
	t->bound.ino = f->ino;
}

static void build(struct files *fs, size_t size)
{
	struct ftop *t = &fs->largest;
	size_t i;

	for (i = 0; i < t->n; i++)
		t->v[i]->flags &= ~FF_TOP;
	t->n = 0;
	if (array_reserve_n(t->v, size, t->cap, TOP_MIN)) {
		t->built = false;	/* no memory: asked again next time */
		return;
	}
	t->n = fcache_top_cached(fs->fc, t->v, size);
	for (i = 0; i < t->n; i++)
		t->v[i]->flags |= FF_TOP;
	t->size = size;
	t->complete = t->n < size;
	if (!t->complete)
		set_bound(t, t->v[t->n - 1]);
	t->built = t->sorted = true;
	t->builds++;
}

/* v back to size rows, sorted: what is dropped sorts after the last kept, so the bound moves
 * to whichever of the two sorts first. */
static void trim(struct ftop *t)
{
	const struct fc_file *last;
	size_t i;

	qsort(t->v, t->n, sizeof(*t->v), cmp_order);
	t->sorted = true;
	for (i = t->size; i < t->n; i++)
		t->v[i]->flags &= ~FF_TOP;
	t->n = t->size;
	last = t->v[t->n - 1];
	if (t->complete || sorts_before(last, t->bound.cached, t->bound.dev, t->bound.ino))
		set_bound(t, last);
	t->complete = false;
}

void files_top_consider(struct files *fs, struct fc_file *f)
{
	struct ftop *t = &fs->largest;

	if (!t->built)
		return;		/* the first ask builds */
	if (f->flags & FF_TOP) {
		t->sorted = false;
		return;
	}
	if (t->complete || sorts_before(f, t->bound.cached, t->bound.dev, t->bound.ino)) {
		if (array_reserve(t->v, t->n, t->cap, TOP_MIN)) {
			t->built = false;	/* cannot keep the invariant: build again */
			return;
		}
		t->v[t->n++] = f;
		f->flags |= FF_TOP;
		t->sorted = false;
		if (t->n >= 2 * t->size)
			trim(t);
	}
}

void files_top_drop(struct files *fs, struct fc_file *f)
{
	struct ftop *t = &fs->largest;

	if (!(f->flags & FF_TOP))
		return;
	f->flags &= ~FF_TOP;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i] == f) {
			t->v[i] = t->v[--t->n];
			t->sorted = false;
			return;
		}
}

size_t files_top_get(struct files *fs, struct fc_file **out, size_t k)
{
	struct ftop *t = &fs->largest;
	size_t i, n;

	if (!k)
		return 0;
	if (!t->built || 2 * k > t->size)
		build(fs, 2 * k > TOP_MIN ? 2 * k : TOP_MIN);
	if (t->built && !t->sorted) {
		qsort(t->v, t->n, sizeof(*t->v), cmp_order);
		t->sorted = true;
	}
	for (n = 0; t->built && n < t->n && n < k && in_place(t, t->v[n]); n++)
		;
	if (n < k && !t->complete) {
		/* Fewer in place than asked: some of v shrank below rows left out, or left. */
		build(fs, t->size > 2 * k ? t->size : 2 * k > TOP_MIN ? 2 * k : TOP_MIN);
		n = t->n < k ? t->n : k;
	}
	if (!t->built)
		return fcache_top_cached(fs->fc, out, k);	/* no memory for v */
	for (i = 0; i < n; i++)
		out[i] = t->v[i];
	return n;
}

void files_top_free(struct files *fs)
{
	free(fs->largest.v);
	fs->largest = (struct ftop){ 0 };
}

size_t engine_files_top(struct engine *e, struct fc_file **out, size_t k)
{
	return e->files ? files_top_get(e->files, out, k) : 0;
}

void engine_files_totals(struct engine *e, struct fc_totals *out)
{
	if (e->files)
		*out = e->files->tot;
	else
		*out = (struct fc_totals){ 0 };
}

struct watched_ctx {
	int (*fn)(struct fc_file *f, void *arg);
	void *arg;
	int r;
};

static void each_wanted(struct fc_file *f, void *arg)
{
	struct watched_ctx *c = arg;

	if (!c->r && !f->watch_path)	/* --file's were visited already */
		c->r = c->fn(f, c->arg);
}

int engine_files_each_watched(struct engine *e, int (*fn)(struct fc_file *f, void *arg),
			      void *arg)
{
	struct files *fs = e->files;
	struct watched_ctx c = { fn, arg, 0 };
	size_t i;

	if (!fs)
		return 0;
	for (i = 0; i < fs->watched.n && !c.r; i++) {
		struct fc_file *f = fcache_find(fs->fc, fs->watched.v[i].dev, fs->watched.v[i].ino);

		if (f && f->watched)
			c.r = fn(f, arg);
	}
	if (!c.r)
		fcache_each_wanted(fs->fc, each_wanted, &c);
	return c.r;
}
