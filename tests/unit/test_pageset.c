// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for user/lib/pageset.c.
 *
 * The reference model is one byte per page over a few windows of the 64-bit
 * page space: near 0, across the 2^32 bucket boundary, at 0x7fff00000,
 * across 2^44 and at the very top.  Each window spans several 64 Ki roaring
 * chunks, so chunk- and bucket-crossing cases come up naturally; endpoints
 * are also biased towards chunk boundaries.  Thousands of random operations
 * run on two sets at once (for copy/clone/equal), and after every one the
 * whole set is enumerated with pageset_next_run() and compared run by run.
 *
 * MEVITOP_TEST_SEED=<n> replays a run; the seed in use is always printed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/pageset.h"

#define CHUNK		(UINT64_C(1) << 16)	/* roaring container span */
#define BUCKET		(UINT64_C(1) << 32)	/* pageset bucket span */
#define WIN		(4 * CHUNK + 1000)	/* pages per reference window */
#define NWIN		6
#define UNIVERSE	(NWIN * WIN)
#define MPAGES		(UINT64_C(4) << 20)	/* 4 Mi pages for memory tests */

/* Sorted, and far enough apart that no run can join two windows. */
static const uint64_t win_base[NWIN] = {
	0,
	BUCKET - WIN / 2,			/* across the first bucket edge */
	UINT64_C(0x7fff00000),
	(UINT64_C(1) << 44) - WIN / 2 - 3,	/* across 2^44 */
	(UINT64_C(1) << 63) + 12345,
	UINT64_MAX - WIN,			/* ends at UINT64_MAX (exclusive) */
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

static uint64_t rng_below(uint64_t n)
{
	return n ? rng_next() % n : 0;
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int group_setup(void **state)
{
	const char *env = getenv("MEVITOP_TEST_SEED");

	test_seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	printf("test_pageset: MEVITOP_TEST_SEED=%" PRIu64 "\n", test_seed);
	return 0;
}

/* ---- reference model ---- */

struct model {
	struct pageset *s;
	uint8_t *ref;		/* UNIVERSE bytes, ref[w * WIN + off] */
};

static uint64_t ref_page(int w, uint64_t off)
{
	return win_base[w] + off;
}

static void ref_set(struct model *m, int w, uint64_t a, uint64_t b, uint8_t v)
{
	memset(m->ref + (uint64_t)w * WIN + a, v, b - a);
}

/* Reference answer for next_run restricted to window w's offsets [a, b). */
static bool ref_next_run(const struct model *m, int w, uint64_t a, uint64_t b,
			 uint64_t *rs, uint64_t *re)
{
	const uint8_t *p = m->ref + (uint64_t)w * WIN;
	const uint8_t *s, *e;

	if (a >= b)
		return false;
	s = memchr(p + a, 1, b - a);
	if (!s)
		return false;
	e = memchr(s, 0, p + b - s);
	*rs = ref_page(w, s - p);
	*re = ref_page(w, (e ? e : p + b) - p);
	return true;
}

static uint64_t ref_count(const struct model *m, int w, uint64_t a, uint64_t b)
{
	uint64_t n = 0;

	for (uint64_t i = a; i < b; i++)
		n += m->ref[(uint64_t)w * WIN + i];
	return n;
}

/*
 * The whole set, enumerated run by run with next_run over the entire page
 * space, must equal the reference runs; nothing may exist between windows.
 */
static void model_check(const struct model *m)
{
	uint64_t from = 0, rs, re, want_rs, want_re, total = 0;

	for (int w = 0; w < NWIN; w++) {
		uint64_t off = 0;

		while (ref_next_run(m, w, off, WIN, &want_rs, &want_re)) {
			assert_true(pageset_next_run(m->s, from, UINT64_MAX, &rs, &re));
			assert_int_equal(rs, want_rs);
			assert_int_equal(re, want_re);
			total += re - rs;
			from = re;
			off = want_re - win_base[w];
		}
	}
	assert_false(pageset_next_run(m->s, from, UINT64_MAX, &rs, &re));
	assert_int_equal(pageset_count(m->s), total);

	/* random windows: next_run, count_range, contains */
	for (int q = 0; q < 3; q++) {
		int w = (int)rng_below(NWIN);
		uint64_t a = rng_below(WIN), b = a + rng_below(WIN - a + 1);
		bool got, want;

		want = ref_next_run(m, w, a, b, &want_rs, &want_re);
		got = pageset_next_run(m->s, ref_page(w, a), ref_page(w, b), &rs, &re);
		assert_int_equal(got, want);
		if (got) {
			assert_int_equal(rs, want_rs);
			assert_int_equal(re, want_re);
		}
		if (b - a < 20000)
			assert_int_equal(pageset_count_range(m->s, ref_page(w, a), ref_page(w, b)),
					 ref_count(m, w, a, b));
		assert_int_equal(pageset_contains(m->s, ref_page(w, a)),
				 m->ref[(uint64_t)w * WIN + a]);
	}

	/* count_cells over a random range and cell size (1 page to a whole chunk) */
	{
		static uint64_t cnt[WIN + 1];
		int w = (int)rng_below(NWIN);
		uint64_t a = rng_below(WIN), b = a + rng_below(WIN - a + 1);
		uint64_t cell = 1 + rng_below(rng_below(2) ? 64 : CHUNK), k, cs;

		pageset_count_cells(m->s, ref_page(w, a), ref_page(w, b), cell, cnt);
		for (k = 0, cs = a; cs < b; k++, cs += cell)
			assert_int_equal(cnt[k], ref_count(m, w, cs, cs + cell < b ? cs + cell : b));
	}

	/* count_ranges over up to 16 sorted, disjoint ranges of one window (some empty) */
	{
		struct pageset_range r[16];
		uint64_t cnt[16], at = rng_below(WIN);
		int w = (int)rng_below(NWIN);
		size_t n = rng_below(17), k;

		for (k = 0; k < n; k++) {
			uint64_t s0 = at + rng_below((WIN - at) / 4 + 1);
			uint64_t e0 = s0 + rng_below((WIN - s0) / 2 + 1);

			r[k] = (struct pageset_range){ ref_page(w, s0), ref_page(w, e0) };
			at = e0;
		}
		pageset_count_ranges(m->s, r, n, cnt);
		for (k = 0; k < n; k++)
			assert_int_equal(cnt[k], ref_count(m, w, r[k].start - win_base[w],
							   r[k].end - win_base[w]));
	}
}

static void model_init(struct model *m)
{
	m->s = pageset_new();
	m->ref = calloc(UNIVERSE, 1);
	assert_non_null(m->s);
	assert_non_null(m->ref);
}

static void model_fini(struct model *m)
{
	pageset_free(m->s);
	free(m->ref);
}

/*
 * An offset in [0, WIN] of window w, biased towards roaring chunk edges
 * (page multiples of 2^16, +-2) where containers begin and end.
 */
static uint64_t rand_off(int w)
{
	uint64_t base = win_base[w], first, k, off;
	int64_t jitter;

	switch (rng_below(3)) {
	case 0:
		first = (base + CHUNK - 1) & ~(CHUNK - 1);
		k = rng_below((base + WIN - first) / CHUNK + 1);
		off = first + k * CHUNK - base;
		jitter = (int64_t)rng_below(5) - 2;
		if (jitter < 0 && off < (uint64_t)-jitter)
			return 0;
		off += jitter;
		return off > WIN ? WIN : off;
	case 1:
		return rng_below(2) ? rng_below(64) : WIN - rng_below(64);
	default:
		return rng_below(WIN + 1);
	}
}

/* A range [*a, *b) of window w with a spread of lengths. */
static void rand_range(int w, uint64_t *a, uint64_t *b)
{
	uint64_t len;

	*a = rand_off(w);
	switch (rng_below(4)) {
	case 0:
		len = 1 + rng_below(4);
		break;
	case 1:
		len = rng_below(300);
		break;
	case 2:
		*b = rand_off(w);
		if (*b < *a) {
			uint64_t t = *a;

			*a = *b;
			*b = t;
		}
		return;
	default:
		len = rng_below(WIN);
		break;
	}
	*b = *a + len > WIN ? WIN : *a + len;
}

static void op_move(struct model *m)
{
	int ws = (int)rng_below(NWIN), wd;
	uint64_t a, b, len, d;
	uint8_t *tmp;

	rand_range(ws, &a, &b);
	len = b - a;
	if (rng_below(2)) {
		/* overlapping, in either direction */
		wd = ws;
		d = a + rng_below(2 * len + 1);
		d = d < len ? 0 : d - len;
		if (d > WIN - len)
			d = WIN - len;
	} else {
		wd = (int)rng_below(NWIN);
		d = rng_below(WIN - len + 1);
	}
	tmp = malloc(len ? len : 1);
	assert_non_null(tmp);
	memcpy(tmp, m->ref + (uint64_t)ws * WIN + a, len);
	ref_set(m, ws, a, b, 0);
	memcpy(m->ref + (uint64_t)wd * WIN + d, tmp, len);
	free(tmp);
	pageset_move_range(m->s, ref_page(ws, a), ref_page(ws, b), ref_page(wd, d));
}

/* One random operation on x (sometimes involving y); returns its name. */
static const char *model_step(struct model *x, struct model *y)
{
	int w = (int)rng_below(NWIN);
	uint64_t a, b;

	switch (rng_below(16)) {
	case 0: case 1: case 2:
		/* a burst of single pages: fragments containers */
		a = rand_off(w);
		for (int i = 0, n = 1 + (int)rng_below(200); i < n; i++) {
			uint64_t off = a + rng_below(3 * n + 1);

			if (off >= WIN)
				continue;
			x->ref[(uint64_t)w * WIN + off] = 1;
			pageset_add(x->s, ref_page(w, off));
		}
		return "add";
	case 3: case 4: case 5:
		rand_range(w, &a, &b);
		ref_set(x, w, a, b, 1);
		pageset_add_range(x->s, ref_page(w, a), ref_page(w, b));
		return "add_range";
	case 6: case 7: case 8:
		rand_range(w, &a, &b);
		ref_set(x, w, a, b, 0);
		pageset_remove_range(x->s, ref_page(w, a), ref_page(w, b));
		return "remove_range";
	case 9: case 10: case 11:
		op_move(x);
		return "move_range";
	case 12: case 13:
		rand_range(w, &a, &b);
		memcpy(x->ref + (uint64_t)w * WIN + a, y->ref + (uint64_t)w * WIN + a, b - a);
		pageset_copy_range(x->s, y->s, ref_page(w, a), ref_page(w, b));
		return "copy_range";
	case 14:
		if (rng_below(4) == 0) {
			pageset_free(x->s);
			x->s = pageset_clone(y->s);
			assert_non_null(x->s);
			memcpy(x->ref, y->ref, UNIVERSE);
			return "clone";
		}
		pageset_optimize(x->s);
		return "optimize";
	default:
		if (rng_below(8) == 0) {
			pageset_clear(x->s);
			memset(x->ref, 0, UNIVERSE);
			return "clear";
		}
		/* rare whole-window wipe keeps the run count bounded */
		ref_set(x, w, 0, WIN, 0);
		pageset_remove_range(x->s, ref_page(w, 0), ref_page(w, WIN));
		return "remove_window";
	}
}

/* pageset_xor against the references' byte-wise xor. */
static void check_xor(const struct model *a, const struct model *b)
{
	struct model x = { .s = pageset_xor(a->s, b->s), .ref = malloc(UNIVERSE) };

	assert_non_null(x.s);
	assert_non_null(x.ref);
	for (uint64_t i = 0; i < UNIVERSE; i++)
		x.ref[i] = a->ref[i] ^ b->ref[i];
	model_check(&x);
	model_fini(&x);
}

static void test_random_ops(void **state)
{
	struct model m[2];
	int equal_hits = 0;

	rng_state = test_seed;
	model_init(&m[0]);
	model_init(&m[1]);
	for (int op = 0; op < 3000; op++) {
		int i = (int)rng_below(2);
		const char *what = model_step(&m[i], &m[1 - i]);
		bool same;

		/* cmocka only reports the line: this says which op broke */
		if (getenv("MEVITOP_TEST_VERBOSE"))
			printf("op %d: %s on set %d\n", op, what, i);
		model_check(&m[i]);
		same = !memcmp(m[0].ref, m[1].ref, UNIVERSE);
		assert_int_equal(pageset_equal(m[0].s, m[1].s), same);
		equal_hits += same;
		if (op % 100 == 0)
			check_xor(&m[0], &m[1]);
	}
	/* clone must have made the equal-true path happen at least once */
	assert_true(equal_hits > 0);
	model_check(&m[0]);
	model_check(&m[1]);
	model_fini(&m[0]);
	model_fini(&m[1]);
}

/* ---- fixed cases ---- */

static void test_empty(void **state)
{
	struct pageset *s = pageset_new(), *c;
	uint64_t rs, re;

	assert_non_null(s);
	pageset_free(NULL);
	assert_int_equal(pageset_count(s), 0);
	assert_false(pageset_contains(s, 0));
	assert_false(pageset_next_run(s, 0, UINT64_MAX, &rs, &re));
	assert_int_equal(pageset_count_range(s, 0, UINT64_MAX), 0);
	pageset_add_range(s, 0, 100);
	assert_int_equal(pageset_count_range(s, 50, 50), 0);
	assert_int_equal(pageset_count_range(s, 60, 50), 0);
	assert_false(pageset_next_run(s, 50, 50, &rs, &re));
	pageset_remove_range(s, 0, UINT64_MAX);
	pageset_move_range(s, 0, 100, 50);
	pageset_add_range(s, 10, 10);		/* empty ranges are no-ops */
	pageset_add_range(s, 10, 5);
	assert_int_equal(pageset_count(s), 0);
	c = pageset_clone(s);
	assert_non_null(c);
	assert_true(pageset_equal(s, c));
	pageset_optimize(s);
	assert_true(pageset_bytes(s) < 64);
	pageset_free(c);
	pageset_free(s);
}

/*
 * CRoaring 0.2.66's contains_range() wrongly says yes when the chunk holding
 * the range's last value is absent but a later chunk is present and covers
 * the tail's low bits (and trips an assert when no later chunk exists).
 * Chunks 0, 1 full, 2 absent, 3 full is that shape; the gallop only probes
 * a range ending in chunk 2 from a start that is not chunk-aligned.
 */
static void test_contains_range_regression(void **state)
{
	static const uint64_t bases[] = { 0, UINT64_C(1) << 40, BUCKET - 2 * CHUNK };
	static const uint64_t froms[] = { 0, 1, 2, 5, 1000, CHUNK - 1, CHUNK + 1,
					  2 * CHUNK - 1 };
	struct pageset *s = pageset_new();
	uint64_t rs, re;

	assert_non_null(s);
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		uint64_t b = bases[i];

		pageset_clear(s);
		pageset_add_range(s, b, b + 2 * CHUNK);
		pageset_add_range(s, b + 3 * CHUNK, b + 4 * CHUNK);
		for (size_t j = 0; j < sizeof(froms) / sizeof(froms[0]); j++) {
			assert_true(pageset_next_run(s, b + froms[j], UINT64_MAX, &rs, &re));
			assert_int_equal(rs, b + froms[j]);
			assert_int_equal(re, b + 2 * CHUNK);
		}
		assert_true(pageset_next_run(s, re, UINT64_MAX, &rs, &re));
		assert_int_equal(rs, b + 3 * CHUNK);
		assert_int_equal(re, b + 4 * CHUNK);
		assert_int_equal(pageset_count(s), 3 * CHUNK);

		/* no chunk after the hole: the assert(ie < hlc_sz) shape */
		pageset_remove_range(s, b + 3 * CHUNK, b + 4 * CHUNK);
		for (size_t j = 0; j < sizeof(froms) / sizeof(froms[0]); j++) {
			assert_true(pageset_next_run(s, b + froms[j], UINT64_MAX, &rs, &re));
			assert_int_equal(re, b + 2 * CHUNK);
		}
	}
	pageset_free(s);
}

static void test_bucket_edges(void **state)
{
	struct pageset *s = pageset_new();
	uint64_t rs, re;

	assert_non_null(s);
	/* one run across two bucket edges: reported whole, in one call */
	pageset_add_range(s, BUCKET - 5, 3 * BUCKET + 5);
	assert_true(pageset_next_run(s, 0, UINT64_MAX, &rs, &re));
	assert_int_equal(rs, BUCKET - 5);
	assert_int_equal(re, 3 * BUCKET + 5);
	assert_int_equal(pageset_count(s), 2 * BUCKET + 10);
	assert_int_equal(pageset_count_range(s, BUCKET - 1, 2 * BUCKET + 1), BUCKET + 2);
	/* clipped at both ends */
	assert_true(pageset_next_run(s, 2 * BUCKET + 7, 2 * BUCKET + 9, &rs, &re));
	assert_int_equal(rs, 2 * BUCKET + 7);
	assert_int_equal(re, 2 * BUCKET + 9);
	assert_true(pageset_next_run(s, 0, BUCKET, &rs, &re));
	assert_int_equal(re, BUCKET);
	/* a hole at a bucket edge splits it */
	pageset_remove_range(s, 2 * BUCKET, 2 * BUCKET + 1);
	assert_true(pageset_next_run(s, 0, UINT64_MAX, &rs, &re));
	assert_int_equal(re, 2 * BUCKET);
	assert_true(pageset_next_run(s, re, UINT64_MAX, &rs, &re));
	assert_int_equal(rs, 2 * BUCKET + 1);
	assert_int_equal(re, 3 * BUCKET + 5);
	/* whole-bucket copies and a move of a run spanning buckets */
	struct pageset *d = pageset_new();

	assert_non_null(d);
	pageset_add(d, 4 * BUCKET);	/* inside the copied range: must go */
	pageset_copy_range(d, s, 0, UINT64_MAX);
	assert_true(pageset_equal(d, s));
	pageset_copy_range(d, s, BUCKET, 2 * BUCKET);	/* into itself */
	assert_true(pageset_equal(d, s));
	pageset_move_range(d, BUCKET - 5, 3 * BUCKET + 5, 5 * BUCKET + 1);
	assert_true(pageset_next_run(d, 0, UINT64_MAX, &rs, &re));
	/* shifted by 4 * BUCKET + 6, hole at 2 * BUCKET included */
	assert_int_equal(rs, 5 * BUCKET + 1);
	assert_int_equal(re, 6 * BUCKET + 6);
	assert_true(pageset_next_run(d, re, UINT64_MAX, &rs, &re));
	assert_int_equal(rs, 6 * BUCKET + 7);
	assert_int_equal(re, 7 * BUCKET + 11);
	assert_false(pageset_next_run(d, re, UINT64_MAX, &rs, &re));
	assert_int_equal(pageset_count(d), pageset_count(s));
	pageset_free(d);

	/* removing whole buckets frees them */
	pageset_remove_range(s, 0, UINT64_MAX);
	assert_int_equal(pageset_count(s), 0);
	pageset_optimize(s);
	assert_true(pageset_bytes(s) < 64);
	pageset_free(s);
}

static void test_top_of_range(void **state)
{
	struct pageset *s = pageset_new();
	uint64_t rs, re;

	assert_non_null(s);
	pageset_add(s, UINT64_MAX);
	assert_true(pageset_contains(s, UINT64_MAX));
	assert_int_equal(pageset_count(s), 1);
	/* UINT64_MAX is outside every half-open range */
	assert_int_equal(pageset_count_range(s, 0, UINT64_MAX), 0);
	assert_false(pageset_next_run(s, 0, UINT64_MAX, &rs, &re));
	pageset_remove_range(s, 0, UINT64_MAX);
	assert_true(pageset_contains(s, UINT64_MAX));

	pageset_add_range(s, UINT64_MAX - 10, UINT64_MAX);
	assert_true(pageset_next_run(s, 0, UINT64_MAX, &rs, &re));
	assert_int_equal(rs, UINT64_MAX - 10);
	assert_int_equal(re, UINT64_MAX);

	/* a move that would run off the top drops what does not fit */
	pageset_clear(s);
	pageset_add_range(s, 1000, 1010);
	pageset_move_range(s, 1000, 1010, UINT64_MAX - 4);
	assert_int_equal(pageset_count(s), 4);
	assert_true(pageset_next_run(s, 0, UINT64_MAX, &rs, &re));
	assert_int_equal(rs, UINT64_MAX - 4);
	assert_int_equal(re, UINT64_MAX);
	assert_false(pageset_contains(s, UINT64_MAX));
	pageset_free(s);
}

/* Overlapping moves by hand, both directions, with a checkable pattern. */
static void test_move_overlap(void **state)
{
	struct pageset *s = pageset_new(), *want = pageset_new();

	assert_non_null(s);
	assert_non_null(want);
	/* pages 100..199, every third one, plus a run, moved up by 30 */
	for (uint64_t p = 100; p < 200; p += 3)
		pageset_add(s, p);
	pageset_add_range(s, 150, 170);
	pageset_add(s, 205);	/* inside the destination: must be cleared */
	pageset_add(s, 95);	/* outside both: must stay */
	pageset_move_range(s, 100, 200, 130);
	pageset_add(want, 95);
	for (uint64_t p = 100; p < 200; p += 3)
		pageset_add(want, p + 30);
	pageset_add_range(want, 180, 200);
	assert_true(pageset_equal(s, want));

	/* and back down by 30, across a bucket edge this time */
	pageset_clear(s);
	pageset_clear(want);
	pageset_add_range(s, BUCKET - 10, BUCKET + 10);
	pageset_add(s, BUCKET - 25);	/* in the destination, not the source */
	pageset_move_range(s, BUCKET - 10, BUCKET + 10, BUCKET - 30);
	pageset_add_range(want, BUCKET - 30, BUCKET - 10);
	assert_true(pageset_equal(s, want));
	assert_int_equal(pageset_count(s), 20);
	pageset_free(s);
	pageset_free(want);
}

/* ---- memory and speed ---- */

static double bits_per_page(const struct pageset *s, uint64_t span)
{
	return pageset_bytes(s) * 8.0 / (double)span;
}

static void test_memory_dense_fragmented(void **state)
{
	static const uint64_t bases[] = { 0, BUCKET - MPAGES / 2, UINT64_C(1) << 44 };
	struct pageset *s = pageset_new();
	double bpp;

	assert_non_null(s);
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		uint64_t b = bases[i];

		pageset_clear(s);
		for (uint64_t p = 0; p < MPAGES; p += 2)
			pageset_add(s, b + p);
		assert_int_equal(pageset_count(s), MPAGES / 2);
		bpp = bits_per_page(s, MPAGES);
		printf("every other page of 4Mi at %#" PRIx64 ": %zu bytes, %.4f bits/page\n",
		       b, pageset_bytes(s), bpp);
		assert_true(bpp <= 1.1);
		pageset_optimize(s);
		bpp = bits_per_page(s, MPAGES);
		printf("  after optimize: %zu bytes, %.4f bits/page\n", pageset_bytes(s), bpp);
		assert_true(bpp <= 1.1);
	}

	/*
	 * Worst path: every 64 Ki chunk starts as a short run, so it is a run
	 * container, and then every other page is added one by one.  Roaring
	 * keeps growing the run container (4 bytes per run: 16 bits/page);
	 * the set's automatic compaction must keep it near 1 bit/page
	 * without any explicit pageset_optimize().
	 */
	pageset_clear(s);
	for (uint64_t c = 0; c < MPAGES; c += CHUNK)
		pageset_add_range(s, c, c + 3);
	for (uint64_t p = 0; p < MPAGES; p += 2)
		pageset_add(s, p);
	bpp = bits_per_page(s, MPAGES);
	printf("runs, then every other page added: %zu bytes, %.4f bits/page\n",
	       pageset_bytes(s), bpp);
	assert_true(bpp <= 1.1);

	/* one run, then every other page removed (roaring converts this one) */
	pageset_clear(s);
	pageset_add_range(s, 0, MPAGES);
	for (uint64_t p = 1; p < MPAGES; p += 2)
		pageset_remove_range(s, p, p + 1);
	bpp = bits_per_page(s, MPAGES);
	printf("run then every other page removed: %zu bytes, %.4f bits/page\n",
	       pageset_bytes(s), bpp);
	assert_true(bpp <= 1.1);
	pageset_optimize(s);
	bpp = bits_per_page(s, MPAGES);
	printf("  after optimize: %zu bytes, %.4f bits/page\n", pageset_bytes(s), bpp);
	assert_true(bpp <= 1.1);
	pageset_free(s);
}

static void test_memory_runs(void **state)
{
	struct pageset *s = pageset_new();
	size_t bytes;

	assert_non_null(s);
	pageset_add_range(s, BUCKET - MPAGES / 2, BUCKET + MPAGES / 2);
	bytes = pageset_bytes(s);
	printf("one run of 4Mi pages across a bucket edge: %zu bytes\n", bytes);
	assert_true(bytes < 4096);

	/* the same run page by page: needs the run conversion */
	pageset_clear(s);
	for (uint64_t p = 0; p < MPAGES; p++)
		pageset_add(s, p);
	pageset_optimize(s);
	bytes = pageset_bytes(s);
	printf("one run of 4Mi pages added page by page, optimized: %zu bytes\n", bytes);
	assert_true(bytes < 4096);

	/* sparse: 1000 short runs far apart cost a bounded amount each */
	pageset_clear(s);
	for (uint64_t i = 0; i < 1000; i++)
		pageset_add_range(s, i * 1000003, i * 1000003 + 1 + i % 7);
	pageset_optimize(s);
	bytes = pageset_bytes(s);
	printf("1000 sparse short runs: %zu bytes (%.1f per run)\n", bytes, bytes / 1000.0);
	assert_true(bytes / 1000 < 128);
	pageset_free(s);
}

/*
 * next_run over one 4 Mi-page run must answer in one call without walking
 * the values.  Not a timed assertion: 500 calls finish in milliseconds when
 * the algorithm is logarithmic and would take many seconds if it were not.
 */
static void test_long_run_speed(void **state)
{
	struct pageset *s = pageset_new();
	uint64_t b = BUCKET - 1000, rs, re;
	double t0, t1;

	assert_non_null(s);
	pageset_add_range(s, b, b + MPAGES);
	t0 = now_sec();
	for (int i = 0; i < 500; i++) {
		assert_true(pageset_next_run(s, b + (uint64_t)i, UINT64_MAX, &rs, &re));
		assert_int_equal(rs, b + (uint64_t)i);
		assert_int_equal(re, b + MPAGES);
	}
	t1 = now_sec();
	printf("next_run over a 4Mi-page run: %.1f us per call\n", (t1 - t0) / 500 * 1e6);

	/* moving it is run-based too */
	t0 = now_sec();
	for (int i = 0; i < 50; i++)
		pageset_move_range(s, b + (uint64_t)i * 1000, b + (uint64_t)i * 1000 + MPAGES,
				   b + (uint64_t)(i + 1) * 1000);
	t1 = now_sec();
	printf("move_range of a 4Mi-page run: %.1f us per call\n", (t1 - t0) / 50 * 1e6);
	assert_true(pageset_next_run(s, 0, UINT64_MAX, &rs, &re));
	assert_int_equal(rs, b + 50 * 1000);
	assert_int_equal(re, b + 50 * 1000 + MPAGES);
	pageset_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_contains_range_regression),
		cmocka_unit_test(test_bucket_edges),
		cmocka_unit_test(test_top_of_range),
		cmocka_unit_test(test_move_overlap),
		cmocka_unit_test(test_random_ops),
		cmocka_unit_test(test_memory_dense_fragmented),
		cmocka_unit_test(test_memory_runs),
		cmocka_unit_test(test_long_run_speed),
	};

	return cmocka_run_group_tests_name("pageset", tests, group_setup, NULL);
}
