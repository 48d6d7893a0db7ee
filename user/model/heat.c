// SPDX-License-Identifier: GPL-2.0
/* Heat: recent fault activity per block of pages, decaying (model.h says what each gives). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model/model.h"


static float decay(float v, uint64_t from_ns, uint64_t to_ns)
{
	if (to_ns <= from_ns)
		return v;
	return v * exp2f(-(float)(to_ns - from_ns) / (float)HEAT_HALF_LIFE_NS);
}

/* The heat's own table, not lib/hashtab.h: values inline (a float and a time per 2 MiB key)
 * on a path taken per fault in trace mode, where an index into a separate array would cost a
 * second cache miss and an indirect call per probe. */
static struct heat_entry *heat_slot(const struct heat *h, uint64_t key)
{
	uint32_t i, mask = h->cap - 1;

	if (!h->cap)
		return NULL;
	for (i = (uint32_t)(key * 0x9E3779B97F4A7C15ULL >> 32) & mask;; i = (i + 1) & mask)
		if (h->slots[i].block == key || h->slots[i].block == 0)
			return &h->slots[i];
}

static int heat_grow(struct heat *h)
{
	struct heat old = *h;
	uint32_t i;

	h->cap = old.cap ? old.cap * 2 : 64;
	h->slots = calloc(h->cap, sizeof(*h->slots));
	h->used = 0;
	if (!h->slots) {
		*h = old;
		return -ENOMEM;
	}
	for (i = 0; i < old.cap; i++) {
		if (old.slots[i].block) {
			*heat_slot(h, old.slots[i].block) = old.slots[i];
			h->used++;
		}
	}
	free(old.slots);
	return 0;
}

void heat_add(struct heat *h, uint64_t page, float amount, uint64_t now_ns)
{
	uint64_t key = (page >> HEAT_BLOCK_SHIFT) + 1;
	struct heat_entry *e;

	if ((h->used + 1) * 10 > h->cap * 7 && heat_grow(h))
		return;
	e = heat_slot(h, key);
	if (!e->block) {
		e->block = key;
		e->value = 0;
		e->stamp_ns = now_ns;
		h->used++;
	}
	e->value = decay(e->value, e->stamp_ns, now_ns) + amount;
	e->stamp_ns = now_ns;
	h->gen++;
}

void heat_add_range(struct heat *h, uint64_t s, uint64_t e, uint64_t now_ns)
{
	while (s < e) {
		uint64_t b = ((s >> HEAT_BLOCK_SHIFT) + 1) << HEAT_BLOCK_SHIFT, t = b < e ? b : e;

		heat_add(h, s, (float)(t - s), now_ns);
		s = t;
	}
}

/* One walk over a's runs, b's inside each. */
void heat_add_diff(struct heat *h, const struct pageset *a, const struct pageset *b,
		   uint64_t now_ns)
{
	uint64_t from = 0, rs, re, bs, be;

	while (pageset_next_run(a, from, UINT64_MAX, &rs, &re)) {
		uint64_t at = rs;

		while (pageset_next_run(b, at, re, &bs, &be)) {
			heat_add_range(h, at, bs, now_ns);
			at = be;
		}
		heat_add_range(h, at, re, now_ns);
		from = re;
	}
}

float heat_range(const struct heat *h, uint64_t start, uint64_t end, uint64_t now_ns)
{
	uint64_t b0 = start >> HEAT_BLOCK_SHIFT, b1 = (end - 1) >> HEAT_BLOCK_SHIFT, b;
	float sum = 0;
	uint32_t i;

	if (!h->used || start >= end)
		return 0;
	if (b1 - b0 + 1 > h->used) {
		for (i = 0; i < h->cap; i++) {
			const struct heat_entry *e = &h->slots[i];

			if (e->block && e->block - 1 >= b0 && e->block - 1 <= b1)
				sum += decay(e->value, e->stamp_ns, now_ns);
		}
		return sum;
	}
	for (b = b0; b <= b1; b++) {
		const struct heat_entry *e = heat_slot(h, b + 1);

		if (e && e->block)
			sum += decay(e->value, e->stamp_ns, now_ns);
	}
	return sum;
}

void heat_prune(struct heat *h, uint64_t now_ns)
{
	struct heat old = *h;
	uint32_t i;

	if (!old.used)
		return;
	memset(h, 0, sizeof(*h));
	h->gen = old.gen + 1;	/* values restamped, some dropped */
	for (i = 0; i < old.cap; i++) {
		struct heat_entry *e = &old.slots[i];
		float v;

		if (!e->block)
			continue;
		v = decay(e->value, e->stamp_ns, now_ns);
		if (v < 0.01f)
			continue;
		if ((h->used + 1) * 10 > h->cap * 7 && heat_grow(h))
			break;
		*heat_slot(h, e->block) = (struct heat_entry){ e->block, v, now_ns };
		h->used++;
	}
	free(old.slots);
}

const struct heat_entry *heat_find(const struct heat *h, uint64_t page)
{
	const struct heat_entry *e = heat_slot(h, (page >> HEAT_BLOCK_SHIFT) + 1);

	return e && e->block ? e : NULL;
}

int heat_set(struct heat *h, uint64_t page, float value, uint64_t now_ns)
{
	uint64_t key = (page >> HEAT_BLOCK_SHIFT) + 1;
	struct heat_entry *e;

	if ((h->used + 1) * 10 > h->cap * 7 && heat_grow(h))
		return -ENOMEM;
	e = heat_slot(h, key);
	if (!e->block) {
		e->block = key;
		h->used++;
	}
	e->value = value;
	e->stamp_ns = now_ns;
	h->gen++;
	return 0;
}

int heat_copy(struct heat *dst, const struct heat *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->gen = src->gen;
	if (!src->cap)
		return 0;
	dst->slots = malloc(src->cap * sizeof(*dst->slots));
	if (!dst->slots)
		return -ENOMEM;
	memcpy(dst->slots, src->slots, src->cap * sizeof(*dst->slots));
	dst->cap = src->cap;
	dst->used = src->used;
	return 0;
}

void heat_free(struct heat *h)
{
	uint64_t gen = h->gen;

	free(h->slots);
	memset(h, 0, sizeof(*h));
	h->gen = gen + 1;	/* an exec's reset empties it: a change */
}

float heat_entry_value(const struct heat_entry *e, uint64_t now_ns)
{
	return decay(e->value, e->stamp_ns, now_ns);
}
