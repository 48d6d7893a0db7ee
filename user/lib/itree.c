// SPDX-License-Identifier: GPL-2.0
/*
 * Augmented red-black interval tree; see itree.h for the contract.
 *
 * Null children count as black leaves.  The augmentation (subtree_last) is
 * kept exact at every step: rotations fix the two nodes they move, and a
 * structural splice during removal recomputes the path from the lowest
 * changed node to the root before any rebalancing rotation runs, so each
 * rotation starts from correct values.
 */
#include <errno.h>
#include <stdbool.h>

#include "lib/itree.h"

enum { ITREE_RED = 0, ITREE_BLACK = 1 };

/* The parent's address and the colour share a word (itree.h): nodes are pointer-aligned,
 * so bit 0 of the address is free. */
static inline struct itree_node *node_parent(const struct itree_node *n)
{
	return (struct itree_node *)(n->parent_color & ~(uintptr_t)1);
}

static inline int node_color(const struct itree_node *n)
{
	return (int)(n->parent_color & 1);
}

static inline void node_set_parent(struct itree_node *n, struct itree_node *p)
{
	n->parent_color = (uintptr_t)p | (n->parent_color & 1);
}

static inline void node_set_color(struct itree_node *n, int color)
{
	n->parent_color = (n->parent_color & ~(uintptr_t)1) | (uintptr_t)color;
}

static inline bool node_is_red(const struct itree_node *n)
{
	return n && node_color(n) == ITREE_RED;
}

static inline bool node_is_black(const struct itree_node *n)
{
	return !node_is_red(n);
}

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* subtree_last of n from its own interval and its children's cached values */
static uint64_t node_compute_last(const struct itree_node *n)
{
	uint64_t m = n->last;

	if (n->left)
		m = max_u64(m, n->left->subtree_last);
	if (n->right)
		m = max_u64(m, n->right->subtree_last);
	return m;
}

/* Recompute subtree_last from n up to the root (after a splice). */
static void node_propagate(struct itree_node *n)
{
	for (; n; n = node_parent(n))
		n->subtree_last = node_compute_last(n);
}

/* Make new take old's place under old's parent (or as root). */
static void node_replace_child(struct itree *t, struct itree_node *old,
			       struct itree_node *new)
{
	struct itree_node *p = node_parent(old);

	if (!p)
		t->root = new;
	else if (p->left == old)
		p->left = new;
	else
		p->right = new;
	if (new)
		node_set_parent(new, p);
}

/*
 *     x              y
 *    / \            / \
 *   a   y    ->    x   c
 *      / \        / \
 *     b   c      a   b
 *
 * The subtree as a whole keeps the same members, so y inherits x's old
 * subtree_last and only x needs recomputing.
 */
static void node_rotate_left(struct itree *t, struct itree_node *x)
{
	struct itree_node *y = x->right;

	x->right = y->left;
	if (y->left)
		node_set_parent(y->left, x);
	node_replace_child(t, x, y);
	y->left = x;
	node_set_parent(x, y);
	y->subtree_last = x->subtree_last;
	x->subtree_last = node_compute_last(x);
}

static void node_rotate_right(struct itree *t, struct itree_node *x)
{
	struct itree_node *y = x->left;

	x->left = y->right;
	if (y->right)
		node_set_parent(y->right, x);
	node_replace_child(t, x, y);
	y->right = x;
	node_set_parent(x, y);
	y->subtree_last = x->subtree_last;
	x->subtree_last = node_compute_last(x);
}

void itree_init(struct itree *t)
{
	t->root = NULL;
	t->count = 0;
}

static void insert_fixup(struct itree *t, struct itree_node *n)
{
	struct itree_node *p, *g, *u;

	while ((p = node_parent(n)) && node_is_red(p)) {
		g = node_parent(p);	/* exists: a red node is never the root */
		if (p == g->left) {
			u = g->right;
			if (node_is_red(u)) {
				node_set_color(p, ITREE_BLACK);
				node_set_color(u, ITREE_BLACK);
				node_set_color(g, ITREE_RED);
				n = g;
				continue;
			}
			if (n == p->right) {
				node_rotate_left(t, p);
				n = p;
				p = node_parent(n);
			}
			node_set_color(p, ITREE_BLACK);
			node_set_color(g, ITREE_RED);
			node_rotate_right(t, g);
		} else {
			u = g->left;
			if (node_is_red(u)) {
				node_set_color(p, ITREE_BLACK);
				node_set_color(u, ITREE_BLACK);
				node_set_color(g, ITREE_RED);
				n = g;
				continue;
			}
			if (n == p->left) {
				node_rotate_right(t, p);
				n = p;
				p = node_parent(n);
			}
			node_set_color(p, ITREE_BLACK);
			node_set_color(g, ITREE_RED);
			node_rotate_left(t, g);
		}
	}
	node_set_color(t->root, ITREE_BLACK);
}

void itree_insert(struct itree *t, struct itree_node *n)
{
	struct itree_node **link = &t->root, *parent = NULL;

	/*
	 * Every node on the way down gains n in its subtree, so raise its
	 * subtree_last now rather than walking back up afterwards.  Equal
	 * starts go right: insertion order is kept among equal starts.
	 */
	while (*link) {
		parent = *link;
		if (parent->subtree_last < n->last)
			parent->subtree_last = n->last;
		link = n->start < parent->start ? &parent->left : &parent->right;
	}
	n->parent_color = (uintptr_t)parent | ITREE_RED;
	n->left = n->right = NULL;
	n->subtree_last = n->last;
	*link = n;
	t->count++;
	insert_fixup(t, n);
}

/*
 * Restore the black height after a black node was unlinked from under
 * parent; x (possibly NULL) is the child that took its place.
 */
static void remove_fixup(struct itree *t, struct itree_node *x,
			 struct itree_node *parent)
{
	struct itree_node *w;

	while (x != t->root && node_is_black(x)) {
		/*
		 * When x is NULL the test below still picks the right side:
		 * the removed black node left a black-height deficit, so its
		 * sibling subtree is non-empty and cannot be NULL too.
		 */
		if (x == parent->left) {
			w = parent->right;
			if (node_is_red(w)) {
				node_set_color(w, ITREE_BLACK);
				node_set_color(parent, ITREE_RED);
				node_rotate_left(t, parent);
				w = parent->right;
			}
			if (node_is_black(w->left) && node_is_black(w->right)) {
				node_set_color(w, ITREE_RED);
				x = parent;
				parent = node_parent(x);
				continue;
			}
			if (node_is_black(w->right)) {
				node_set_color(w->left, ITREE_BLACK);
				node_set_color(w, ITREE_RED);
				node_rotate_right(t, w);
				w = parent->right;
			}
			node_set_color(w, node_color(parent));
			node_set_color(parent, ITREE_BLACK);
			node_set_color(w->right, ITREE_BLACK);
			node_rotate_left(t, parent);
			x = t->root;
		} else {
			w = parent->left;
			if (node_is_red(w)) {
				node_set_color(w, ITREE_BLACK);
				node_set_color(parent, ITREE_RED);
				node_rotate_right(t, parent);
				w = parent->left;
			}
			if (node_is_black(w->left) && node_is_black(w->right)) {
				node_set_color(w, ITREE_RED);
				x = parent;
				parent = node_parent(x);
				continue;
			}
			if (node_is_black(w->left)) {
				node_set_color(w->right, ITREE_BLACK);
				node_set_color(w, ITREE_RED);
				node_rotate_left(t, w);
				w = parent->left;
			}
			node_set_color(w, node_color(parent));
			node_set_color(parent, ITREE_BLACK);
			node_set_color(w->left, ITREE_BLACK);
			node_rotate_right(t, parent);
			x = t->root;
		}
	}
	if (x)
		node_set_color(x, ITREE_BLACK);
}

void itree_remove(struct itree *t, struct itree_node *n)
{
	struct itree_node *child, *parent, *y;
	int removed_color;

	if (!n->left || !n->right) {
		/* At most one child: it simply moves up into n's place. */
		child = n->left ? n->left : n->right;
		parent = node_parent(n);
		removed_color = node_color(n);
		node_replace_child(t, n, child);
	} else {
		/*
		 * Two children: n's successor y (leftmost of the right
		 * subtree, so it has no left child) takes n's place and
		 * colour; the colour lost is y's, at y's old position.
		 */
		y = n->right;
		while (y->left)
			y = y->left;
		removed_color = node_color(y);
		child = y->right;
		if (node_parent(y) == n) {
			parent = y;
		} else {
			parent = node_parent(y);
			node_replace_child(t, y, child);
			y->right = n->right;
			node_set_parent(y->right, y);
		}
		node_replace_child(t, n, y);
		y->left = n->left;
		node_set_parent(y->left, y);
		node_set_color(y, node_color(n));
	}
	t->count--;
	/* parent is the lowest node whose subtree changed; y is above it. */
	node_propagate(parent);
	if (removed_color == ITREE_BLACK)
		remove_fixup(t, child, parent);
}

struct itree_node *itree_min(const struct itree *t)
{
	struct itree_node *n = t->root;

	if (!n)
		return NULL;
	while (n->left)
		n = n->left;
	return n;
}

struct itree_node *itree_max(const struct itree *t)
{
	struct itree_node *n = t->root;

	if (!n)
		return NULL;
	while (n->right)
		n = n->right;
	return n;
}

struct itree_node *itree_next(const struct itree_node *n)
{
	const struct itree_node *p;

	if (n->right) {
		n = n->right;
		while (n->left)
			n = n->left;
		return (struct itree_node *)n;
	}
	while ((p = node_parent(n)) && n == p->right)
		n = p;
	return (struct itree_node *)p;
}

struct itree_node *itree_prev(const struct itree_node *n)
{
	const struct itree_node *p;

	if (n->left) {
		n = n->left;
		while (n->right)
			n = n->right;
		return (struct itree_node *)n;
	}
	while ((p = node_parent(n)) && n == p->left)
		n = p;
	return (struct itree_node *)p;
}

/*
 * Leftmost node of the subtree at n overlapping [start, last], or NULL.
 *
 * Going left whenever the left subtree reaches start is safe: if that
 * subtree holds a node ending at or after start but none overlapping, that
 * node begins after last, and so does everything from n rightwards.
 */
static struct itree_node *subtree_first_overlap(struct itree_node *n,
						uint64_t start, uint64_t last)
{
	for (;;) {
		if (n->left && n->left->subtree_last >= start) {
			n = n->left;
			continue;
		}
		if (n->start > last)
			return NULL;
		if (n->last >= start)
			return n;
		/*
		 * We only enter subtrees reaching start, and neither n nor its
		 * left side does, so the right side must; the test is a guard.
		 */
		n = n->right;
		if (!n || n->subtree_last < start)
			return NULL;
	}
}

struct itree_node *itree_first_overlap(const struct itree *t, uint64_t start,
				       uint64_t last)
{
	if (!t->root || t->root->subtree_last < start)
		return NULL;
	return subtree_first_overlap(t->root, start, last);
}

struct itree_node *itree_next_overlap(const struct itree_node *n,
				      uint64_t start, uint64_t last)
{
	const struct itree_node *prev;

	for (;;) {
		/* Successors inside n's right subtree come first. */
		if (n->right && n->right->subtree_last >= start)
			return subtree_first_overlap(n->right, start, last);
		/* Otherwise climb until we arrive from a left child. */
		do {
			prev = n;
			n = node_parent(n);
			if (!n)
				return NULL;
		} while (prev == n->right);
		/* Everything from here on starts at or after n->start. */
		if (n->start > last)
			return NULL;
		if (n->last >= start)
			return (struct itree_node *)n;
	}
}

struct itree_node *itree_first_ge(const struct itree *t, uint64_t start)
{
	struct itree_node *n = t->root, *best = NULL;

	while (n) {
		if (n->start >= start) {
			best = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return best;
}

struct itree_node *itree_last_le(const struct itree *t, uint64_t start)
{
	struct itree_node *n = t->root, *best = NULL;

	while (n) {
		if (n->start <= start) {
			best = n;
			n = n->right;
		} else {
			n = n->left;
		}
	}
	return best;
}

/*
 * Check the subtree at n, whose starts must lie in [lo, hi]; on success
 * store its black height and node count.  Recursion depth is the tree
 * height, at most 2*log2(n+1).
 */
static int verify_subtree(const struct itree_node *n,
			  const struct itree_node *parent, uint64_t lo,
			  uint64_t hi, int *black_height, size_t *count)
{
	int lh, rh;
	size_t lc, rc;

	if (!n) {
		*black_height = 1;
		*count = 0;
		return 0;
	}
	if (node_parent(n) != parent || n->start > n->last ||
	    n->start < lo || n->start > hi)
		return -EINVAL;
	if (node_is_red(n) && (node_is_red(n->left) || node_is_red(n->right)))
		return -EINVAL;
	if (n->subtree_last != node_compute_last(n))
		return -EINVAL;
	if (verify_subtree(n->left, n, lo, n->start, &lh, &lc) ||
	    verify_subtree(n->right, n, n->start, hi, &rh, &rc))
		return -EINVAL;
	if (lh != rh)
		return -EINVAL;
	*black_height = lh + node_is_black(n);
	*count = lc + rc + 1;
	return 0;
}

int itree_verify(const struct itree *t)
{
	int bh;
	size_t count;

	if (node_is_red(t->root))
		return -EINVAL;
	if (verify_subtree(t->root, NULL, 0, UINT64_MAX, &bh, &count))
		return -EINVAL;
	return count == t->count ? 0 : -EINVAL;
}
