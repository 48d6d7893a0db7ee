// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for user/lib/itree.c: hand-checked cases, then thousands of random
 * inserts and removes compared against a plain array after every step.
 *
 * MEVITOP_TEST_SEED=<n> replays a run; the seed in use is always printed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/itree.h"

struct item {
	struct itree_node node;
	int id;
	bool linked;		/* reference: is it in the tree? */
};

static uint64_t test_seed;
static uint64_t rng_state;

/* splitmix64: tiny, seedable, good enough to shuffle test inputs */
static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform-enough value in [0, n) for small n */
static uint64_t rng_below(uint64_t n)
{
	return n ? rng_next() % n : 0;
}

static int group_setup(void **state)
{
	const char *env = getenv("MEVITOP_TEST_SEED");

	test_seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	printf("test_itree: MEVITOP_TEST_SEED=%" PRIu64 "\n", test_seed);
	return 0;
}

static void test_empty(void **state)
{
	struct itree t = ITREE_INIT;

	itree_init(&t);
	assert_int_equal(itree_verify(&t), 0);
	assert_null(itree_min(&t));
	assert_null(itree_max(&t));
	assert_null(itree_first_overlap(&t, 0, UINT64_MAX));
	assert_null(itree_first_ge(&t, 0));
	assert_null(itree_last_le(&t, UINT64_MAX));
}

static void item_set(struct item *it, int id, uint64_t start, uint64_t last)
{
	memset(it, 0, sizeof(*it));
	it->id = id;
	it->node.start = start;
	it->node.last = last;
}

static int node_id(const struct itree_node *n)
{
	return n ? itree_entry(n, struct item, node)->id : -1;
}

/* Small fixed case whose answers were worked out by hand. */
static void test_fixed(void **state)
{
	static const uint64_t iv[][2] = {
		{ 10, 20 }, { 0, 5 }, { 15, 15 }, { 30, 100 }, { 15, 40 },
		{ 50, 60 }, { 0, UINT64_MAX }, { UINT64_MAX, UINT64_MAX },
	};
	struct item items[8];
	struct itree t;
	struct itree_node *n;
	int ids[8], k;

	itree_init(&t);
	for (int i = 0; i < 8; i++) {
		item_set(&items[i], i, iv[i][0], iv[i][1]);
		itree_insert(&t, &items[i].node);
		assert_int_equal(itree_verify(&t), 0);
	}
	assert_int_equal(t.count, 8);
	/* in order: start 0 (ids 1, 6 by insertion), 10, 15 (2, 4), 30, 50, max */
	k = 0;
	for (n = itree_min(&t); n; n = itree_next(n))
		ids[k++] = node_id(n);
	assert_int_equal(k, 8);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 6);
	assert_int_equal(ids[2], 0);
	assert_int_equal(ids[3], 2);
	assert_int_equal(ids[4], 4);
	assert_int_equal(ids[5], 3);
	assert_int_equal(ids[6], 5);
	assert_int_equal(ids[7], 7);

	/* [16, 29] overlaps 6 [0,max], 0 [10,20], 4 [15,40] */
	n = itree_first_overlap(&t, 16, 29);
	assert_int_equal(node_id(n), 6);
	n = itree_next_overlap(n, 16, 29);
	assert_int_equal(node_id(n), 0);
	n = itree_next_overlap(n, 16, 29);
	assert_int_equal(node_id(n), 4);
	assert_null(itree_next_overlap(n, 16, 29));

	assert_int_equal(node_id(itree_first_ge(&t, 11)), 2);
	assert_int_equal(node_id(itree_first_ge(&t, 15)), 2);
	assert_int_equal(node_id(itree_last_le(&t, 15)), 4);
	assert_int_equal(node_id(itree_last_le(&t, 14)), 0);
	assert_int_equal(node_id(itree_first_ge(&t, UINT64_MAX)), 7);
	assert_ptr_equal(itree_first_ge(&t, UINT64_MAX - 1), &items[7].node);
	assert_ptr_equal(itree_last_le(&t, 0), &items[6].node);

	itree_remove(&t, &items[6].node);
	assert_int_equal(itree_verify(&t), 0);
	n = itree_first_overlap(&t, 16, 29);
	assert_int_equal(node_id(n), 0);
	assert_null(itree_first_overlap(&t, 6, 9));
	assert_int_equal(node_id(itree_first_overlap(&t, UINT64_MAX, UINT64_MAX)), 7);

	for (int i = 0; i < 8; i++) {
		if (i == 6)
			continue;
		itree_remove(&t, &items[i].node);
		assert_int_equal(itree_verify(&t), 0);
	}
	assert_null(t.root);
	assert_int_equal(t.count, 0);
}

/* Build a tree by hand and break each invariant in turn. */
static void test_verify_catches(void **state)
{
	struct item items[16];
	struct itree t;

	itree_init(&t);
	for (int i = 0; i < 16; i++) {
		item_set(&items[i], i, (uint64_t)i * 10, (uint64_t)i * 10 + 5);
		itree_insert(&t, &items[i].node);
	}
	assert_int_equal(itree_verify(&t), 0);

	t.root->subtree_last++;
	assert_int_equal(itree_verify(&t), -EINVAL);
	t.root->subtree_last--;

	t.count++;
	assert_int_equal(itree_verify(&t), -EINVAL);
	t.count--;

	t.root->left->start = t.root->start + 1;
	t.root->left->last = t.root->left->start + 5;
	assert_int_equal(itree_verify(&t), -EINVAL);
	t.root->left->start = t.root->start;	/* equal starts are legal */
	t.root->left->last = t.root->left->start + 5;
	assert_int_equal(itree_verify(&t), -EINVAL);	/* ...but subtree_last is now stale */

	/* fresh tree for colour and link checks */
	itree_init(&t);
	for (int i = 0; i < 16; i++) {
		item_set(&items[i], i, (uint64_t)i * 10, (uint64_t)i * 10 + 5);
		itree_insert(&t, &items[i].node);
	}
	t.root->parent_color ^= 1;		/* the colour is bit 0 */
	assert_int_equal(itree_verify(&t), -EINVAL);
	t.root->parent_color ^= 1;
	t.root->right->parent_color = (uintptr_t)t.root->left | (t.root->right->parent_color & 1);
	assert_int_equal(itree_verify(&t), -EINVAL);
	t.root->right->parent_color = (uintptr_t)t.root | (t.root->right->parent_color & 1);
	assert_int_equal(itree_verify(&t), 0);
	itree_init(&t);
	for (int i = 0; i < 16; i++) {
		item_set(&items[i], i, (uint64_t)i * 10, (uint64_t)i * 10 + 5);
		itree_insert(&t, &items[i].node);
	}
	/* every recolouring of a single non-root node breaks a rule */
	for (int i = 0; i < 16; i++) {
		struct itree_node *n = &items[i].node;

		if (n == t.root)
			continue;
		n->parent_color ^= 1;
		assert_int_equal(itree_verify(&t), -EINVAL);
		n->parent_color ^= 1;
	}
	assert_int_equal(itree_verify(&t), 0);
}

/* ---- randomised comparison against a plain array ---- */

#define NITEMS 600

static struct item pool[NITEMS];

static bool ref_overlaps(const struct item *it, uint64_t start, uint64_t last)
{
	return it->node.start <= last && it->node.last >= start;
}

/* Random interval drawn from a small universe so overlaps and ties abound. */
static void rand_interval(uint64_t base, uint64_t span, uint64_t *s, uint64_t *l)
{
	uint64_t len;

	uint64_t off = rng_below(span);

	*s = base + off < base ? UINT64_MAX : base + off;
	switch (rng_below(4)) {
	case 0:
		len = 0;
		break;
	case 1:
		len = rng_below(8);
		break;
	case 2:
		len = rng_below(span / 8 + 1);
		break;
	default:
		len = rng_below(span);
		break;
	}
	*l = *s + len < *s ? UINT64_MAX : *s + len;
}

/* Everything the tree answers must match a brute-force scan of pool[]. */
static void check_against_ref(struct itree *t, uint64_t base, uint64_t span)
{
	struct itree_node *n, *prev, *expect;
	size_t linked = 0, seen = 0;
	uint64_t s, l;

	assert_int_equal(itree_verify(t), 0);
	for (int i = 0; i < NITEMS; i++)
		linked += pool[i].linked;
	assert_int_equal(t->count, linked);

	/* forward walk: each linked item once, in start order */
	prev = NULL;
	for (n = itree_min(t); n; n = itree_next(n)) {
		struct item *it = itree_entry(n, struct item, node);

		assert_true(it >= pool && it < pool + NITEMS && it->linked);
		if (prev)
			assert_true(prev->start <= n->start);
		assert_ptr_equal(itree_prev(n), prev);
		prev = n;
		seen++;
	}
	assert_int_equal(seen, linked);
	assert_ptr_equal(itree_max(t), prev);

	for (int q = 0; q < 4; q++) {
		size_t want = 0, got = 0;

		rand_interval(base, span + span / 4, &s, &l);
		for (int i = 0; i < NITEMS; i++)
			want += pool[i].linked && ref_overlaps(&pool[i], s, l);

		/* overlap walk == in-order walk filtered by overlap */
		expect = itree_min(t);
		while (expect && !ref_overlaps(itree_entry(expect, struct item, node), s, l))
			expect = itree_next(expect);
		for (n = itree_first_overlap(t, s, l); n;
		     n = itree_next_overlap(n, s, l)) {
			assert_ptr_equal(n, expect);
			got++;
			expect = itree_next(expect);
			while (expect && !ref_overlaps(itree_entry(expect, struct item, node), s, l))
				expect = itree_next(expect);
		}
		assert_null(expect);
		assert_int_equal(got, want);

		/* first_ge / last_le against the brute-force answer */
		uint64_t ge = UINT64_MAX, le = 0;
		bool have_ge = false, have_le = false;

		for (int i = 0; i < NITEMS; i++) {
			if (!pool[i].linked)
				continue;
			if (pool[i].node.start >= s && (!have_ge || pool[i].node.start < ge)) {
				ge = pool[i].node.start;
				have_ge = true;
			}
			if (pool[i].node.start <= s && (!have_le || pool[i].node.start > le)) {
				le = pool[i].node.start;
				have_le = true;
			}
		}
		n = itree_first_ge(t, s);
		assert_int_equal(n != NULL, have_ge);
		if (n) {
			assert_int_equal(n->start, ge);
			assert_true(!itree_prev(n) || itree_prev(n)->start < s);
		}
		n = itree_last_le(t, s);
		assert_int_equal(n != NULL, have_le);
		if (n) {
			assert_int_equal(n->start, le);
			assert_true(!itree_next(n) || itree_next(n)->start > s);
		}
	}
}

static void run_random(uint64_t seed, uint64_t base, uint64_t span, int ops)
{
	struct itree t;
	size_t peak = 0;

	rng_state = seed;
	itree_init(&t);
	memset(pool, 0, sizeof(pool));
	for (int i = 0; i < NITEMS; i++)
		pool[i].id = i;

	for (int op = 0; op < ops; op++) {
		struct item *it = &pool[rng_below(NITEMS)];
		/* drift between filling up and draining so both paths get depth */
		bool grow = (op / 1000) % 2 == 0;

		if (!it->linked && (grow || rng_below(3) == 0)) {
			rand_interval(base, span, &it->node.start, &it->node.last);
			itree_insert(&t, &it->node);
			it->linked = true;
		} else if (it->linked && (!grow || rng_below(3) == 0)) {
			itree_remove(&t, &it->node);
			it->linked = false;
		} else {
			continue;
		}
		if (t.count > peak)
			peak = t.count;
		if (rng_below(4) == 0 || t.count < 64)
			check_against_ref(&t, base, span);
		else
			assert_int_equal(itree_verify(&t), 0);
	}
	check_against_ref(&t, base, span);
	/* the fill/drain phases must really have built a deep tree */
	assert_true(peak > NITEMS / 2);
	for (int i = 0; i < NITEMS; i++) {
		if (pool[i].linked) {
			itree_remove(&t, &pool[i].node);
			pool[i].linked = false;
			assert_int_equal(itree_verify(&t), 0);
		}
	}
	assert_null(t.root);
}

static void test_random_small(void **state)
{
	run_random(test_seed, 0, 64, 6000);
}

static void test_random_wide(void **state)
{
	run_random(test_seed ^ 0x5555, 1000, 1u << 20, 6000);
}

/* near the top of the range: last + 1 must never be assumed to exist */
static void test_random_top(void **state)
{
	run_random(test_seed ^ 0xaaaa, UINT64_MAX - 5000, 5000, 4000);
}

/* Sorted insertion is the classic way to unbalance a naive tree. */
static void test_sorted_insert_depth(void **state)
{
	enum { N = 1 << 14 };
	struct item *items = calloc(N, sizeof(*items));
	struct itree t;
	int depth = 0;

	assert_non_null(items);
	itree_init(&t);
	for (int i = 0; i < N; i++) {
		item_set(&items[i], i, (uint64_t)i, (uint64_t)i + 1);
		itree_insert(&t, &items[i].node);
	}
	assert_int_equal(itree_verify(&t), 0);
	for (struct itree_node *n = itree_min(&t); n;
	     n = (struct itree_node *)(n->parent_color & ~(uintptr_t)1))
		depth++;
	/* red-black height bound: 2*log2(N+1) */
	assert_true(depth <= 2 * 15);
	for (int i = 0; i < N; i += 2)
		itree_remove(&t, &items[i].node);
	assert_int_equal(itree_verify(&t), 0);
	assert_int_equal(t.count, N / 2);
	free(items);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_verify_catches),
		cmocka_unit_test(test_sorted_insert_depth),
		cmocka_unit_test(test_random_small),
		cmocka_unit_test(test_random_wide),
		cmocka_unit_test(test_random_top),
	};

	return cmocka_run_group_tests_name("itree", tests, group_setup, NULL);
}
