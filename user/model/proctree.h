/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Processes as a forest by parent pid, in the order a tree view draws it (pre-order: a
 * process, then its subtree), siblings in the caller's order.  Data only: the process list
 * (ui_proclist.c) draws it, the unit test checks it against a plain reference.
 *
 * A process whose parent is not among the items (not watched, filtered out, pid 1) is a
 * root.  Parent links that loop (stale ppids after pid reuse) are broken at the process the
 * walk meets first, so every item is in the result exactly once.
 */
#ifndef MEVITOP_MODEL_PROCTREE_H
#define MEVITOP_MODEL_PROCTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PTREE_MAX_GUIDES 64	/* ancestor levels whose guide lines are known (bits of more) */

struct ptree_row {
	size_t item;		/* index into the caller's arrays */
	size_t end;		/* rows (this, end) are its descendants */
	uint32_t depth;		/* 0: a root */
	uint64_t more;		/* bit k: the ancestor at depth k+1 has later siblings (draw │) */
	bool last;		/* the last of its siblings */
	bool folded;		/* has descendants and the caller folded it */
	bool hidden;		/* inside a folded subtree */
};

struct ptree {
	struct ptree_row *rows;	/* n rows, one per item */
	size_t n, cap;
	size_t *scratch;	/* reused between builds */
	size_t scratch_cap;
};

struct ptree_in {
	const pid_t *pid, *ppid;	/* n items (pids unique) */
	size_t n;
	/* Sibling order (like qsort's), called with item indexes. */
	int (*cmp)(size_t a, size_t b, void *ctx);
	/* Whether the caller folded this process (NULL: nothing is). */
	bool (*folded)(pid_t pid, void *ctx);
	void *ctx;
};

/* 0, or -ENOMEM (t is then empty). */
int proctree_build(struct ptree *t, const struct ptree_in *in);
void proctree_free(struct ptree *t);
/* The row of the nearest ancestor of row i that is not hidden (i itself if it is shown). */
size_t proctree_shown_ancestor(const struct ptree *t, size_t i);

#endif
