// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "model/share.h"

struct share *share_new(void)
{
	struct share *s = calloc(1, sizeof(*s));
	int i;

	if (!s)
		return NULL;
	for (i = SHC_TWO; i < SHC_COUNT; i++)
		if (!(s->cls[i] = pageset_new())) {
			share_free(s);
			return NULL;
		}
	return s;
}

void share_free(struct share *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < SHC_COUNT; i++)
		pageset_free(s->cls[i]);
	free(s->spans);
	free(s->counts);
	free(s);
}

struct share *share_clone(const struct share *s)
{
	struct share *c;
	int i;

	if (!s || !(c = calloc(1, sizeof(*c))))
		return NULL;
	c->at_ns = s->at_ns;
	c->pages_read = s->pages_read;
	c->thp = s->thp;
	c->thp_known = s->thp_known;
	if (s->n && !(c->spans = malloc(s->n * sizeof(*c->spans)))) {
		free(c);
		return NULL;
	}
	if (s->n)
		memcpy(c->spans, s->spans, s->n * sizeof(*c->spans));
	c->n = c->cap = s->n;
	if (s->ncounts && !(c->counts = malloc(s->ncounts * sizeof(*c->counts)))) {
		share_free(c);
		return NULL;
	}
	if (s->ncounts)
		memcpy(c->counts, s->counts, s->ncounts * sizeof(*c->counts));
	c->ncounts = c->capcounts = s->ncounts;
	for (i = SHC_TWO; i < SHC_COUNT; i++)
		if (!(c->cls[i] = pageset_clone(s->cls[i]))) {
			share_free(c);
			return NULL;
		}
	return c;
}

struct share_span *share_add_span(struct share *s, uint64_t start, uint64_t end)
{
	struct share_span *sp;

	if (array_reserve(s->spans, s->n, s->cap, 16))
		return NULL;
	sp = &s->spans[s->n++];
	memset(sp, 0, sizeof(*sp));
	sp->start = start;
	sp->end = end;
	return sp;
}

int share_mark(struct share *s, uint64_t page, uint64_t mapcount)
{
	enum share_class c = share_class_of(mapcount);

	if (c == SHC_PRIVATE)
		return 0;
	pageset_add(s->cls[c], page);
	if (c == SHC_TWO)
		return 0;
	if (array_reserve(s->counts, s->ncounts, s->capcounts, 256))
		return -ENOMEM;
	s->counts[s->ncounts++] = page << SHARE_COUNT_BITS |
				  (mapcount < SHARE_COUNT_MAX ? mapcount : SHARE_COUNT_MAX);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void share_finish(struct share *s)
{
	qsort(s->counts, s->ncounts, sizeof(*s->counts), cmp_u64);
}

uint64_t share_page_count(const struct share *s, uint64_t page)
{
	size_t lo = 0, hi;
	enum share_class c = share_page_class(s, page);

	if (c == SHC_PRIVATE || c == SHC_TWO)
		return c == SHC_TWO ? 2 : 1;
	for (hi = s->ncounts; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->counts[mid] >> SHARE_COUNT_BITS < page)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->ncounts && s->counts[lo] >> SHARE_COUNT_BITS == page)
		return s->counts[lo] & SHARE_COUNT_MAX;
	return 0;
}

size_t share_bytes(const struct share *s)
{
	size_t b;
	int i;

	if (!s)
		return 0;
	b = sizeof(*s) + s->cap * sizeof(*s->spans) + s->capcounts * sizeof(*s->counts);
	for (i = SHC_TWO; i < SHC_COUNT; i++)
		b += pageset_bytes(s->cls[i]);
	return b;
}

enum share_class share_page_class(const struct share *s, uint64_t page)
{
	int i;

	if (s)
		for (i = SHC_TWO; i < SHC_COUNT; i++)
			if (pageset_contains(s->cls[i], page))
				return i;
	return SHC_PRIVATE;
}
