// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hashtab.h"

#define FIRST_BITS 6		/* 64 slots */

void hashtab_init(struct hashtab *t, const struct hashtab_ops *ops, void *ctx)
{
	*t = (struct hashtab){ .ops = ops, .ctx = ctx };
}

void hashtab_free(struct hashtab *t)
{
	free(t->slot);
	t->slot = NULL;
	t->cap = t->n = 0;
	t->bits = 0;
}

void hashtab_clear(struct hashtab *t)
{
	if (t->cap)
		memset(t->slot, 0, t->cap * sizeof(*t->slot));
	t->n = 0;
}

/* Fibonacci hashing: the top bits of hash * 2^64/phi, so callers' weak low bits (an FNV sum,
 * a page number) spread over the whole table. */
static size_t home(const struct hashtab *t, uint64_t hash)
{
	return (size_t)((hash * 0x9e3779b97f4a7c15ULL) >> (64 - t->bits));
}

/* The slot holding key, or the empty one where it would go. */
static size_t slot_of(const struct hashtab *t, uint64_t hash, const void *key)
{
	size_t mask = t->cap - 1, i = home(t, hash);

	while (t->slot[i] && !t->ops->equal(t->slot[i] - 1, key, t->ctx))
		i = (i + 1) & mask;
	return i;
}

/* The empty slot an element of this hash goes to (the table holds no equal key). */
static size_t free_slot(const struct hashtab *t, uint64_t hash)
{
	size_t mask = t->cap - 1, i = home(t, hash);

	while (t->slot[i])
		i = (i + 1) & mask;
	return i;
}

bool hashtab_find(const struct hashtab *t, uint64_t hash, const void *key, uint32_t *item)
{
	size_t i;

	if (!t->n)
		return false;
	i = slot_of(t, hash, key);
	if (!t->slot[i])
		return false;
	*item = t->slot[i] - 1;
	return true;
}

/* Doubles the table when one more element would make it over half full. */
static int grow(struct hashtab *t)
{
	struct hashtab old = *t;

	if (2 * (t->n + 1) <= t->cap)
		return 0;
	t->bits = old.cap ? old.bits + 1 : FIRST_BITS;
	t->cap = (size_t)1 << t->bits;
	t->slot = calloc(t->cap, sizeof(*t->slot));
	if (!t->slot) {
		*t = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old.cap; i++)
		if (old.slot[i])
			t->slot[free_slot(t, t->ops->hash(old.slot[i] - 1, t->ctx))] = old.slot[i];
	free(old.slot);
	return 0;
}

int hashtab_add(struct hashtab *t, uint64_t hash, uint32_t item)
{
	if (item == UINT32_MAX || grow(t))
		return -ENOMEM;
	t->slot[free_slot(t, hash)] = item + 1;
	t->n++;
	return 0;
}

bool hashtab_remove(struct hashtab *t, uint64_t hash, const void *key)
{
	size_t mask = t->cap - 1, i, j;

	if (!t->n)
		return false;
	i = slot_of(t, hash, key);
	if (!t->slot[i])
		return false;
	/* Backward shift: an element further on whose probe passed through i moves into it,
	 * so every probe still meets no gap before its element. */
	for (j = (i + 1) & mask; t->slot[j]; j = (j + 1) & mask) {
		size_t h = home(t, t->ops->hash(t->slot[j] - 1, t->ctx));

		/* j's element may move to i unless its home lies in (i, j], cyclically. */
		if (i <= j ? (h > i && h <= j) : (h > i || h <= j))
			continue;
		t->slot[i] = t->slot[j];
		i = j;
	}
	t->slot[i] = 0;
	t->n--;
	return true;
}
