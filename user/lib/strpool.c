// SPDX-License-Identifier: GPL-2.0
/*
 * The string pool (strpool.h): each distinct string once, in an array indexed by
 * lib/hashtab.c, with a reference count in front of its bytes.  A freed slot's index is
 * reused by the next new string.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "lib/hashtab.h"
#include "lib/strpool.h"

struct pooled {
	uint32_t refs;
	uint32_t item;		/* its index in pool.v */
	uint64_t hash;
	char s[];
};

static struct {
	pthread_mutex_t lock;
	struct pooled **v;	/* by index; NULL: a free slot */
	size_t n, cap;
	uint32_t *free;		/* free slots */
	size_t nfree, capfree;
	struct hashtab idx;
	bool ready;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t hash_of(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static uint64_t item_hash(uint32_t item, void *ctx)
{
	(void)ctx;
	return pool.v[item]->hash;
}

static bool item_equal(uint32_t item, const void *key, void *ctx)
{
	(void)ctx;
	return !strcmp(pool.v[item]->s, key);
}

static const struct hashtab_ops ops = { item_hash, item_equal };

static struct pooled *of(const char *s)
{
	return (struct pooled *)(s - offsetof(struct pooled, s));
}

/* A new entry for s (hash h) in a free or a new slot; NULL when out of memory. */
static struct pooled *add(const char *s, uint64_t h)
{
	size_t len = strlen(s);
	struct pooled *e = malloc(sizeof(*e) + len + 1);
	uint32_t item;

	if (!e)
		return NULL;
	if (pool.nfree) {
		item = pool.free[--pool.nfree];
	} else if (pool.n >= UINT32_MAX - 1 || array_reserve(pool.v, pool.n, pool.cap, 256)) {
		free(e);
		return NULL;
	} else {
		item = (uint32_t)pool.n++;
	}
	e->refs = 1;
	e->item = item;
	e->hash = h;
	memcpy(e->s, s, len + 1);
	pool.v[item] = e;
	if (hashtab_add(&pool.idx, h, item)) {
		pool.v[item] = NULL;
		pool.free[pool.nfree++] = item;	/* room: reserved below before each add */
		free(e);
		return NULL;
	}
	return e;
}

const char *strpool_get(const char *s)
{
	uint64_t h = hash_of(s);
	struct pooled *e = NULL;
	uint32_t item;

	pthread_mutex_lock(&pool.lock);
	if (!pool.ready) {
		hashtab_init(&pool.idx, &ops, NULL);
		pool.ready = true;
	}
	if (hashtab_find(&pool.idx, h, s, &item)) {
		e = pool.v[item];
		e->refs++;
	} else if (!array_reserve(pool.free, pool.nfree, pool.capfree, 64)) {
		e = add(s, h);
	}
	pthread_mutex_unlock(&pool.lock);
	return e ? e->s : NULL;
}

const char *strpool_ref(const char *s)
{
	if (!s)
		return NULL;
	pthread_mutex_lock(&pool.lock);
	of(s)->refs++;
	pthread_mutex_unlock(&pool.lock);
	return s;
}

void strpool_put(const char *s)
{
	struct pooled *e;

	if (!s)
		return;
	e = of(s);
	pthread_mutex_lock(&pool.lock);
	if (--e->refs == 0) {
		hashtab_remove(&pool.idx, e->hash, e->s);
		pool.v[e->item] = NULL;
		/* The free list has room: every slot in it was once counted in pool.n, and
		 * array_reserve grew it before each add. */
		if (!array_reserve(pool.free, pool.nfree, pool.capfree, 64))
			pool.free[pool.nfree++] = e->item;
		free(e);
	}
	pthread_mutex_unlock(&pool.lock);
}
