// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for user/lib/array.h: growth by doubling from `first`, room for many at once,
 * an exact resize, and a growth that cannot be leaves the array as it was and says -ENOMEM.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

#include "lib/array.h"

static void test_one_at_a_time(void **state)
{
	uint32_t *v = NULL;
	size_t n = 0, cap = 0, i, caps[8], ncaps = 0;

	(void)state;
	for (i = 0; i < 1000; i++) {
		size_t before = cap;

		assert_int_equal(array_reserve(v, n, cap, 16), 0);
		assert_true(cap > n);
		if (cap != before)
			caps[ncaps++] = cap;
		v[n++] = (uint32_t)i;
	}
	/* 16, then doubling: 32, 64 ... 1024 */
	assert_int_equal(ncaps, 7);
	assert_int_equal(caps[0], 16);
	for (i = 1; i < ncaps; i++)
		assert_int_equal(caps[i], caps[i - 1] * 2);
	for (i = 0; i < n; i++)
		assert_int_equal(v[i], i);
	free(v);
}

static void test_many_at_once(void **state)
{
	char *v = NULL;
	int cap = 0;		/* an int capacity works too (inject.c, uffd.c) */

	(void)state;
	assert_int_equal(array_reserve_n(v, 5, cap, 8), 0);
	assert_int_equal(cap, 8);
	assert_int_equal(array_reserve_n(v, 8, cap, 8), 0);	/* fits: no growth */
	assert_int_equal(cap, 8);
	assert_int_equal(array_reserve_n(v, 100, cap, 8), 0);	/* 16, 32, 64, 128 */
	assert_int_equal(cap, 128);
	v[99] = 1;
	free(v);
}

static void test_impossible_size(void **state)
{
	uint64_t *v = NULL, *kept;
	size_t cap = 0;

	(void)state;
	assert_int_equal(array_reserve_n(v, 4, cap, 4), 0);
	kept = v;
	v[3] = 42;
	/* More elements than the address space holds: refused, never wrapped around. */
	assert_int_equal(array_reserve_n(v, SIZE_MAX / 2, cap, 4), -ENOMEM);
	assert_ptr_equal(v, kept);
	assert_int_equal(cap, 4);
	assert_int_equal(v[3], 42);
	assert_int_equal(array_reserve_n(v, SIZE_MAX, cap, 4), -ENOMEM);
	assert_int_equal(cap, 4);
	free(v);
}

/* array_resize: to exactly n, contents kept; an impossible size leaves v as it was. */
static void test_resize_exact(void **state)
{
	uint64_t *v = NULL, *before;
	size_t i;

	(void)state;
	assert_int_equal(array_resize(v, 8), 0);
	for (i = 0; i < 8; i++)
		v[i] = i * 3;
	assert_int_equal(array_resize(v, 3), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(v[i], i * 3);
	before = v;
	assert_int_equal(array_resize(v, SIZE_MAX / 4), -ENOMEM);
	assert_ptr_equal(v, before);
	assert_int_equal(v[2], 6);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_at_a_time),
		cmocka_unit_test(test_many_at_once),
		cmocka_unit_test(test_impossible_size),
		cmocka_unit_test(test_resize_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
