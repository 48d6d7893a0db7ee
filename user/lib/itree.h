/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Intrusive augmented interval tree over closed intervals [start, last] of
 * page numbers.
 *
 * A red-black tree ordered by start (equal starts allowed; a new node goes
 * after the existing ones with the same start), where each node also caches
 * subtree_last, the largest `last` in its subtree.  That lets an overlap query
 * skip every subtree that ends before the query begins, so enumerating the k
 * intervals overlapping a range costs O(log n + k).
 *
 * The node lives inside the caller's struct (recover it with itree_entry());
 * the tree never allocates.  Changing start/last of a linked node corrupts the
 * tree: remove it, edit it, insert it again.
 */
#ifndef MEVITOP_ITREE_H
#define MEVITOP_ITREE_H

#include <stddef.h>
#include <stdint.h>

/* 48 bytes: the colour is bit 0 of the parent's address, as in the kernel's rbtree (a
 * separate int made it 56 with padding, and the model has ~140,000 mappings at 5,000
 * processes). */
struct itree_node {
	struct itree_node *left, *right;
	uintptr_t parent_color;		/* parent | red-black colour, tree-owned */
	uint64_t start;			/* first page, set by the caller */
	uint64_t last;			/* last page (inclusive), >= start */
	uint64_t subtree_last;		/* max last in this subtree, tree-owned */
};

struct itree {
	struct itree_node *root;
	size_t count;			/* number of linked nodes */
};

#define itree_entry(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#define ITREE_INIT { .root = NULL, .count = 0 }

void itree_init(struct itree *t);

/* Link n; the caller has set n->start <= n->last.  O(log n). */
void itree_insert(struct itree *t, struct itree_node *n);

/* Unlink n, which must be in t.  O(log n).  n's link fields are left stale. */
void itree_remove(struct itree *t, struct itree_node *n);

/* Lowest-start node whose interval overlaps [start, last]; NULL if none. */
struct itree_node *itree_first_overlap(const struct itree *t, uint64_t start,
				       uint64_t last);

/*
 * The node after n (in start order) that overlaps [start, last]; NULL if
 * none.  Used with itree_first_overlap() to walk all overlaps in order.
 */
struct itree_node *itree_next_overlap(const struct itree_node *n,
				      uint64_t start, uint64_t last);

struct itree_node *itree_min(const struct itree *t);
struct itree_node *itree_max(const struct itree *t);
struct itree_node *itree_next(const struct itree_node *n);	/* successor */
struct itree_node *itree_prev(const struct itree_node *n);	/* predecessor */

/* First node (in order) with node->start >= start; NULL if none. */
struct itree_node *itree_first_ge(const struct itree *t, uint64_t start);

/* Last node (in order) with node->start <= start; NULL if none. */
struct itree_node *itree_last_le(const struct itree *t, uint64_t start);

/*
 * Debug aid: 0 if order, red-black rules, parent links, subtree_last and
 * count all hold, else -EINVAL.  O(n).
 */
int itree_verify(const struct itree *t);

#endif /* MEVITOP_ITREE_H */
