// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the heatmap's layout (user/ui/ui_maplayout.c) on random processes built
 * through the model: resident pages per mapping (one walk) against model_count, the
 * orders (objects whole, biggest first, ties in address order), folded objects on one
 * line, and the cells' paint against a count per cell.
 *
 * MEVITOP_TEST_SEED=<n> replays a run; the seed in use is always printed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "rng.h"
#include "ui/blockname.h"
#include "ui/ui_maplayout.h"
#include "ui/ui_paint.h"
#include "ui/ui_theme.h"

#define BASE	UINT64_C(0x7f0000000)	/* pages */
#define ROUNDS	200

/* A process of 1 to 40 mappings: anonymous ones and files of 1 to 4 back-to-back segments
 * (one object each), holes between some (a few of a gap line's size), pages resident at random (runs and single pages,
 * across 64 Ki-page containers for the big ones). */
static struct proc *random_proc(void)
{
	struct proc *p = proc_new(1);
	uint64_t at = BASE, n = 1 + rng_under(40), i, k;
	char path[32];

	assert_non_null(p);
	for (i = 0; i < n; i++) {
		uint64_t segs = rng_under(2) ? 1 + rng_under(4) : 1;
		bool file = segs > 1 || rng_under(3) == 0;

		snprintf(path, sizeof(path), "/lib/f%" PRIu64 ".so", i);
		for (k = 0; k < segs; k++) {
			uint64_t len = rng_under(8) ? 1 + rng_under(64) : 1 + rng_under(200000);
			struct mapping_attrs a = { .perms = MP_READ | (k ? MP_WRITE : MP_EXEC),
						   .kind = file ? MK_FILE : MK_ANON,
						   .path = file ? path : NULL };

			assert_int_equal(model_map(p, at, at + len, &a), 0);
			if (rng_under(2))
				model_set_state(p, at + rng_under(len), at + len, PS_RESIDENT);
			for (uint64_t j = rng_under(64); j; j--)
				model_set_page(p, at + rng_under(len), PS_RESIDENT);
			at += len;
		}
		at += rng_under(2) ? 1 + rng_under(1000) : 0;
		if (!rng_under(8))
			at += HM_GAP_MIN_PAGES;		/* a gap line in address order */
	}
	p->ready = true;
	return p;
}

static void free_layout(struct hm_layout *l)
{
	free(l->maps);
	free(l->spare);
	free(l->ranges);
	free(l->counts);
}

static void test_resident_per_mapping(void **state)
{
	(void)state;
	rng_seed("test_maplayout resident");
	for (int r = 0; r < ROUNDS; r++) {
		struct proc *p = random_proc();
		struct hm_layout l = { 0 };

		assert_int_equal(maplayout_collect(&l, p, HF_ALL), 0);
		maplayout_count_resident(&l, p);
		assert_true(l.have_res);
		for (size_t i = 0; i < l.n; i++)
			assert_int_equal(l.maps[i].res,
					 model_count(p, PS_RESIDENT, l.maps[i].start, l.maps[i].end));
		free_layout(&l);
		proc_free(p);
	}
}

static void test_order_keeps_objects_whole(void **state)
{
	(void)state;
	rng_seed("test_maplayout order");
	for (int r = 0; r < ROUNDS; r++) {
		struct proc *p = random_proc();
		struct hm_layout a = { 0 }, l = { 0 };
		uint64_t prev_key = UINT64_MAX, prev_start = 0;
		size_t i = 0, j;

		assert_int_equal(maplayout_collect(&a, p, HF_ALL), 0);
		assert_int_equal(maplayout_collect(&l, p, HF_ALL), 0);
		assert_int_equal(maplayout_order(&l, p, HO_RESIDENT, 0), 0);
		assert_int_equal(l.n, a.n);
		assert_int_equal(l.order, HO_RESIDENT);
		/* Object by object: the same mappings as in address order, whole and in their
		 * own order, keys never growing, equal keys in address order. */
		while (i < l.n) {
			size_t first = SIZE_MAX;
			uint64_t key = 0;

			for (j = 0; j < a.n; j++)
				if (a.maps[j].start == l.maps[i].start)
					first = j;
			assert_int_not_equal(first, SIZE_MAX);
			assert_int_equal(maplayout_object(&a, first), first);
			assert_false(l.maps[i].cont);
			for (j = first; j < a.n && (j == first || a.maps[j].cont); j++, i++) {
				assert_int_equal(l.maps[i].start, a.maps[j].start);
				assert_int_equal(l.maps[i].end, a.maps[j].end);
				assert_int_equal(l.maps[i].gap_pages, 0);
				key += model_count(p, PS_RESIDENT, a.maps[j].start, a.maps[j].end);
			}
			assert_true(key < prev_key || (key == prev_key &&
							 l.maps[i - 1].start > prev_start));
			prev_key = key;
			prev_start = l.maps[i - 1].start;
			/* The next object starts a new one in the address order too. */
			assert_true(i == l.n || !l.maps[i].cont);
		}
		/* Every page still finds its mapping out of address order. */
		for (j = 0; j < 8 && l.n; j++) {
			const struct hm_map *h = &l.maps[rng_under(l.n)];
			uint64_t page = h->start + rng_under(h->end - h->start);
			size_t at = maplayout_find_page(&l, page);

			assert_true(l.maps[at].start <= page && page < l.maps[at].end);
		}
		free_layout(&a);
		free_layout(&l);
		proc_free(p);
	}
}

static void test_folded_object_takes_one_line(void **state)
{
	(void)state;
	rng_seed("test_maplayout fold");
	for (int r = 0; r < ROUNDS; r++) {
		struct proc *p = random_proc();
		struct hm_layout l = { 0 };
		int width = 32 + (int)rng_under(150), cpc = 1 + (int)rng_under(2);
		uint64_t zoom = UINT64_C(1) << rng_under(4), fold;
		size_t o, i, j;

		assert_int_equal(maplayout_collect(&l, p, HF_ALL), 0);
		o = maplayout_object(&l, rng_under(l.n));
		fold = l.maps[o].start;
		l.collapsed = &fold;
		l.ncollapsed = 1;
		maplayout_place(&l, zoom, width, cpc, HL_PACKED);
		for (i = 0; i < l.n; i++) {
			bool in = i >= o && (i == o || (l.maps[i].cont && l.maps[i - 1].collapsed));

			assert_int_equal(l.maps[i].collapsed, in);
			if (!in)
				assert_int_equal(l.maps[i].zoom, zoom);
		}
		/* Its label, cells and separators fit a line, and at half the zoom they would
		 * not (unless that is below the layout's own). */
		for (int half = 0; half < 2; half++) {
			uint64_t z = l.maps[o].zoom >> half, chars = l.maps[o].name_len + 1;

			if (half && z < zoom)
				break;
			for (j = o; j < l.n && (j == o || l.maps[j].cont); j++)
				chars += (j > o) + ((l.maps[j].end - l.maps[j].start + z - 1) / z +
						   (uint64_t)cpc - 1) / (uint64_t)cpc;
			if (!half)
				assert_true(chars <= (uint64_t)width);
			else if (l.maps[o].zoom > zoom)
				assert_true(chars > (uint64_t)width);
		}
		for (j = o; j < l.n && (j == o || l.maps[j].cont); j++) {
			assert_true(l.maps[j].packed);
			assert_int_equal(hm_cells_line(&l, &l.maps[j]), hm_cells_line(&l, &l.maps[o]));
		}
		free_layout(&l);
		proc_free(p);
	}
}

static void test_paint_matches_counts(void **state)
{
	(void)state;
	rng_seed("test_maplayout paint");
	for (int r = 0; r < ROUNDS; r++) {
		struct proc *p = random_proc();
		struct hm_layout l = { 0 };
		int width = 16 * (1 + (int)rng_under(10));
		uint64_t scratch[3 * 2 * 160];
		uint8_t out[2 * 160];
		struct hm_paint pc = { .p = p, .scratch = scratch };
		const struct hm_map *h;

		assert_int_equal(maplayout_collect(&l, p, HF_ALL), 0);
		maplayout_place(&l, UINT64_C(1) << rng_under(12), width, 2, HL_COMPACT);
		h = &l.maps[rng_under(l.n)];
		for (uint64_t row = 0; row < h->nrows && row < 8; row++) {
			paint_row(&pc, &l, h, row, out);
			for (int k = 0; k < l.per_line; k++) {
				uint64_t cs = h->start + (row * l.per_line + k) * h->zoom;
				uint64_t ce = cs + h->zoom < h->end ? cs + h->zoom : h->end;

				if (cs >= h->end) {
					assert_int_equal(out[k], P_BLANK);
					continue;
				}
				assert_int_equal(out[k], paint_counts(ce - cs,
								      model_count(p, PS_RESIDENT, cs, ce),
								      0, 0));
			}
		}
		free_layout(&l);
		proc_free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resident_per_mapping),
		cmocka_unit_test(test_order_keeps_objects_whole),
		cmocka_unit_test(test_folded_object_takes_one_line),
		cmocka_unit_test(test_paint_matches_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
