// SPDX-License-Identifier: GPL-2.0
/* Pointers in an array, found through a lib/hashtab index on a 32-bit key (xtab.h). */
#include <errno.h>
#include <stdlib.h>
#include "exact/xtab.h"
#include "lib/array.h"

static uint64_t xtab_hash(uint32_t item, void *ctx)
{
	const struct xtab *t = ctx;

	return t->key(t->v[item]);
}

static bool xtab_equal(uint32_t item, const void *key, void *ctx)
{
	const struct xtab *t = ctx;

	return t->key(t->v[item]) == *(const uint32_t *)key;
}

static const struct hashtab_ops xtab_ops = { xtab_hash, xtab_equal };

void *xtab_find(const struct xtab *t, uint32_t key)
{
	uint32_t i;

	return hashtab_find(&t->index, key, &key, &i) ? t->v[i] : NULL;
}

/* 0, or -ENOMEM with the table as it was. */
int xtab_add(struct xtab *t, void *elem)
{
	if (!t->index.ops)
		hashtab_init(&t->index, &xtab_ops, t);
	if (array_reserve(t->v, t->n, t->cap, 16))
		return -ENOMEM;
	t->v[t->n] = elem;
	if (hashtab_add(&t->index, t->key(elem), t->n))
		return -ENOMEM;
	t->n++;
	return 0;
}

/* The last element takes elem's place (the order is no one's business). */
void xtab_del(struct xtab *t, void *elem)
{
	uint32_t key = t->key(elem), i, last;

	if (!hashtab_find(&t->index, key, &key, &i))
		return;
	hashtab_remove(&t->index, key, &key);
	if (i != t->n - 1) {
		last = t->key(t->v[t->n - 1]);
		hashtab_remove(&t->index, last, &last);
		t->v[i] = t->v[t->n - 1];
		hashtab_add(&t->index, last, i);	/* two fewer than before: cannot grow */
	}
	t->n--;
}

void xtab_free(struct xtab *t)
{
	hashtab_free(&t->index);
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}
