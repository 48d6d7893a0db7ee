// SPDX-License-Identifier: GPL-2.0
/* The page cache table: rows by (dev, ino) in an open-addressing hash, sorted walks (fcache.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include "lib/array.h"
#include "model/fcache.h"

struct fcache {
	struct fc_file **slots;		/* NULL: empty; TOMB: deleted */
	size_t cap, used, tombs;	/* cap is a power of two */
	struct fc_file **sorted;
	size_t sorted_cap, nsorted;
	enum fc_sort sorted_key;
	bool sorted_valid;
	uint64_t gen;
	/* The rows a view asked pages for (fcache_want_pages): a heatmap or two at once. */
	struct { uint64_t dev, ino; } wanted[FC_WANTED_MAX];
	size_t nwanted;
};

/* A row owns its strings; the table's struct keeps them writable. */
struct fc_row {
	struct fc_file f;
	char *name, *why, *memcg;
	pid_t *pids;
};

static struct fc_file tomb_;
#define TOMB (&tomb_)

static uint64_t hash(uint64_t dev, uint64_t ino)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15ULL ^ (dev + 0x632be59bd9b4e019ULL);

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

struct fcache *fcache_new(void)
{
	return calloc(1, sizeof(struct fcache));
}

static void row_free(struct fc_file *f)
{
	struct fc_row *r = (struct fc_row *)f;

	pageset_free(f->cached_set);
	pageset_free(f->dirty_set);
	pageset_free(f->writeback_set);
	free(r->name);
	free(r->why);
	free(r->memcg);
	free(r->pids);
	free(r);
}

void fcache_free(struct fcache *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->cap; i++)
		if (t->slots[i] && t->slots[i] != TOMB)
			row_free(t->slots[i]);
	free(t->slots);
	free(t->sorted);
	free(t);
}

size_t fcache_count(const struct fcache *t)
{
	return t ? t->used : 0;
}

static size_t slot_of(const struct fcache *t, uint64_t dev, uint64_t ino)
{
	size_t m = t->cap - 1, i = hash(dev, ino) & m;

	while (t->slots[i]) {
		struct fc_file *f = t->slots[i];

		if (f != TOMB && f->dev == dev && f->ino == ino)
			return i;
		i = (i + 1) & m;
	}
	return SIZE_MAX;
}

struct fc_file *fcache_find(const struct fcache *t, uint64_t dev, uint64_t ino)
{
	size_t i;

	if (!t || !t->cap)
		return NULL;
	i = slot_of(t, dev, ino);
	return i == SIZE_MAX ? NULL : t->slots[i];
}

static int grow(struct fcache *t)
{
	size_t cap = t->cap ? t->cap : 64, i;
	struct fc_file **old = t->slots, **nv;

	while ((t->used + 1) * 2 > cap)
		cap *= 2;
	nv = calloc(cap, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		struct fc_file *f = old[i];
		size_t j;

		if (!f || f == TOMB)
			continue;
		for (j = hash(f->dev, f->ino) & (cap - 1); nv[j]; j = (j + 1) & (cap - 1))
			;
		nv[j] = f;
	}
	free(old);
	t->slots = nv;
	t->cap = cap;
	t->tombs = 0;
	return 0;
}

struct fc_file *fcache_get(struct fcache *t, uint64_t dev, uint64_t ino)
{
	struct fc_file *f = fcache_find(t, dev, ino);
	struct fc_row *r;
	size_t j;

	if (f)
		return f;
	if ((t->used + t->tombs + 1) * 4 > t->cap * 3 && grow(t))
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->f.dev = dev;
	r->f.ino = ino;
	r->f.fd = -1;
	if (fcache_file_set_name(&r->f, NULL, FC_NAME_NONE, NULL)) {
		free(r);
		return NULL;
	}
	for (j = hash(dev, ino) & (t->cap - 1); t->slots[j] && t->slots[j] != TOMB;
	     j = (j + 1) & (t->cap - 1))
		;
	if (t->slots[j] == TOMB)
		t->tombs--;
	t->slots[j] = &r->f;
	t->used++;
	t->sorted_valid = false;
	return &r->f;
}

static int set_str(char **dst, const char *s)
{
	char *c = s ? strdup(s) : NULL;

	if (s && !c)
		return -ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

int fcache_file_set_name(struct fc_file *f, const char *name, enum fc_name_src src, const char *why)
{
	struct fc_row *r = (struct fc_row *)f;
	char buf[48];

	if (!name) {
		snprintf(buf, sizeof(buf), "%u:%u:%" PRIu64, major(f->dev), minor(f->dev),
			 f->ino);
		name = buf;
		src = FC_NAME_NONE;
	}
	if ((!r->name || strcmp(r->name, name)) && set_str(&r->name, name))
		return -ENOMEM;
	if (set_str(&r->why, src == FC_NAME_NONE ? (why ? why : "no name found") : why))
		return -ENOMEM;
	f->name = r->name;
	f->why = r->why;
	f->name_src = src;
	return 0;
}

int fcache_file_set_memcg(struct fc_file *f, const char *memcg)
{
	struct fc_row *r = (struct fc_row *)f;

	if (set_str(&r->memcg, memcg))
		return -ENOMEM;
	f->memcg = r->memcg;
	return 0;
}

int fcache_file_set_mapped_by(struct fc_file *f, const pid_t *pids, size_t n)
{
	struct fc_row *r = (struct fc_row *)f;
	pid_t *v = NULL;

	if (n) {
		v = malloc(n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memcpy(v, pids, n * sizeof(*v));
	}
	free(r->pids);
	r->pids = v;
	f->mapped_by = v;
	f->nmapped_by = n;
	return 0;
}

void fcache_remove(struct fcache *t, struct fc_file *f)
{
	size_t i = slot_of(t, f->dev, f->ino);

	if (i == SIZE_MAX)
		return;
	t->slots[i] = TOMB;
	t->tombs++;
	t->used--;
	t->sorted_valid = false;
	row_free(f);
}

size_t fcache_sweep(struct fcache *t, uint64_t gen)
{
	size_t i, n = 0;

	for (i = 0; t && i < t->cap; i++) {
		struct fc_file *f = t->slots[i];

		if (!f || f == TOMB || f->seen_gen == gen || f->watched)
			continue;
		t->slots[i] = TOMB;
		t->tombs++;
		t->used--;
		row_free(f);
		n++;
	}
	if (n)
		t->sorted_valid = false;
	return n;
}

void fcache_bump(struct fcache *t)
{
	t->gen++;
	t->sorted_valid = false;
}

uint64_t fcache_generation(const struct fcache *t)
{
	return t ? t->gen : 0;
}

void fcache_each_wanted(struct fcache *t, void (*fn)(struct fc_file *f, void *arg), void *arg)
{
	for (size_t i = 0; i < t->nwanted; i++) {
		struct fc_file *f = fcache_find(t, t->wanted[i].dev, t->wanted[i].ino);

		if (f && f->watched)
			fn(f, arg);
	}
}

int fcache_each(struct fcache *t, int (*fn)(struct fc_file *f, void *arg), void *arg)
{
	size_t i;
	int r;

	for (i = 0; t && i < t->cap; i++) {
		struct fc_file *f = t->slots[i];

		if (f && f != TOMB && (r = fn(f, arg)))
			return r;
	}
	return 0;
}

static uint64_t key_u64(const struct fc_file *f, enum fc_sort k)
{
	switch (k) {
	case FC_SORT_DIRTY:
		return f->pages.dirty;
	case FC_SORT_WRITEBACK:
		return f->pages.writeback;
	case FC_SORT_EVICTED:
		return f->pages.evicted;
	case FC_SORT_SIZE:
		return f->size;
	default:
		return f->pages.cached;
	}
}

static enum fc_sort sort_key_;	/* qsort has no context argument */

static int cmp(const void *a, const void *b)
{
	const struct fc_file *x = *(struct fc_file *const *)a, *y = *(struct fc_file *const *)b;
	int c = 0;

	if (sort_key_ == FC_SORT_NAME) {
		c = strcmp(x->name, y->name);
	} else if (sort_key_ == FC_SORT_ADDS || sort_key_ == FC_SORT_EVICTIONS) {
		double u = sort_key_ == FC_SORT_ADDS ? x->adds_per_sec : x->evictions_per_sec;
		double v = sort_key_ == FC_SORT_ADDS ? y->adds_per_sec : y->evictions_per_sec;

		c = u < v ? 1 : u > v ? -1 : 0;
	} else {
		uint64_t u = key_u64(x, sort_key_), v = key_u64(y, sort_key_);

		c = u < v ? 1 : u > v ? -1 : 0;
	}
	if (!c)
		c = x->dev < y->dev ? -1 : x->dev > y->dev ? 1 : 0;
	if (!c)
		c = x->ino < y->ino ? -1 : x->ino > y->ino ? 1 : 0;
	return c;
}

struct fc_file **fcache_sorted(struct fcache *t, enum fc_sort key, size_t *n)
{
	size_t i, k = 0;

	*n = 0;
	if (!t || !t->used)
		return NULL;
	if (t->sorted_valid && t->sorted_key == key) {
		*n = t->nsorted;
		return t->sorted;
	}
	if (array_reserve_n(t->sorted, t->used, t->sorted_cap, 64))
		return NULL;
	for (i = 0; i < t->cap; i++)
		if (t->slots[i] && t->slots[i] != TOMB)
			t->sorted[k++] = t->slots[i];
	sort_key_ = key;
	qsort(t->sorted, k, sizeof(*t->sorted), cmp);
	t->nsorted = k;
	t->sorted_key = key;
	t->sorted_valid = true;
	*n = k;
	return t->sorted;
}

/* Heap order: the smallest (last in sorted order) at the root. */
static bool before(const struct fc_file *x, const struct fc_file *y)
{
	sort_key_ = FC_SORT_CACHED;
	return cmp(&x, &y) < 0;
}

static void sift_down(struct fc_file **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct fc_file *tmp;

		if (l < n && before(h[m], h[l]))
			m = l;
		if (r < n && before(h[m], h[r]))
			m = r;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

size_t fcache_top_cached(const struct fcache *t, struct fc_file **out, size_t k)
{
	size_t i, n = 0;

	for (i = 0; t && k && i < t->cap; i++) {
		struct fc_file *f = t->slots[i];

		if (!f || f == TOMB)
			continue;
		if (n < k) {
			out[n++] = f;
			if (n == k)
				for (size_t j = k / 2 + 1; j-- > 0;)
					sift_down(out, n, j);
		} else if (before(f, out[0])) {
			out[0] = f;
			sift_down(out, n, 0);
		}
	}
	sort_key_ = FC_SORT_CACHED;
	qsort(out, n, sizeof(*out), cmp);
	return n;
}

void fcache_totals(const struct fcache *t, struct fc_totals *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; t && i < t->cap; i++) {
		const struct fc_file *f = t->slots[i];

		if (!f || f == TOMB)
			continue;
		out->files++;
		out->pages.cached += f->pages.cached;
		out->pages.dirty += f->pages.dirty;
		out->pages.writeback += f->pages.writeback;
		out->pages.evicted += f->pages.evicted;
		out->pages.recently_evicted += f->pages.recently_evicted;
		if (f->kind < FC_KIND_COUNT)
			out->by_kind[f->kind] += f->pages.cached;
	}
}

const char *fcache_kind_name(enum fc_kind k)
{
	static const char *const names[FC_KIND_COUNT] = {
		[FC_REGULAR] = "regular", [FC_TMPFS] = "tmpfs", [FC_MEMFD] = "memfd",
		[FC_DELETED] = "deleted", [FC_SYSV] = "sysv", [FC_BLOCK] = "block",
		[FC_OTHER] = "other", [FC_ANON_SHMEM] = "anon_shmem",
	};

	return k < FC_KIND_COUNT ? names[k] : "other";
}

int fcache_want_pages(struct fcache *t, uint64_t dev, uint64_t ino, bool on)
{
	struct fc_file *f = fcache_find(t, dev, ino);

	if (!f)
		return -ENOENT;
	f->watched = on;
	for (size_t i = 0; i < t->nwanted; i++)
		if (t->wanted[i].dev == dev && t->wanted[i].ino == ino) {
			t->wanted[i] = t->wanted[--t->nwanted];
			break;
		}
	if (on) {
		/* The oldest ask gives way: its view has moved on to another file. */
		if (t->nwanted == FC_WANTED_MAX)
			memmove(&t->wanted[0], &t->wanted[1], --t->nwanted * sizeof(t->wanted[0]));
		t->wanted[t->nwanted].dev = dev;
		t->wanted[t->nwanted++].ino = ino;
	}
	if (!on) {
		pageset_free(f->cached_set);
		pageset_free(f->dirty_set);
		pageset_free(f->writeback_set);
		f->cached_set = f->dirty_set = f->writeback_set = NULL;
	}
	return 0;
}

size_t fcache_bytes(const struct fcache *t)
{
	size_t i, b;

	if (!t)
		return 0;
	b = sizeof(*t) + t->cap * sizeof(*t->slots) + t->sorted_cap * sizeof(*t->sorted);
	for (i = 0; i < t->cap; i++) {
		const struct fc_file *f = t->slots[i];

		if (!f || f == TOMB)
			continue;
		b += sizeof(struct fc_row) + strlen(f->name) + 1 + f->nmapped_by * sizeof(pid_t);
		b += f->cached_set ? pageset_bytes(f->cached_set) : 0;
		b += f->dirty_set ? pageset_bytes(f->dirty_set) : 0;
		b += f->writeback_set ? pageset_bytes(f->writeback_set) : 0;
	}
	return b;
}
