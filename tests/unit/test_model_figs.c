// SPDX-License-Identifier: GPL-2.0
/*
 * struct proc's cached figures (model_layout_bytes, model_anon_resident, proc_bytes,
 * model_totals, model_kinds) against a fresh walk after every one of a seeded run of random
 * mutations, through every mutator the model has.  The figures are asked for after each
 * operation, so a mutator that forgot to move the generation leaves a stale figure that the
 * walk catches.  The walk counts pages one at a time (model_page_state), not with the range
 * counts the cache uses.  The same mutations, and the heat's, keep model_shown's key
 * honest: after each, a process whose key is unchanged shows what it showed (a digest of
 * its mappings, page runs and heat), since a web stream copies nothing for such a key.
 * MEVITOP_TEST_SEED replays a run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include "model/model.h"
#include "model/share.h"
#include "rng.h"

#define BASE 0x7f0000000ULL	/* page number: a realistic user address */
#define N 768			/* pages the operations play in */
#define OPS 4000

static const char *const paths[] = { NULL, "[heap]", "[stack]", "/usr/lib/libc.so.6",
				     "/memfd:pool (deleted)", "/var/lib/data/a-much-longer-name" };

struct walk {
	size_t layout_bytes;
	uint64_t anon_resident;
};

static const enum page_state tracked[] = { PS_RESIDENT, PS_SWAPPED, PS_UNTRACKED };

static struct walk fresh_walk(const struct proc *p)
{
	struct walk w = { 0 };
	const struct mapping *m;

	for (m = model_first(p); m; m = model_next(m)) {
		w.layout_bytes += sizeof(*m) + (m->path ? strlen(m->path) + 1 : 0);
		if (m->kind != MK_ANON && m->kind != MK_HEAP && m->kind != MK_STACK)
			continue;
		for (uint64_t pg = mapping_start(m); pg < mapping_end(m); pg++)
			w.anon_resident += model_page_state(p, pg) == PS_RESIDENT;
	}
	for (size_t i = 0; i < sizeof(tracked) / sizeof(tracked[0]); i++)
		w.layout_bytes += pageset_bytes(p->set[tracked[i]]);
	return w;
}

static void check(const struct proc *p, int op, int step)
{
	struct walk w = fresh_walk(p);
	uint64_t totals[PS_COUNT], mapped = 0;
	size_t want_bytes = sizeof(*p) + (size_t)p->heat.cap * sizeof(struct heat_entry) +
			    w.layout_bytes + share_bytes(p->share) +
			    (p->kinds ? sizeof(*p->kinds) + p->kinds->cap * sizeof(p->kinds->top[0]) : 0);

	if (model_layout_bytes(p) != w.layout_bytes)
		fail_msg("step %d (op %d): layout bytes %zu, a walk says %zu", step, op,
			 model_layout_bytes(p), w.layout_bytes);
	if (model_anon_resident(p) != w.anon_resident)
		fail_msg("step %d (op %d): anon resident %" PRIu64 ", a walk says %" PRIu64, step,
			 op, model_anon_resident(p), w.anon_resident);
	assert_int_equal(proc_bytes(p), want_bytes);
	model_totals(p, totals);
	for (size_t i = 0; i < sizeof(tracked) / sizeof(tracked[0]); i++) {
		if (totals[tracked[i]] != pageset_count(p->set[tracked[i]]))
			fail_msg("step %d (op %d): %" PRIu64 " pages %s, the set has %" PRIu64,
				 step, op, totals[tracked[i]], model_page_state_name(tracked[i]),
				 pageset_count(p->set[tracked[i]]));
		mapped += totals[tracked[i]];
	}
	assert_int_equal(mapped + totals[PS_NOT_RESIDENT], p->mapped_pages);
}

#define TOP 3

/* model_kinds against a walk page by page, and its top list against a stable sort of all
 * mappings by resident pages (insertion sort: equal ones keep address order). */
static void check_kinds(const struct proc *p, int op, int step)
{
	uint64_t pages[MK_COUNT][PS_COUNT] = { { 0 } };
	struct model_top all[N], t;
	const struct proc_kinds *k = model_kinds(p, TOP);
	const struct mapping *m;
	size_t n = 0, i, j;

	assert_non_null(k);
	for (m = model_first(p); m; m = model_next(m)) {
		uint64_t res = 0;

		for (uint64_t pg = mapping_start(m); pg < mapping_end(m); pg++) {
			enum page_state st = model_page_state(p, pg);

			pages[m->kind][PS_NOT_RESIDENT]++;
			if (st != PS_NOT_RESIDENT)
				pages[m->kind][st]++;
			res += st == PS_RESIDENT;
		}
		if (res)
			all[n++] = (struct model_top){ m, res };
	}
	if (memcmp(pages, k->pages, sizeof(pages)))
		fail_msg("step %d (op %d): pages per kind differ from a walk's", step, op);
	for (i = 1; i < n; i++)
		for (j = i, t = all[i]; j > 0 && all[j - 1].resident < t.resident; j--)
			all[j] = all[j - 1], all[j - 1] = t;
	assert_int_equal(k->ntop, n < TOP ? n : TOP);
	for (i = 0; i < k->ntop; i++)
		if (k->top[i].m != all[i].m || k->top[i].resident != all[i].resident)
			fail_msg("step %d (op %d): top %zu is %p (%" PRIu64 "), want %p (%" PRIu64 ")",
				 step, op, i, (const void *)k->top[i].m, k->top[i].resident,
				 (const void *)all[i].m, all[i].resident);
}

static void range(uint64_t *s, uint64_t *e)
{
	uint64_t a = rng_under(N), len = 1 + rng_under(N / 6);

	*s = BASE + a;
	*e = BASE + (a + len < N ? a + len : N);
}

static void attrs(struct mapping_attrs *a)
{
	size_t k = rng_under(sizeof(paths) / sizeof(paths[0]));
	uint32_t perms = MP_READ | (rng_under(2) ? MP_WRITE : 0);

	memset(a, 0, sizeof(*a));
	a->path = paths[k];
	if (rng_under(4) == 0)
		perms |= MP_SHARED;
	a->perms = perms;
	a->kind = map_kind_classify(a->path, perms, false);
	a->ino = a->path ? 100 + k : 0;
	a->offset = a->path ? rng_under(16) << 12 : 0;
}

static void mutate(struct proc **pp, int op)
{
	struct proc *p = *pp;
	struct mapping_attrs a;
	struct scan_run runs[4];
	struct mapping *m;
	uint64_t s, e, t;
	size_t n = 0;

	range(&s, &e);
	switch (op) {
	case 0:
		attrs(&a);
		model_map(p, s, e, &a);
		break;
	case 1:
		attrs(&a);
		model_map_keep(p, s, e, &a);
		break;
	case 2:
		model_unmap(p, s, e);
		break;
	case 3:
		t = BASE + rng_under(N);
		if (t + (e - s) <= BASE + N && (t >= e || t + (e - s) <= s) && model_find(p, s))
			model_remap(p, s, e - s, t, e - s, rng_under(4) == 0);
		break;
	case 4:
		model_protect(p, s, e, MP_READ | (rng_under(2) ? MP_WRITE : 0));
		break;
	case 5:
		model_set_flags(p, s, e, rng_under(2) ? MF_THP : 0, rng_under(2) ? MF_LOCKED : 0);
		break;
	case 6:
		model_set_state(p, s, e, (enum page_state)rng_under(PS_COUNT));
		break;
	case 7:
		model_set_page(p, s, (enum page_state)rng_under(PS_COUNT));
		break;
	case 8:
		/* A scan: runs in ascending order within [s, e) (len <= e - t keeps them in). */
		for (t = s; t < e && n < 4; n++) {
			uint64_t len = 1 + rng_under(e - t);

			runs[n] = (struct scan_run){ t, t + len,
						     rng_under(2) ? PS_RESIDENT : PS_SWAPPED };
			t += len + rng_under(3);
		}
		model_apply_scan(p, s, e, runs, n, rng_under(2) ? 1000 : 0);
		break;
	case 9:
		if ((m = model_find(p, s)) && mapping_start(m) > BASE + 8)
			model_grow_down(p, m, mapping_start(m) - 1 - rng_under(8));
		break;
	case 10:
		if ((m = model_find(p, s)) && mapping_end(m) + 8 < BASE + N)
			model_set_end(p, m, mapping_start(m) + 1 + rng_under(mapping_end(m) -
								     mapping_start(m) + 8));
		break;
	case 11:
		if (rng_under(20) == 0)
			model_clear_layout(p);
		break;
	case 12:
		if (rng_under(40) == 0)
			proc_reset(p);
		break;
	case 13:
		if (rng_under(20) == 0) {
			struct proc *c = proc_clone(p, p->pid + 1);

			assert_non_null(c);
			check(c, op, -1);
			proc_free(p);
			*pp = c;
		}
		break;
	}
}

static void test_figs_follow_mutations(void **state)
{
	struct proc *p = proc_new(42);

	(void)state;
	rng_seed("test_figs_follow_mutations");
	assert_non_null(p);
	check(p, -1, -1);
	for (int i = 0; i < OPS; i++) {
		int op = (int)rng_under(14);

		mutate(&p, op);
		check(p, op, i);
		if (rng_under(2))	/* asked for or not: both must stay right */
			check_kinds(p, op, i);
	}
	proc_free(p);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ULL;
}

static int digest_run(uint64_t start, uint64_t end, enum page_state st, void *arg)
{
	uint64_t *h = arg;

	*h = mix(mix(mix(*h, start), end), st);
	return 0;
}

/* What a view shows of p, time apart: mappings, their page runs, the heat entries (summed
 * one by one: the table's order is no part of it). */
static uint64_t shown_digest(const struct proc *p)
{
	uint64_t h = 0xcbf29ce484222325ULL, heat = 0;
	const struct mapping *m;

	for (m = model_first(p); m; m = model_next(m)) {
		h = mix(mix(mix(mix(h, mapping_start(m)), mapping_end(m)), m->perms), m->flags);
		h = mix(mix(mix(h, m->offset), m->kind), m->path ? strlen(m->path) + 1 : 0);
		for (const char *c = m->path; c && *c; c++)
			h = mix(h, (unsigned char)*c);
		model_runs(p, mapping_start(m), mapping_end(m), digest_run, &h);
	}
	for (uint32_t i = 0; i < p->heat.cap; i++) {
		const struct heat_entry *e = &p->heat.slots[i];
		uint32_t v;

		memcpy(&v, &e->value, sizeof(v));
		if (e->block)
			heat += mix(mix(mix(1, e->block), v), e->stamp_ns);
	}
	return mix(h, heat);
}

static void heat_mutate(struct proc *p, int op, uint64_t *now)
{
	uint64_t s, e;

	range(&s, &e);
	*now += rng_under(3) * 500000000ULL;
	if (op == 14)
		heat_add(&p->heat, s, 1.0f + rng_under(4), *now);
	else if (op == 15)
		heat_prune(&p->heat, *now);
	else
		heat_set(&p->heat, s, (float)rng_under(8), *now);
}

static void test_shown_follows_mutations(void **state)
{
	struct proc *p = proc_new(42);
	uint64_t now = 1000000000ULL;
	int same = 0;

	(void)state;
	rng_seed("test_shown_follows_mutations");
	assert_non_null(p);
	for (int i = 0; i < OPS; i++) {
		int op = (int)rng_under(17);
		struct proc_shown k0, k1;
		uint64_t d0;

		if (op == 13)
			continue;	/* a clone is another process: the web keys by pid first */
		d0 = shown_digest(p);

		model_shown(p, &k0);
		if (op < 14)
			mutate(&p, op);
		else
			heat_mutate(p, op, &now);
		model_shown(p, &k1);
		if (!model_shown_same(&k0, &k1))
			continue;
		same++;
		if (shown_digest(p) != d0)
			fail_msg("step %d (op %d): what the process shows changed, its key did not",
				 i, op);
	}
	assert_true(same > 0);		/* some operations changed nothing, and said so */
	proc_free(p);
}

/* The cache is not a second copy that can go stale by being read: an unchanged process
 * gives the same figures, and model_changed (a decoder patching page sets itself) makes
 * the next call walk again. */
static void test_model_changed(void **state)
{
	struct mapping_attrs a = { .perms = MP_READ | MP_WRITE, .kind = MK_ANON };
	struct proc *p = proc_new(7);

	(void)state;
	assert_non_null(p);
	assert_int_equal(model_map(p, BASE, BASE + 64, &a), 0);
	model_set_state(p, BASE, BASE + 10, PS_RESIDENT);
	assert_int_equal(model_anon_resident(p), 10);
	assert_int_equal(model_anon_resident(p), 10);
	pageset_add_range(p->set[PS_RESIDENT], BASE + 10, BASE + 20);
	model_changed(p);
	assert_int_equal(model_anon_resident(p), 20);
	check(p, -1, -1);
	proc_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figs_follow_mutations),
		cmocka_unit_test(test_model_changed),
		cmocka_unit_test(test_shown_follows_mutations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
