// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for user/lib/hashtab.c: hand-checked cases, then random adds, removes and finds
 * compared after every step with a plain scan of the elements (the reference), under a good
 * hash and under one that sends most keys to a few homes (long probe runs, and removals that
 * must shift them back).
 *
 * MEVITOP_TEST_SEED=<n> replays a run; the seed in use is always printed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "lib/hashtab.h"
#include "rng.h"

#define NELEM 2000

#define MAXKEYS 4000

/* The caller's array: element i holds key[i] while in[i]; the reference is where[k], the
 * element holding key k + 1 (0: none), kept beside it. */
struct elems {
	uint64_t key[NELEM];
	bool in[NELEM];
	uint32_t where[MAXKEYS];
	bool weak;			/* the hash of few homes */
};

static uint64_t key_hash(const struct elems *e, uint64_t key)
{
	return e->weak ? key % 5 : key * 0xff51afd7ed558ccdULL;
}

static uint64_t elem_hash(uint32_t item, void *ctx)
{
	struct elems *e = ctx;

	return key_hash(e, e->key[item]);
}

static bool elem_equal(uint32_t item, const void *key, void *ctx)
{
	struct elems *e = ctx;

	return e->key[item] == *(const uint64_t *)key;
}

static const struct hashtab_ops ops = { elem_hash, elem_equal };

static bool ref_find(const struct elems *e, uint64_t key, uint32_t *item)
{
	*item = e->where[key] - 1;
	return e->where[key] != 0;
}

static void check_all(const struct hashtab *t, struct elems *e, uint64_t keys)
{
	size_t n = 0;

	for (uint64_t k = 0; k < keys; k++) {
		uint32_t a = UINT32_MAX, b = UINT32_MAX;
		bool fa = hashtab_find(t, key_hash(e, k), &k, &a), fb = ref_find(e, k, &b);

		assert_int_equal(fa, fb);
		if (fa)
			assert_int_equal(a, b);
	}
	for (uint32_t i = 0; i < NELEM; i++)
		n += e->in[i];
	assert_int_equal(t->n, n);
}

static void test_by_hand(void **state)
{
	static struct elems e;
	struct hashtab t;
	uint32_t item;
	uint64_t k;

	hashtab_init(&t, &ops, &e);
	k = 7;
	assert_false(hashtab_find(&t, key_hash(&e, k), &k, &item));
	assert_false(hashtab_remove(&t, key_hash(&e, k), &k));
	e.key[3] = 7;
	e.in[3] = true;
	e.where[7] = 4;
	assert_int_equal(hashtab_add(&t, key_hash(&e, 7), 3), 0);
	assert_true(hashtab_find(&t, key_hash(&e, k), &k, &item));
	assert_int_equal(item, 3);
	assert_int_equal(hashtab_add(&t, 0, UINT32_MAX), -ENOMEM);
	assert_true(hashtab_remove(&t, key_hash(&e, k), &k));
	e.in[3] = false;
	e.where[7] = 0;
	assert_false(hashtab_find(&t, key_hash(&e, k), &k, &item));
	assert_int_equal(t.n, 0);
	/* cleared: nothing found, the room kept, and it fills again */
	assert_int_equal(hashtab_add(&t, key_hash(&e, 7), 3), 0);
	hashtab_clear(&t);
	assert_int_equal(t.n, 0);
	assert_true(t.cap > 0);
	assert_false(hashtab_find(&t, key_hash(&e, k), &k, &item));
	assert_int_equal(hashtab_add(&t, key_hash(&e, 7), 3), 0);
	assert_true(hashtab_find(&t, key_hash(&e, k), &k, &item));
	assert_int_equal(item, 3);
	hashtab_free(&t);
	hashtab_free(&t);	/* twice: a freed table is an empty one */
}

static void random_ops(bool weak, int steps, uint64_t keys)
{
	static struct elems e;
	struct hashtab t;

	memset(&e, 0, sizeof(e));
	e.weak = weak;
	hashtab_init(&t, &ops, &e);
	for (int s = 0; s < steps; s++) {
		uint32_t i = rng_under(NELEM), item;
		uint64_t k = rng_under(keys);

		if (rng_under(3)) {		/* add key k at a free element i */
			if (e.in[i] || ref_find(&e, k, &item))
				continue;
			e.key[i] = k;
			assert_int_equal(hashtab_add(&t, key_hash(&e, k), i), 0);
			e.in[i] = true;
			e.where[k] = i + 1;
		} else {			/* remove key k (maybe absent) */
			bool had = ref_find(&e, k, &item);

			assert_int_equal(hashtab_remove(&t, key_hash(&e, k), &k), had);
			if (had) {
				e.in[item] = false;
				e.where[k] = 0;
			}
		}
		if (s % 7 == 0 || weak)
			check_all(&t, &e, keys);
	}
	check_all(&t, &e, keys);
	hashtab_free(&t);
}

static void test_random_against_a_scan(void **state)
{
	random_ops(false, 40000, 3000);
}

static void test_random_few_homes(void **state)
{
	random_ops(true, 3000, 400);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_hand),
		cmocka_unit_test(test_random_against_a_scan),
		cmocka_unit_test(test_random_few_homes),
	};

	rng_seed("test_hash");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
