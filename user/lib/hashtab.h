/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A hash index over the caller's own array: it maps a key to the index of the element that
 * holds it, and stores nothing but those indices.  Open addressing with linear probing, at
 * most half full, removal by backward shift (no tombstones).  The caller says how to hash an
 * element and how to compare one with a key (struct hashtab_ops), so the elements keep their
 * own type and order; the table asks for an element's hash only when it grows or removes.
 *
 * Not for the tables that must stay small and lossy (stacks/raw_cache.c, fault_stacks.c) or
 * that keep values inline on a per-fault path (model/heat.c).
 */
#ifndef MEVITOP_HASHTAB_H
#define MEVITOP_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashtab_ops {
	uint64_t (*hash)(uint32_t item, void *ctx);			/* element item's key's hash */
	bool (*equal)(uint32_t item, const void *key, void *ctx);	/* element item holds key */
};

struct hashtab {
	uint32_t *slot;			/* an element's index + 1; 0: empty */
	size_t cap;			/* a power of two, or 0 */
	size_t n;			/* elements indexed */
	unsigned bits;			/* cap == 1 << bits */
	const struct hashtab_ops *ops;
	void *ctx;			/* passed to ops */
};

/* An empty table (no allocation until the first add). */
void hashtab_init(struct hashtab *t, const struct hashtab_ops *ops, void *ctx);
void hashtab_free(struct hashtab *t);
/* Forgets every element and keeps the room (a table rebuilt from scratch each time). */
void hashtab_clear(struct hashtab *t);
/* The element holding key (hash: the key's hash, as ops->hash gives it for that element). */
bool hashtab_find(const struct hashtab *t, uint64_t hash, const void *key, uint32_t *item);
/* Indexes element item (< UINT32_MAX), whose key the table must not hold yet; 0 or -ENOMEM
 * (the table is then as it was). */
int hashtab_add(struct hashtab *t, uint64_t hash, uint32_t item);
/* Forgets the element holding key; false when none does.  The caller's array is its own
 * business (an element moved to another index is removed and added again). */
bool hashtab_remove(struct hashtab *t, uint64_t hash, const void *key);

#endif
