// SPDX-License-Identifier: GPL-2.0
/*
 * The process forest (proctree.h).  Each build is O(n log n): items sorted by pid to find
 * each parent, a counting sort into per-parent child lists, each list sorted with the
 * caller's order, then one depth-first walk with an explicit stack (a fork chain thousands
 * deep must not overflow the C stack).
 */
#include <errno.h>
#include <stdlib.h>
#include "model/proctree.h"

#define NONE ((size_t)-1)

static int by_pid(const void *a, const void *b, void *arg)
{
	const struct ptree_in *in = arg;
	pid_t x = in->pid[*(const size_t *)a], y = in->pid[*(const size_t *)b];

	return (x > y) - (x < y);
}

static int by_caller(const void *a, const void *b, void *arg)
{
	const struct ptree_in *in = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = in->cmp ? in->cmp(x, y, in->ctx) : 0;

	/* Equal for the caller: pid order, so a frame does not reshuffle ties. */
	return c ? c : by_pid(a, b, arg);
}

/* The item whose pid is ppid, or NONE. */
static size_t find_pid(const struct ptree_in *in, const size_t *bypid, pid_t ppid)
{
	size_t lo = 0, hi = in->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		pid_t p = in->pid[bypid[mid]];

		if (p == ppid)
			return bypid[mid];
		if (p < ppid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NONE;
}

struct walk {
	const struct ptree_in *in;
	struct ptree *t;
	const size_t *start, *kids;	/* item x's children: kids[start[x] .. start[x+1]) */
	size_t *visited;		/* 1 once x has a row */
	size_t *stk_row, *stk_cur;	/* the walk's stack: a row and its next child */
	size_t depth;
};

static void emit(struct walk *w, size_t x, size_t parent_row, bool last)
{
	struct ptree *t = w->t;
	struct ptree_row *r = &t->rows[t->n];

	*r = (struct ptree_row){ .item = x, .end = t->n + 1, .last = last };
	if (parent_row != NONE) {
		const struct ptree_row *p = &t->rows[parent_row];

		r->depth = p->depth + 1;
		r->more = p->more;
		if (p->depth >= 1 && p->depth - 1 < PTREE_MAX_GUIDES && !p->last)
			r->more |= 1ULL << (p->depth - 1);
		r->hidden = p->hidden || p->folded;
	}
	r->folded = w->start[x + 1] > w->start[x] && w->in->folded &&
		    w->in->folded(w->in->pid[x], w->in->ctx);
	w->visited[x] = 1;
	w->stk_row[w->depth] = t->n;
	w->stk_cur[w->depth] = w->start[x];
	w->depth++;
	t->n++;
}

/* Emits root x and its subtree. */
static void walk_from(struct walk *w, size_t x)
{
	struct ptree *t = w->t;

	emit(w, x, NONE, true);
	while (w->depth) {
		size_t row = w->stk_row[w->depth - 1], item = t->rows[row].item;
		size_t *cur = &w->stk_cur[w->depth - 1], kid = NONE, end = w->start[item + 1];

		while (*cur < end && w->visited[w->kids[*cur]])
			(*cur)++;	/* met already through a loop of parent links */
		if (*cur < end) {
			kid = w->kids[*cur];
			(*cur)++;
			emit(w, kid, row, *cur == end);
			continue;
		}
		t->rows[row].end = t->n;
		w->depth--;
	}
}

int proctree_build(struct ptree *t, const struct ptree_in *in)
{
	size_t n = in->n, need = 7 * n + 2, i, *bypid, *parent, *start, *kids, *fill;
	struct walk w = { .in = in, .t = t };

	t->n = 0;
	if (!n)
		return 0;
	/* Exactly n rows and `need` scratch slots, reused while they suffice: sizes known
	 * up front, not an array grown one element at a time (array.h). */
	if (n > t->cap) {
		struct ptree_row *r = realloc(t->rows, n * sizeof(*r));

		if (!r)
			return -ENOMEM;
		t->rows = r;
		t->cap = n;
	}
	if (need > t->scratch_cap) {
		size_t *s = realloc(t->scratch, need * sizeof(*s));

		if (!s)
			return -ENOMEM;
		t->scratch = s;
		t->scratch_cap = need;
	}
	bypid = t->scratch;
	parent = bypid + n;
	start = parent + n;		/* n + 2: one bucket per item, then the roots' */
	kids = start + n + 2;
	w.visited = kids + n;
	w.stk_row = w.visited + n;
	w.stk_cur = w.stk_row + n;
	fill = w.stk_row;		/* n + 1 slots (stk_row, stk_cur) free until the walk */

	for (i = 0; i < n; i++)
		bypid[i] = i;
	qsort_r(bypid, n, sizeof(*bypid), by_pid, (void *)in);
	for (i = 0; i <= n + 1; i++)
		start[i] = 0;
	for (i = 0; i < n; i++) {
		size_t p = in->ppid[i] && in->ppid[i] != in->pid[i] ?
			   find_pid(in, bypid, in->ppid[i]) : NONE;

		parent[i] = p == NONE ? n : p;
		start[parent[i] + 1]++;
		w.visited[i] = 0;
	}
	/* start[b] = first slot of bucket b, for buckets 0..n (n: the roots) */
	for (i = 1; i <= n + 1; i++)
		start[i] += start[i - 1];
	for (i = 0; i <= n; i++)
		fill[i] = start[i];
	for (i = 0; i < n; i++)
		kids[fill[parent[i]]++] = i;
	for (i = 0; i <= n; i++)
		if (start[i + 1] - start[i] > 1)
			qsort_r(kids + start[i], start[i + 1] - start[i], sizeof(*kids), by_caller,
				(void *)in);
	w.start = start;
	w.kids = kids;

	for (i = start[n]; i < start[n + 1]; i++)
		walk_from(&w, kids[i]);
	/* What is left hangs in a loop of parent links: each loop from its lowest pid. */
	for (i = 0; i < n; i++)
		if (!w.visited[bypid[i]])
			walk_from(&w, bypid[i]);
	return 0;
}

size_t proctree_shown_ancestor(const struct ptree *t, size_t i)
{
	while (i < t->n && t->rows[i].hidden) {
		size_t j = i;

		while (j-- > 0)
			if (t->rows[j].depth < t->rows[i].depth && t->rows[j].end > i)
				break;
		if (j == (size_t)-1)
			break;	/* cannot happen: a hidden row has a folded ancestor */
		i = j;
	}
	return i;
}

void proctree_free(struct ptree *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->scratch);
	*t = (struct ptree){ 0 };
}
