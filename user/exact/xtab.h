/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine side's tables of exact mode (exact_track.c: userfaultfds by id, processes by
 * pid): pointers in an array in no order, indexed by lib/hashtab.h on a 32-bit key each
 * element holds.  A key is in the table at most once.
 */
#ifndef MEVITOP_XTAB_H
#define MEVITOP_XTAB_H

#include <stddef.h>
#include <stdint.h>
#include "lib/hashtab.h"

struct xtab {
	void **v;
	size_t n, cap;
	uint32_t (*key)(const void *elem);	/* set before the first add */
	struct hashtab index;
};

/* The element holding key, or NULL. */
void *xtab_find(const struct xtab *t, uint32_t key);
/* Adds elem (its key set, not in the table yet): 0, or -ENOMEM with the table as it was. */
int xtab_add(struct xtab *t, void *elem);
/* Removes elem; the last element takes its place (the order is no one's business). */
void xtab_del(struct xtab *t, void *elem);
void xtab_free(struct xtab *t);

#endif
