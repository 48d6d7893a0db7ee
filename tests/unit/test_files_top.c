// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for user/engine/files_keys.c's setters and user/engine/files_top.c: seeded
 * random inserts, page count and kind changes and removals through the setters, checked
 * after each batch against a recount of a plain reference array (totals, per kind) and the
 * table's own pass (fcache_totals, fcache_top_cached) for the largest rows at random k.
 * Then the rebuild rule: changes outside the top never pass over the table again, the top
 * shrinking below the rest does.  MEVITOP_TEST_SEED=<n> replays a run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/files.h"
#include "rng.h"

#define KEYS 3000

struct ref {
	uint64_t dev, ino;
	struct fc_pages p;
	enum fc_kind kind;
	int live;
};

static void free_files(struct files *fs)
{
	struct fkeys *l[] = { &fs->touched, &fs->unnamed, &fs->kinfo };

	for (size_t i = 0; i < sizeof(l) / sizeof(l[0]); i++)
		files_keys_free(l[i]);
	files_top_free(fs);
	fcache_free(fs->fc);
}

static void check(struct files *fs, const struct ref *r, size_t nr)
{
	struct fc_totals want = { 0 }, table;
	struct fc_file *top[100], *truth[100];
	size_t i, k, n, m;

	for (i = 0; i < nr; i++) {
		if (!r[i].live)
			continue;
		want.files++;
		want.pages.cached += r[i].p.cached;
		want.pages.dirty += r[i].p.dirty;
		want.pages.writeback += r[i].p.writeback;
		want.pages.evicted += r[i].p.evicted;
		want.pages.recently_evicted += r[i].p.recently_evicted;
		want.by_kind[r[i].kind] += r[i].p.cached;
	}
	assert_memory_equal(&fs->tot, &want, sizeof(want));
	fcache_totals(fs->fc, &table);
	assert_memory_equal(&table, &want, sizeof(want));
	for (int q = 0; q < 4; q++) {
		k = 1 + rng_under(q == 3 ? 100 : 30);
		n = files_top_get(fs, top, k);
		m = fcache_top_cached(fs->fc, truth, k);
		assert_int_equal(n, m);
		for (i = 0; i < n; i++)
			assert_ptr_equal(top[i], truth[i]);
	}
}

static void set_random(struct files *fs, struct fc_file *f, struct ref *x)
{
	switch (rng_under(3)) {
	case 0:
		/* Few distinct counts: ties, ordered by (dev, ino). */
		x->p.cached = rng_under(4) ? rng_under(50) : rng_under(100000);
		files_set_cached(fs, f, x->p.cached);
		break;
	case 1:
		x->p.dirty = rng_under(10);
		x->p.writeback = rng_under(10);
		x->p.evicted = rng_under(1000);
		x->p.recently_evicted = rng_under(100);
		files_set_counts(fs, f, &x->p);
		break;
	default:
		x->kind = rng_under(FC_KIND_COUNT);
		files_set_kind(fs, f, x->kind);
	}
}

static void test_random_ops(void **state)
{
	struct files fs = { 0 };
	struct ref *r = calloc(KEYS, sizeof(*r));
	int round, k;

	(void)state;
	rng_seed("test_files_top random");
	fs.fc = fcache_new();
	assert_non_null(fs.fc);
	assert_non_null(r);
	for (k = 0; k < KEYS; k++) {
		r[k].dev = rng_under(3) << 20 | rng_under(2);
		r[k].ino = (uint64_t)k * 104729 + rng_under(11);	/* distinct */
	}
	for (round = 0; round < 60; round++) {
		/* Small rounds first: the top built over a table smaller than it (complete). */
		int ops = round < 10 ? 1 + round * 3 : 400;

		for (k = 0; k < ops; k++) {
			struct ref *x = &r[rng_under(round < 10 ? 40 : KEYS)];
			struct fc_file *f;

			if (x->live && rng_under(4) == 0) {
				files_remove(&fs, fcache_find(fs.fc, x->dev, x->ino));
				memset(&x->p, 0, sizeof(x->p));
				x->kind = FC_REGULAR;
				x->live = 0;
				continue;
			}
			f = files_row(&fs, x->dev, x->ino);
			assert_non_null(f);
			x->live = 1;
			set_random(&fs, f, x);
		}
		check(&fs, r, KEYS);
	}
	free_files(&fs);
	free(r);
}

static void test_rebuilds(void **state)
{
	struct files fs = { 0 };
	struct fc_file *top[10], *truth[10], *f;
	uint64_t builds;
	size_t i, n;

	(void)state;
	fs.fc = fcache_new();
	for (i = 0; i < 1000; i++)
		files_set_cached(&fs, files_row(&fs, 8, i + 1), 10 + i);
	assert_int_equal(files_top_get(&fs, top, 10), 10);
	builds = fs.largest.builds;
	assert_int_equal(builds, 1);
	/* Changes below the top, rows rising into it, removals: no pass over the table. */
	for (i = 0; i < 500; i++)
		files_set_cached(&fs, fcache_find(fs.fc, 8, i + 1), i % 7);
	files_set_cached(&fs, fcache_find(fs.fc, 8, 3), 5000);
	files_remove(&fs, fcache_find(fs.fc, 8, 1000));
	for (int q = 0; q < 5; q++) {
		n = files_top_get(&fs, top, 10);
		assert_int_equal(n, fcache_top_cached(fs.fc, truth, 10));
		for (i = 0; i < n; i++)
			assert_ptr_equal(top[i], truth[i]);
	}
	assert_ptr_equal(top[0], fcache_find(fs.fc, 8, 3));
	assert_int_equal(fs.largest.builds, builds);
	/* The largest shrink below rows left out (an eviction of the biggest files): one
	 * pass, and the answer is the table's. */
	for (i = 600; i < 1000; i++)
		if ((f = fcache_find(fs.fc, 8, i)))
			files_set_cached(&fs, f, 1);
	n = files_top_get(&fs, top, 10);
	assert_int_equal(n, fcache_top_cached(fs.fc, truth, 10));
	for (i = 0; i < n; i++)
		assert_ptr_equal(top[i], truth[i]);
	assert_int_equal(fs.largest.builds, builds + 1);
	free_files(&fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_ops),
		cmocka_unit_test(test_rebuilds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
