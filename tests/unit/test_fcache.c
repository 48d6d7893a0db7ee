// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for user/model/fcache.c (the file table) and user/kernel/meminfo.c's parser.
 * The table runs thousands of seeded random inserts and removals against a plain array of
 * the keys it should hold; after each batch lookups, counts, totals, the sorted walk and
 * the top-k selection are checked against that reference.  The parser gets real text, then
 * seeded garbage (mutated bytes of it): it must never crash and only ever report what the
 * text holds.  MEVITOP_TEST_SEED=<n> replays a run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/fcache.h"
#include "kernel/meminfo.h"
#include "kernel/rollup.h"
#include "out/json_files_read.h"
#include "rng.h"

#define KEYS 4000

struct ref {
	uint64_t dev, ino, cached;
	int live;
};

static void check(struct fcache *t, const struct ref *r, size_t nr)
{
	size_t i, n, live = 0;
	uint64_t cached = 0;
	struct fc_file **v, *top[16];
	struct fc_totals tot;

	for (i = 0; i < nr; i++) {
		struct fc_file *f = fcache_find(t, r[i].dev, r[i].ino);

		if (!r[i].live) {
			assert_null(f);
			continue;
		}
		assert_non_null(f);
		assert_int_equal(f->pages.cached, r[i].cached);
		live++;
		cached += r[i].cached;
	}
	assert_int_equal(fcache_count(t), live);
	fcache_totals(t, &tot);
	assert_int_equal(tot.files, live);
	assert_int_equal(tot.pages.cached, cached);
	v = fcache_sorted(t, FC_SORT_CACHED, &n);
	assert_int_equal(n, live);
	for (i = 1; i < n; i++)
		assert_true(v[i - 1]->pages.cached >= v[i]->pages.cached);
	n = fcache_top_cached(t, top, 16);
	assert_int_equal(n, live < 16 ? live : 16);
	for (i = 0; i < n; i++)
		assert_ptr_equal(top[i], v[i]);	/* the same order, ties by (dev, ino) */
}

static void test_table_random(void **state)
{
	struct fcache *t = fcache_new();
	struct ref *r = calloc(KEYS, sizeof(*r));
	int round, k;

	(void)state;
	rng_seed("test_fcache table");
	assert_non_null(t);
	for (k = 0; k < KEYS; k++) {
		r[k].dev = rng_under(4) << 20 | rng_under(3);
		r[k].ino = (uint64_t)k * 7919 + rng_under(7);	/* distinct */
	}
	for (round = 0; round < 40; round++) {
		for (k = 0; k < 500; k++) {
			struct ref *x = &r[rng_under(KEYS)];

			if (x->live && rng_under(3) == 0) {
				fcache_remove(t, fcache_find(t, x->dev, x->ino));
				x->live = 0;
			} else {
				struct fc_file *f = fcache_get(t, x->dev, x->ino);

				assert_non_null(f);
				assert_non_null(f->name);	/* "maj:min:ino" until named */
				x->cached = rng_under(5) ? rng_under(100000) : 7;	/* ties too */
				f->pages.cached = x->cached;
				x->live = 1;
			}
		}
		fcache_bump(t);
		check(t, r, KEYS);
	}
	fcache_free(t);
	free(r);
}

static void test_names(void **state)
{
	struct fcache *t = fcache_new();
	struct fc_file *f = fcache_get(t, (254ULL << 8) | 0, 12);
	pid_t pids[] = { 3, 5 };

	(void)state;
	assert_string_equal(f->name, "254:0:12");
	assert_int_equal(f->name_src, FC_NAME_NONE);
	assert_non_null(f->why);
	assert_int_equal(fcache_file_set_name(f, "/a/b", FC_NAME_PATH, NULL), 0);
	assert_string_equal(f->name, "/a/b");
	assert_null(f->why);
	assert_int_equal(fcache_file_set_mapped_by(f, pids, 2), 0);
	assert_int_equal(f->nmapped_by, 2);
	assert_int_equal(fcache_want_pages(t, 1, 1, true), -ENOENT);
	assert_int_equal(fcache_want_pages(t, f->dev, f->ino, true), 0);
	assert_true(f->watched);
	fcache_free(t);
}

static const char MEMINFO[] =
	"MemTotal:       24683584 kB\nMemFree:        22015224 kB\n"
	"MemAvailable:   23719240 kB\nBuffers:            8124 kB\nCached:           883672 kB\n"
	"SwapCached:            0 kB\nShmem:              9356 kB\nAnonPages:        190000 kB\n"
	"Slab:             123456 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n"
	"HugePages_Total:       0\n";

static void test_meminfo(void **state)
{
	struct meminfo mi;
	char buf[sizeof(MEMINFO)];
	int i, j;

	(void)state;
	assert_int_equal(meminfo_parse(MEMINFO, &mi), 0);
	assert_int_equal(mi.mem_total, 24683584ULL * 1024);
	assert_int_equal(mi.cached, 883672ULL * 1024);
	assert_int_equal(mi.buffers, 8124ULL * 1024);
	assert_int_equal(mi.anon_pages, 190000ULL * 1024);
	assert_int_equal(meminfo_parse("Cached: 1 kB\n", &mi), -EINVAL);	/* no MemTotal */
	rng_seed("test_fcache meminfo");
	for (i = 0; i < 20000; i++) {
		memcpy(buf, MEMINFO, sizeof(buf));
		for (j = 0; j < 1 + (int)rng_under(8); j++)
			buf[rng_under(sizeof(buf) - 1)] = (char)rng_under(256);
		buf[sizeof(buf) - 1] = 0;
		if (meminfo_parse(buf, &mi) == 0)
			assert_true(mi.mem_total <= UINT64_MAX / 1024 * 1024);
	}
}

static const char ROLLUP[] =
	"55d0c1a3e000-7ffd2a5f9000 ---p 00000000 00:00 0                          [rollup]\n"
	"Rss:                5120 kB\nPss:                2176 kB\nPss_Dirty:          1024 kB\n"
	"Pss_Anon:            640 kB\nPss_File:           1536 kB\nPss_Shmem:             0 kB\n"
	"Shared_Clean:       3840 kB\nAnonymous:          2048 kB\nSwap:                  0 kB\n";

/* smaps_rollup: the two fields, exact; random damage never crashes or overflows. */
static void test_rollup(void **state)
{
	struct rollup r;
	char buf[sizeof(ROLLUP)];
	int i, j;

	(void)state;
	assert_int_equal(rollup_parse(ROLLUP, &r), 0);
	assert_int_equal(r.pss_anon, 640ULL * 1024);
	assert_int_equal(r.anon, 2048ULL * 1024);
	assert_int_equal(rollup_parse("Rss: 1 kB\n", &r), -EINVAL);
	assert_int_equal(rollup_parse("Pss_Anon: 99999999999999999999 kB\n", &r), -EINVAL);
	rng_seed("test_fcache rollup");
	for (i = 0; i < 20000; i++) {
		memcpy(buf, ROLLUP, sizeof(buf));
		for (j = 0; j < 1 + (int)rng_under(8); j++)
			buf[rng_under(sizeof(buf) - 1)] = (char)rng_under(256);
		buf[sizeof(buf) - 1] = 0;
		if (rollup_parse(buf, &r) == 0)
			assert_true(r.pss_anon <= UINT64_MAX / 1024 * 1024);
	}
}

static const char FILES_TEXT[] =
	"\"memory\": {\"total\": 25275990016, \"free\": 23447994368, \"available\": 2393925632"
	"0, \"anon\": 313098240, \"file\": 647839744, \"shmem\": 9592832, \"kernel\": 767320064, "
	"\"swap_total\": 0, \"swap_used\": 0, \"accounted\": 959565440, \"cached\": 640032768}, "
	"\"files\": [{\"path\": \"/usr/lib/a\\\"b.so\", \"name_source\": \"path\", \"pages\": "
	"{\"cached\": 25315, \"dirty\": 0}, \"memcg\": null}, {\"path\": \"memfd:x\", \"pages\":"
	" {\"cached\": 7}}], \"files_omitted\": {\"files\": 3}";

/* The page cache members read back (recordings, mevitop report): exact on what
 * json_files_text writes; random damage never crashes or reads past the text. */
static void test_files_brief(void **state)
{
	struct files_brief b;
	char buf[sizeof(FILES_TEXT)];
	int i, j;

	(void)state;
	assert_int_equal(json_files_brief(FILES_TEXT, &b), 0);
	assert_true(b.have_mem);
	assert_int_equal(b.mem.total, 25275990016ULL);
	assert_int_equal(b.mem.accounted, 959565440ULL);
	assert_int_equal(b.mem.file, 647839744ULL);
	assert_int_equal(b.n, 2);
	assert_string_equal(b.top[0].path, "/usr/lib/a\"b.so");
	assert_int_equal(b.top[0].cached, 25315);
	assert_string_equal(b.top[1].path, "memfd:x");
	assert_int_equal(json_files_brief("", &b), -ENOENT);
	assert_int_equal(json_files_brief(NULL, &b), -ENOENT);
	rng_seed("test_fcache files_brief");
	for (i = 0; i < 20000; i++) {
		memcpy(buf, FILES_TEXT, sizeof(buf));
		for (j = 0; j < 1 + (int)rng_under(8); j++)
			buf[rng_under(sizeof(buf) - 1)] = (char)rng_under(256);
		buf[rng_under(sizeof(buf))] = 0;	/* cut short anywhere */
		buf[sizeof(buf) - 1] = 0;
		if (json_files_brief(buf, &b) == 0)
			assert_true(b.n <= FILES_BRIEF_TOP);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_random),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_rollup),
		cmocka_unit_test(test_files_brief),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
