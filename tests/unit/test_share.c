// SPDX-License-Identifier: GPL-2.0
/*
 * model/share.c and share_figs.c against a reference: pages with random map counts (0: not
 * resident), a pass recorded as spans the way engine/share.c records them (one per
 * mapping, some mappings left out as "known private"), then the figures of every mapping
 * and of random ranges, the classes of every page, and copies; then the recording's section
 * (rec/rec_share.c) round trip, and its decoder fed seeded mutations of it (it must refuse
 * or accept, never crash or overrun: run under ASan).  MEVITOP_TEST_SEED replays.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include "model/model.h"
#include "model/share_figs.h"
#include "rec/rec_share.h"
#include "rng.h"

#define BASE 0x7f0000000ULL
#define N 2048
#define NMAPS 8

static uint64_t count[N];	/* 0: not resident */

/* The pass's accounting of one page, as engine/share.c does it. */
static void account(struct share *s, struct share_span *sp, uint64_t page, uint64_t c)
{
	if (c <= 1) {
		sp->uss++;
		sp->pss += PAGE_SIZE_4K << SHARE_PSS_SHIFT;
		return;
	}
	sp->shared++;
	sp->pss += (PAGE_SIZE_4K << SHARE_PSS_SHIFT) / c;
	share_mark(s, page, c);
}

static void want_range(uint64_t a, uint64_t b, bool read, struct share_figs *w)
{
	uint64_t pss = 0;

	memset(w, 0, sizeof(*w));
	for (uint64_t i = a; i < b; i++) {
		uint64_t c = count[i - BASE];

		if (!c)
			continue;
		if (!read || c == 1) {
			w->uss += PAGE_SIZE_4K;
			pss += PAGE_SIZE_4K << SHARE_PSS_SHIFT;
		} else {
			w->shared += PAGE_SIZE_4K;
			pss += (PAGE_SIZE_4K << SHARE_PSS_SHIFT) / c;
		}
	}
	w->pss = pss >> SHARE_PSS_SHIFT;
}

static bool same_share(const struct share *a, const struct share *b)
{
	int k;

	if (a->n != b->n || a->at_ns != b->at_ns || a->pages_read != b->pages_read ||
	    memcmp(a->spans, b->spans, a->n * sizeof(*a->spans)))
		return false;
	for (k = SHC_TWO; k < SHC_COUNT; k++)
		if (!pageset_equal(a->cls[k], b->cls[k]))
			return false;
	return true;
}

/* Section 8 into got (section 7's copy of s): every page's count as s has it, and its
 * decoder fed seeded mutations (refuse or accept, never crash). */
static void check_counts(const struct share *s, struct share *got)
{
	struct rbuf b = { 0 };
	struct share *fresh;
	struct rcur c;
	char why[128];
	int round;

	assert_true(s->ncounts > 0);	/* the reference's counts reach 12 */
	assert_true(rec_put_share_counts(&b, s));
	assert_false(b.oom);
	assert_int_equal(got->ncounts, 0);
	c = (struct rcur){ b.p, b.p + b.len, false };
	assert_int_equal(rec_get_share_counts(&c, got, why, sizeof(why)), 0);
	assert_true(got->thp_known);
	assert_int_equal(got->thp, s->thp);
	for (uint64_t pg = BASE; pg < BASE + N; pg++)
		assert_int_equal(share_page_count(got, pg), share_page_count(s, pg));
	c = (struct rcur){ b.p, b.p + b.len, false };
	assert_int_equal(rec_get_share_counts(&c, got, why, sizeof(why)), -EBADMSG);	/* twice */
	c = (struct rcur){ b.p, b.p + b.len, false };
	assert_int_equal(rec_get_share_counts(&c, NULL, why, sizeof(why)), -EBADMSG);
	for (round = 0; round < 2000; round++) {
		uint8_t *m = malloc(b.len);
		size_t len = rng_under(4) ? b.len : rng_under(b.len + 1);
		int flips = 1 + rng_under(4), err;

		assert_non_null(m);
		assert_non_null(fresh = share_clone(got));
		fresh->ncounts = 0;
		fresh->thp_known = false;
		memcpy(m, b.p, b.len);
		while (flips--)
			m[rng_under(b.len)] = (uint8_t)rng_u64();
		c = (struct rcur){ m, m + len, false };
		err = rec_get_share_counts(&c, fresh, why, sizeof(why));
		assert_true(err == 0 || err == -EBADMSG);
		assert_true(fresh->ncounts <= s->ncounts);
		share_free(fresh);
		free(m);
	}
	rbuf_free(&b);
}

static void check_section(struct share *s)
{
	struct rbuf b = { 0 };
	struct share *got;
	struct rcur c;
	char why[128];
	int round;

	s->at_ns = 123456789;
	s->thp = 1024;
	s->thp_known = true;
	rec_put_share(&b, s);
	assert_false(b.oom);
	c = (struct rcur){ b.p, b.p + b.len, false };
	assert_int_equal(rec_get_share(&c, &got, why, sizeof(why)), 0);
	assert_true(same_share(s, got));
	check_counts(s, got);
	share_free(got);
	for (round = 0; round < 2000; round++) {
		uint8_t *m = malloc(b.len);
		size_t len = rng_under(4) ? b.len : rng_under(b.len + 1);
		int flips = 1 + rng_under(4), err;

		assert_non_null(m);
		memcpy(m, b.p, b.len);
		while (flips--)
			m[rng_under(b.len)] = (uint8_t)rng_u64();
		c = (struct rcur){ m, m + len, false };
		err = rec_get_share(&c, &got, why, sizeof(why));
		assert_true(err == 0 || err == -EBADMSG);
		share_free(got);
		free(m);
	}
	rbuf_free(&b);
}

static void test_random_pass(void **state)
{
	struct mapping_attrs a = { .perms = MP_READ | MP_WRITE, .kind = MK_FILE };
	struct proc *p = proc_new(1), *c;
	struct share *s = share_new();
	bool read[NMAPS];
	const struct mapping *m;
	uint64_t cut[NMAPS + 1];
	int i, k, round;

	(void)state;
	rng_seed("test_share");
	assert_non_null(p);
	assert_non_null(s);
	for (i = 0; i < N; i++) {
		count[i] = rng_under(3) ? 0 : 1 + rng_under(rng_under(2) ? 2 : 12);
		if (count[i])
			model_set_page(p, BASE + i, PS_RESIDENT);
	}
	for (k = 0; k <= NMAPS; k++)
		cut[k] = BASE + (uint64_t)k * (N / NMAPS);
	for (k = 0; k < NMAPS; k++)
		assert_int_equal(model_map_keep(p, cut[k], cut[k + 1], &a), 0);
	for (k = 0; k < NMAPS; k++) {
		struct share_span *sp;

		read[k] = rng_under(4) != 0;	/* the others: "known private", no span */
		if (!read[k])
			continue;
		assert_non_null(sp = share_add_span(s, cut[k], cut[k + 1]));
		for (uint64_t pg = cut[k]; pg < cut[k + 1]; pg++)
			if (count[pg - BASE])
				account(s, sp, pg, count[pg - BASE]);
	}
	share_finish(s);
	p->share = s;
	for (m = model_first(p), k = 0; m; m = model_next(m), k++) {
		struct share_figs got, want;

		share_mapping(p, m, &got);
		want_range(mapping_start(m), mapping_end(m), read[k], &want);
		assert_int_equal(got.uss, want.uss);
		assert_int_equal(got.shared, want.shared);
		assert_int_equal(got.pss, want.pss);
	}
	for (i = 0; i < N; i++) {
		uint64_t cn = count[i];
		enum share_class want = read[i / (N / NMAPS)] && cn ? share_class_of(cn) :
					SHC_PRIVATE;

		assert_int_equal(share_page_class(s, BASE + i), want);
		if (cn)
			assert_int_equal(share_page_count(s, BASE + i),
					 read[i / (N / NMAPS)] && cn > 1 ? cn : 1);
	}
	/* A range cutting spans: whole spans exact, cut ones pro rata, never more than all nor
	 * more private and shared pages than are resident in the range (seed 435 cut a span
	 * where its resident pages were not: pro rata alone gave more). */
	for (round = 0; round < 200; round++) {
		uint64_t x = BASE + rng_under(N), y = x + rng_under(BASE + N - x) + 1;
		struct share_figs got, all;

		share_range(p, x, y, &got);
		share_range(p, BASE, BASE + N, &all);
		assert_true(got.uss <= all.uss && got.shared <= all.shared && got.pss <= all.pss);
		assert_true(got.uss + got.shared <= model_count(p, PS_RESIDENT, x, y) * PAGE_SIZE_4K);
	}
	/* A copy (a frozen heatmap, a fork) says the same; a reset forgets it. */
	c = proc_clone(p, 2);
	assert_non_null(c);
	assert_non_null(c->share);
	for (m = model_first(p); m; m = model_next(m)) {
		struct share_figs x, y;

		share_mapping(p, m, &x);
		share_mapping(c, model_find(c, mapping_start(m)), &y);
		assert_memory_equal(&x, &y, sizeof(x));
	}
	proc_reset(c);
	assert_null(c->share);
	proc_free(c);
	check_section(s);
	proc_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_pass),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
