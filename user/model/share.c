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
	if (s->n && !(c->spans = malloc(s->n * sizeof(*c->spans)))) {
		free(c);
		return NULL;
	}
	if (s->n)
		memcpy(c->spans, s->spans, s->n * sizeof(*c->spans));
	c->n = c->cap = s->n;
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

void share_mark(struct share *s, uint64_t page, uint64_t mapcount)
{
	enum share_class c = share_class_of(mapcount);

	if (c != SHC_PRIVATE)
		pageset_add(s->cls[c], page);
}

size_t share_bytes(const struct share *s)
{
	size_t b;
	int i;

	if (!s)
		return 0;
	b = sizeof(*s) + s->cap * sizeof(*s->spans);
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
