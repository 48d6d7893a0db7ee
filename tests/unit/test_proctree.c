// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for user/model/proctree.c: hand-checked trees (guides, folding, orphans, loops
 * of parent links), a fork chain 200,000 deep, then random forests compared row by row with
 * a plain recursive reference.
 *
 * MEVITOP_TEST_SEED=<n> replays a run; the seed in use is always printed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/proctree.h"
#include "ui/treeview.h"
#include "rng.h"

struct forest {
	pid_t pid[600], ppid[600];
	int key[600];			/* sibling order: key ascending */
	bool fold[600];			/* indexed by item */
	size_t n;
};

static int cmp_key(size_t a, size_t b, void *ctx)
{
	const struct forest *f = ctx;

	return (f->key[a] > f->key[b]) - (f->key[a] < f->key[b]);
}

static bool is_folded(pid_t pid, void *ctx)
{
	const struct forest *f = ctx;
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->pid[i] == pid)
			return f->fold[i];
	return false;
}

static void build(struct ptree *t, struct forest *f)
{
	struct ptree_in in = { .pid = f->pid, .ppid = f->ppid, .n = f->n, .cmp = cmp_key,
			       .folded = is_folded, .ctx = f };

	assert_int_equal(proctree_build(t, &in), 0);
	assert_int_equal(t->n, f->n);
}

/*
 *   10 ─┬─ 11 ─── 13
 *       └─ 12
 *   20 (parent 1, not listed) ─── 21
 */
static void test_small(void **state)
{
	struct forest f = { .pid = { 12, 21, 10, 13, 11, 20 }, .ppid = { 10, 20, 0, 11, 10, 1 },
			    .key = { 2, 0, 0, 0, 1, 1 }, .n = 6 };
	static const pid_t want[] = { 10, 11, 13, 12, 20, 21 };
	static const uint32_t depth[] = { 0, 1, 2, 1, 0, 1 };
	static const size_t end[] = { 4, 3, 3, 4, 6, 6 };
	static const bool last[] = { true, false, true, true, true, true };
	struct ptree t = { 0 };
	size_t i;

	build(&t, &f);
	for (i = 0; i < 6; i++) {
		assert_int_equal(f.pid[t.rows[i].item], want[i]);
		assert_int_equal(t.rows[i].depth, depth[i]);
		assert_int_equal(t.rows[i].end, end[i]);
		assert_int_equal(t.rows[i].last, last[i]);
		assert_false(t.rows[i].hidden);
		assert_false(t.rows[i].folded);
	}
	/* 13's parent 11 has a later sibling (12): a guide line at its level. */
	assert_int_equal(t.rows[2].more, 1);
	assert_int_equal(t.rows[1].more, 0);

	/* Folding 11 hides 13; folding 12 (no children) does nothing. */
	f.fold[4] = f.fold[0] = true;
	build(&t, &f);
	assert_true(t.rows[1].folded);
	assert_true(t.rows[2].hidden);
	assert_false(t.rows[3].hidden);
	assert_false(t.rows[3].folded);
	assert_int_equal(proctree_shown_ancestor(&t, 2), 1);
	assert_int_equal(proctree_shown_ancestor(&t, 3), 3);
	/* Folding the root hides everything under it; 13's shown ancestor is the root. */
	f.fold[2] = true;
	build(&t, &f);
	assert_true(t.rows[0].folded);
	assert_true(t.rows[1].hidden && t.rows[2].hidden && t.rows[3].hidden);
	assert_false(t.rows[4].hidden);
	assert_int_equal(proctree_shown_ancestor(&t, 2), 0);
	proctree_free(&t);
}

/* The processes of one refresh, for the fold set: which pids run (exited ones are listed
 * for a while, as the process list keeps them). */
struct listed {
	pid_t pid[4];
	bool exited[4];
	uint64_t serial[4];
	size_t n;
};

static bool listed_running(pid_t pid, uint64_t serial, void *ctx)
{
	const struct listed *l = ctx;

	for (size_t i = 0; i < l->n; i++)
		if (l->pid[i] == pid && pid_set_same(serial, l->serial[i]))
			return !l->exited[i];
	return false;
}

static bool in_set(pid_t pid, void *ctx)
{
	return pid_set_has(ctx, pid);
}

/*
 * The fold set forgets a process once it has exited or left the list, so a new process
 * given its pid starts unfolded: 10 ─── 11 and 20 ─── 21 folded; 20 exits (listed, exited),
 * 30 was folded and is gone; then a new 20, with a child 22, is not folded.
 */
static void test_fold_set_forgets_exited(void **state)
{
	struct pid_set folds = { 0 };
	struct listed now = { .pid = { 10, 11, 20, 21 }, .n = 4 };
	struct ptree_in in = { .pid = (pid_t[]){ 10, 11, 20, 22 },
			       .ppid = (pid_t[]){ 1, 10, 1, 20 }, .n = 4, .folded = in_set,
			       .ctx = &folds };
	struct ptree t = { 0 };

	assert_int_equal(pid_set_add(&folds, 10, 0), 0);
	assert_int_equal(pid_set_add(&folds, 20, 0), 0);
	assert_int_equal(pid_set_add(&folds, 30, 0), 0);
	pid_set_retain(&folds, listed_running, &now);	/* 30 is not listed */
	assert_int_equal(folds.n, 2);
	assert_true(pid_set_has(&folds, 10) && pid_set_has(&folds, 20));
	now.exited[2] = true;				/* 20 exited */
	pid_set_retain(&folds, listed_running, &now);
	assert_int_equal(folds.n, 1);
	assert_true(pid_set_has(&folds, 10));
	assert_false(pid_set_has(&folds, 20));
	/* The new 20: its subtree shows, 10's stays folded. */
	assert_int_equal(proctree_build(&t, &in), 0);
	assert_int_equal(in.pid[t.rows[0].item], 10);
	assert_true(t.rows[0].folded && t.rows[1].hidden);
	assert_int_equal(in.pid[t.rows[2].item], 20);
	assert_false(t.rows[2].folded || t.rows[3].hidden);
	/* Nothing running: nothing folded. */
	now.n = 0;
	pid_set_retain(&folds, listed_running, &now);
	assert_int_equal(folds.n, 0);
	proctree_free(&t);
	pid_set_free(&folds);
}

/*
 * A fold remembers the process, not just its pid: one whose exit went unseen (the view was
 * paused) and whose pid a new process took is no longer folded.  Serial 0 (a replay's
 * processes) falls back to the pid.
 */
static void test_fold_set_tells_a_reused_pid(void **state)
{
	struct pid_set folds = { 0 };
	struct listed now = { .pid = { 10, 11, 20 }, .serial = { 0, 3, 9 }, .n = 3 };

	(void)state;
	assert_int_equal(pid_set_add(&folds, 10, 4), 0);	/* listed with serial unknown */
	assert_int_equal(pid_set_add(&folds, 11, 3), 0);	/* the same process */
	assert_int_equal(pid_set_add(&folds, 20, 5), 0);	/* gone; 20 is now serial 9 */
	pid_set_retain(&folds, listed_running, &now);
	assert_int_equal(folds.n, 2);
	assert_true(pid_set_has(&folds, 10) && pid_set_has(&folds, 11));
	assert_false(pid_set_has(&folds, 20));
	assert_int_equal(pid_set_add(&folds, 20, 0), 0);	/* unknown: the pid alone */
	pid_set_retain(&folds, listed_running, &now);
	assert_true(pid_set_has(&folds, 20));
	pid_set_free(&folds);
}

/* 5 → 6 → 7 → 5 and 8 → 8: no root; each loop starts at its lowest pid, nothing twice. */
static void test_loops(void **state)
{
	struct forest f = { .pid = { 7, 6, 5, 8, 9 }, .ppid = { 6, 5, 7, 8, 8 }, .n = 5 };
	static const pid_t want[] = { 8, 9, 5, 6, 7 };
	struct ptree t = { 0 };
	size_t i;

	build(&t, &f);
	for (i = 0; i < 5; i++)
		assert_int_equal(f.pid[t.rows[i].item], want[i]);
	assert_int_equal(t.rows[0].end, 2);	/* 8 (its own parent: a root) with 9 */
	assert_int_equal(t.rows[2].end, 5);
	assert_int_equal(t.rows[4].depth, 2);
	proctree_free(&t);
}

static void test_empty_and_deep(void **state)
{
	enum { DEEP = 200000 };
	pid_t *pid = malloc(DEEP * sizeof(*pid)), *ppid = malloc(DEEP * sizeof(*ppid));
	struct ptree_in in = { .pid = pid, .ppid = ppid };
	struct ptree t = { 0 };
	size_t i;

	assert_non_null(pid);
	assert_non_null(ppid);
	assert_int_equal(proctree_build(&t, &in), 0);
	assert_int_equal(t.n, 0);
	for (i = 0; i < DEEP; i++) {
		pid[i] = DEEP - (pid_t)i;	/* children listed first */
		ppid[i] = DEEP - (pid_t)i - 1;
	}
	in.n = DEEP;
	assert_int_equal(proctree_build(&t, &in), 0);
	assert_int_equal(t.n, DEEP);
	for (i = 0; i < DEEP; i++) {
		assert_int_equal(pid[t.rows[i].item], (pid_t)i + 1);
		assert_int_equal(t.rows[i].depth, i);
		assert_int_equal(t.rows[i].end, DEEP);
		assert_true(t.rows[i].last);
		assert_int_equal(t.rows[i].more, 0);
	}
	proctree_free(&t);
	free(pid);
	free(ppid);
}

/* --- the reference: recursion over a plain parent scan --- */

struct ref_row {
	size_t item, end;
	uint32_t depth;
	uint64_t more;
	bool last, folded, hidden;
};

static size_t ref_parent(const struct forest *f, size_t i)
{
	size_t j;

	for (j = 0; j < f->n; j++)
		if (f->ppid[i] && f->pid[j] == f->ppid[i] && j != i)
			return j;
	return (size_t)-1;
}

static size_t ref_kids(const struct forest *f, size_t parent, size_t *out)
{
	size_t i, j, k = 0;

	for (i = 0; i < f->n; i++)
		if (ref_parent(f, i) == parent)
			out[k++] = i;
	/* insertion sort by (key, pid) */
	for (i = 1; i < k; i++)
		for (j = i; j > 0; j--) {
			size_t a = out[j - 1], b = out[j];

			if (f->key[a] < f->key[b] || (f->key[a] == f->key[b] && f->pid[a] < f->pid[b]))
				break;
			out[j - 1] = b;
			out[j] = a;
		}
	return k;
}

static void ref_walk(const struct forest *f, size_t x, uint32_t depth, uint64_t more, bool last,
		     bool hidden, struct ref_row *rows, size_t *n)
{
	size_t *kids = malloc(f->n * sizeof(*kids)), nk, i, me = (*n)++;
	struct ref_row *r = &rows[me];

	assert_non_null(kids);
	nk = ref_kids(f, x, kids);

	*r = (struct ref_row){ .item = x, .depth = depth, .more = more, .last = last,
			       .hidden = hidden, .folded = nk && f->fold[x] };
	for (i = 0; i < nk; i++)
		ref_walk(f, kids[i], depth + 1,
			 more | (depth >= 1 && !last ? 1ULL << (depth - 1) : 0),
			 i == nk - 1, hidden || rows[me].folded, rows, n);
	rows[me].end = *n;
	free(kids);
}

static void test_random_forests(void **state)
{
	static struct forest f;
	static struct ref_row ref[600];
	struct ptree t = { 0 };
	int round;

	rng_seed("test_proctree");
	for (round = 0; round < 300; round++) {
		size_t i, j, nref = 0, roots[600], nroots;

		f.n = 1 + rng_under(round < 50 ? 12 : 500);
		/* Distinct pids; each parent an earlier item (a forest), none, or not listed. */
		for (i = 0; i < f.n; i++) {
			f.pid[i] = 100 + (pid_t)(i * 7 + rng_under(7));
			f.key[i] = (int)rng_under(4);
			f.fold[i] = rng_under(6) == 0;
			j = rng_under(i + 2);
			f.ppid[i] = j < i ? f.pid[j] : j == i ? 0 : 99999;
		}
		/* Shuffle the items: the builder must not rely on parents coming first. */
		for (i = f.n - 1; i > 0; i--) {
			size_t k = rng_under(i + 1);
			pid_t p = f.pid[i], pp = f.ppid[i];
			int key = f.key[i];
			bool fo = f.fold[i];

			f.pid[i] = f.pid[k], f.ppid[i] = f.ppid[k], f.key[i] = f.key[k];
			f.fold[i] = f.fold[k];
			f.pid[k] = p, f.ppid[k] = pp, f.key[k] = key, f.fold[k] = fo;
		}
		nroots = ref_kids(&f, (size_t)-1, roots);
		for (i = 0; i < nroots; i++)
			ref_walk(&f, roots[i], 0, 0, true, false, ref, &nref);
		assert_int_equal(nref, f.n);
		build(&t, &f);
		for (i = 0; i < f.n; i++) {
			const struct ptree_row *r = &t.rows[i];

			assert_int_equal(r->item, ref[i].item);
			assert_int_equal(r->end, ref[i].end);
			assert_int_equal(r->depth, ref[i].depth);
			assert_int_equal(r->more, ref[i].more);
			assert_int_equal(r->last, ref[i].last);
			assert_int_equal(r->folded, ref[i].folded);
			assert_int_equal(r->hidden, ref[i].hidden);
			j = proctree_shown_ancestor(&t, i);
			assert_false(t.rows[j].hidden);
			assert_true(j <= i && t.rows[j].end > i);
		}
	}
	proctree_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_loops),
		cmocka_unit_test(test_fold_set_forgets_exited),
		cmocka_unit_test(test_fold_set_tells_a_reused_pid),
		cmocka_unit_test(test_empty_and_deep),
		cmocka_unit_test(test_random_forests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
