// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for user/kernel/kpage_self.c, the observer's own PFNs: the discount of looked-up
 * map counts against a naive count over seeded random inputs (duplicates on both sides, as
 * kpage_lookup's callers have them), and, read from this process, a page of its own binary
 * it touched is in the set and an anonymous page of its own is not.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernel/kpage.h"
#include "rng.h"

#define N_MAX	64

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void random_sorted(uint64_t *v, size_t n, uint64_t range)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = rng_under(range);
	qsort(v, n, sizeof(*v), cmp_u64);
}

static void test_discount_random(void **state)
{
	uint64_t mine[N_MAX], pfns[N_MAX], counts[N_MAX], want[N_MAX];
	int round;

	(void)state;
	rng_seed("kpage_self_discount");
	for (round = 0; round < 20000; round++) {
		struct kpage_self s = { .pfns = mine, .n = rng_under(N_MAX + 1) };
		size_t n = rng_under(N_MAX + 1), i, j;
		uint64_t range = 1 + rng_under(3 * N_MAX);

		random_sorted(mine, s.n, range);
		random_sorted(pfns, n, range);
		for (i = 0; i < n; i++) {
			uint64_t m = 0;

			counts[i] = rng_under(6);
			for (j = 0; j < s.n; j++)
				m += mine[j] == pfns[i];
			assert_int_equal(kpage_self_count(&s, pfns[i]), m);
			want[i] = !m || !counts[i] ? counts[i] : counts[i] > m ? counts[i] - m : 1;
		}
		kpage_self_discount(&s, pfns, counts, n);
		for (i = 0; i < n; i++)
			if (counts[i] != want[i])
				fail_msg("round %d: pfn %" PRIu64 " (%zu of %zu, %zu mine): %" PRIu64
					 ", want %" PRIu64, round, pfns[i], i, n, s.n, counts[i],
					 want[i]);
	}
}

static uint64_t own_pfn(const void *addr)
{
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(kpage_read_entries(fd, (uintptr_t)addr / psz, 1, &e), 0);
	close(fd);
	assert_true(kpm_present(e));
	return kpm_pfn(e);
}

static void test_read_self(void **state)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct kpage_self s = { 0 };
	int fd = open("/proc/self/exe", O_RDONLY);
	volatile char *file, *anon;

	(void)state;
	assert_true(fd >= 0);
	file = mmap(NULL, psz, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	anon = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(file != MAP_FAILED && anon != MAP_FAILED);
	(void)file[0];
	anon[0] = 1;
	assert_int_equal(kpage_self_read(&s), 0);
	assert_true(s.entries > 0);
	if (geteuid()) {
		/* PFNs are root's: hidden, read as 0, none kept (counts stay the kernel's). */
		assert_int_equal(s.n, 0);
	} else {
		size_t i;

		assert_true(kpage_self_count(&s, own_pfn((const void *)file)) >= 1);
		assert_int_equal(kpage_self_count(&s, own_pfn((const void *)anon)), 0);
		for (i = 1; i < s.n; i++)
			assert_true(s.pfns[i - 1] <= s.pfns[i]);
	}
	kpage_self_free(&s);
	munmap((void *)file, psz);
	munmap((void *)anon, psz);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_discount_random),
		cmocka_unit_test(test_read_self),
	};

	return cmocka_run_group_tests_name("kpage_self", tests, NULL, NULL);
}
