// SPDX-License-Identifier: GPL-2.0
/*
 * The page model against a trivial reference: one array slot per page holding "mapped?",
 * permissions and state.  Seeded random map / unmap / remap / protect / set-state / scan
 * operations; after each one the layout and every page must agree, and the mappings must
 * never overlap.  MEVITOP_TEST_SEED replays a run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "model/model.h"

#define BASE 0x7f0000000ULL	/* page number: a realistic user address */
#define N 512

struct ref {
	bool mapped[N];
	uint32_t perms[N];
	enum page_state state[N];
};

static unsigned seed;

static uint64_t rnd(uint64_t n)
{
	return n ? (uint64_t)rand_r(&seed) % n : 0;
}

static void check(const struct proc *p, const struct ref *r, const char *op)
{
	uint64_t mapped = 0, counts[PS_COUNT] = { 0 }, totals[PS_COUNT];
	const struct mapping *m, *prev = NULL;
	enum page_state seen[N];
	int i;

	for (i = 0; i < N; i++)
		seen[i] = PS_COUNT;	/* "not mapped" */
	assert_int_equal(itree_verify(&p->maps), 0);
	for (m = model_first(p); m; m = model_next(m)) {
		if (prev && mapping_start(m) < mapping_end(prev))
			fail_msg("%s: mappings overlap", op);
		for (uint64_t pg = mapping_start(m); pg < mapping_end(m); pg++) {
			i = pg - BASE;
			assert_true(i >= 0 && i < N);
			if (!r->mapped[i])
				fail_msg("%s: page %d mapped in the model only", op, i);
			if (r->perms[i] != m->perms)
				fail_msg("%s: page %d perms %x, want %x", op, i, m->perms, r->perms[i]);
			seen[i] = PS_NOT_RESIDENT;
		}
		mapped += mapping_end(m) - mapping_start(m);
		prev = m;
	}
	for (i = 0; i < N; i++) {
		enum page_state s = model_page_state(p, BASE + i);

		if (r->mapped[i] && seen[i] == PS_COUNT)
			fail_msg("%s: page %d mapped in the reference only", op, i);
		if (!r->mapped[i] && s != PS_NOT_RESIDENT)
			fail_msg("%s: unmapped page %d has state %d", op, i, s);
		if (r->mapped[i] && s != r->state[i])
			fail_msg("%s: page %d state %d, want %d", op, i, s, r->state[i]);
		if (r->mapped[i])
			counts[r->state[i]]++;
	}
	assert_int_equal(mapped, p->mapped_pages);
	model_totals(p, totals);
	assert_int_equal(totals[PS_RESIDENT], counts[PS_RESIDENT]);
	assert_int_equal(totals[PS_SWAPPED], counts[PS_SWAPPED]);
	assert_int_equal(totals[PS_UNTRACKED], counts[PS_UNTRACKED]);
}

/* A free run of `len` pages in the reference, or -1. */
static int free_run(const struct ref *r, int len)
{
	int tries, s, i;

	for (tries = 0; tries < 50; tries++) {
		s = rnd(N - len + 1);
		for (i = s; i < s + len && !r->mapped[i]; i++)
			;
		if (i == s + len)
			return s;
	}
	return -1;
}

static void op_map(struct proc *p, struct ref *r)
{
	int s = rnd(N), len = 1 + rnd(64), i;
	uint32_t perms = MP_READ | (rnd(2) ? MP_WRITE : 0);
	struct mapping_attrs a = { .perms = perms, .kind = MK_ANON };

	if (s + len > N)
		len = N - s;
	assert_int_equal(model_map(p, BASE + s, BASE + s + len, &a), 0);
	for (i = s; i < s + len; i++) {
		r->mapped[i] = true;
		r->perms[i] = perms;
		r->state[i] = PS_NOT_RESIDENT;
	}
}

static void op_unmap(struct proc *p, struct ref *r)
{
	int s = rnd(N), len = 1 + rnd(64), i;

	if (s + len > N)
		len = N - s;
	model_unmap(p, BASE + s, BASE + s + len);
	for (i = s; i < s + len; i++)
		r->mapped[i] = false;
}

static void op_state(struct proc *p, struct ref *r)
{
	int s = rnd(N), len = 1 + rnd(32), i;
	enum page_state st = rnd(PS_COUNT);

	if (s + len > N)
		len = N - s;
	/* The engine only sets states inside mappings (it clips scans to them). */
	for (i = s; i < s + len; i++) {
		if (!r->mapped[i])
			continue;
		if (rnd(2))
			model_set_page(p, BASE + i, st);
		else
			model_set_state(p, BASE + i, BASE + i + 1, st);
		r->state[i] = st;
	}
}

static void op_protect(struct proc *p, struct ref *r)
{
	int s = rnd(N), len = 1 + rnd(64), i;
	uint32_t perms = rnd(2) ? MP_READ : MP_READ | MP_WRITE;

	if (s + len > N)
		len = N - s;
	/* mprotect only succeeds on a fully mapped range. */
	for (i = s; i < s + len; i++)
		if (!r->mapped[i])
			return;
	assert_int_equal(model_protect(p, BASE + s, BASE + s + len, perms), 0);
	for (i = s; i < s + len; i++)
		r->perms[i] = perms;
}

static void op_remap(struct proc *p, struct ref *r)
{
	int old = rnd(N), old_len = 1 + rnd(32), new_len = 1 + rnd(48), dst, i;
	struct ref before = *r;

	if (old + old_len > N)
		return;
	for (i = old; i < old + old_len; i++)
		if (!r->mapped[i])
			return;	/* mremap needs a mapped source */
	/* One mapping's worth: the kernel refuses a source spanning several VMAs when growing;
	 * the model handles it, the reference below does too. */
	if (rnd(3) == 0 && new_len >= old_len) {
		/* grow in place if the space after is free */
		for (i = old + old_len; i < old + new_len; i++)
			if (i >= N || r->mapped[i])
				return;
		assert_int_equal(model_remap(p, BASE + old, old_len, BASE + old, new_len, false), 0);
		for (i = old + old_len; i < old + new_len; i++) {
			r->mapped[i] = true;
			r->perms[i] = r->perms[old + old_len - 1];
			r->state[i] = PS_NOT_RESIDENT;
		}
		return;
	}
	/* move: to a free place (after removing the source, the kernel may reuse it, but the
	 * ranges never overlap) */
	for (i = old; i < old + old_len; i++)
		r->mapped[i] = false;
	dst = free_run(r, new_len);
	*r = before;
	if (dst < 0 || (dst < old + old_len && old < dst + new_len))
		return;
	assert_int_equal(model_remap(p, BASE + old, old_len, BASE + dst, new_len, false), 0);
	for (i = old; i < old + old_len; i++)
		r->mapped[i] = false;
	for (i = 0; i < new_len; i++) {
		if (i < old_len) {
			r->mapped[dst + i] = true;
			r->perms[dst + i] = before.perms[old + i];
			r->state[dst + i] = before.state[old + i];
		} else {
			r->mapped[dst + i] = true;
			r->perms[dst + i] = before.perms[old + old_len - 1];
			r->state[dst + i] = PS_NOT_RESIDENT;
		}
	}
}

static void op_scan(struct proc *p, struct ref *r)
{
	struct scan_run runs[N];
	int s = rnd(N), len = 1 + rnd(64), i, n = 0;
	uint64_t changed = 0, want = 0;

	if (s + len > N)
		len = N - s;
	for (i = s; i < s + len; i++)
		if (!r->mapped[i])
			return;	/* the engine scans within mappings */
	for (i = s; i < s + len; i++) {
		enum page_state st = rnd(3) == 0 ? PS_NOT_RESIDENT : rnd(4) ? PS_RESIDENT : PS_SWAPPED;

		if (st != r->state[i])
			want++;
		r->state[i] = st;
		if (st == PS_NOT_RESIDENT)
			continue;
		if (n && runs[n - 1].end == BASE + i && runs[n - 1].state == st)
			runs[n - 1].end++;
		else
			runs[n++] = (struct scan_run){ BASE + i, BASE + i + 1, st };
	}
	changed = model_apply_scan(p, BASE + s, BASE + s + len, runs, n, 0);
	assert_int_equal(changed, want);
}

static void test_random_ops(void **state)
{
	struct proc *p = proc_new(1);
	struct ref *r = calloc(1, sizeof(*r));
	int step;

	(void)state;
	assert_non_null(p);
	assert_non_null(r);
	for (step = 0; step < 20000; step++) {
		const char *name;

		switch (rnd(6)) {
		case 0: op_map(p, r); name = "map"; break;
		case 1: op_unmap(p, r); name = "unmap"; break;
		case 2: op_state(p, r); name = "state"; break;
		case 3: op_protect(p, r); name = "protect"; break;
		case 4: op_remap(p, r); name = "remap"; break;
		default: op_scan(p, r); name = "scan"; break;
		}
		check(p, r, name);
		if (step % 5000 == 4999) {
			/* fork copies everything */
			struct proc *c = proc_clone(p, 2);

			assert_non_null(c);
			check(c, r, "clone");
			proc_free(c);
		}
	}
	proc_free(p);
	free(r);
}

static int put_run(uint64_t s, uint64_t e, enum page_state st, void *arg)
{
	uint64_t *v = arg;

	v[0]++;
	v[1] += e - s;
	assert_true(st != PS_NOT_RESIDENT);
	return 0;
}

static void test_runs_and_heat(void **state)
{
	struct proc *p = proc_new(1);
	struct mapping_attrs a = { .perms = MP_READ | MP_WRITE, .kind = MK_ANON };
	uint64_t v[2] = { 0, 0 };

	(void)state;
	model_map(p, BASE, BASE + 100, &a);
	model_set_state(p, BASE + 10, BASE + 20, PS_RESIDENT);
	model_set_state(p, BASE + 20, BASE + 25, PS_SWAPPED);
	model_set_state(p, BASE + 30, BASE + 31, PS_UNTRACKED);
	model_runs(p, BASE, BASE + 100, put_run, v);
	assert_int_equal(v[0], 3);
	assert_int_equal(v[1], 16);
	heat_add(&p->heat, BASE + 5, 1.0f, 0);
	heat_add(&p->heat, BASE + 5, 1.0f, 0);
	assert_true(heat_range(&p->heat, BASE, BASE + 16, 0) > 1.99f);
	/* One half-life later, half is left. */
	float h = heat_range(&p->heat, BASE, BASE + 16, HEAT_HALF_LIFE_NS);

	assert_true(h > 0.99f && h < 1.01f);
	assert_true(heat_range(&p->heat, BASE + 16, BASE + 100, 0) == 0.0f);
	proc_free(p);
}

/* model_heat_per_mapping (one pass, for snapshots) equals heat_range mapping by mapping, blocks
 * that straddle two mappings included. */
static void test_heat_per_mapping(void **state)
{
	struct proc *p = proc_new(1);
	struct mapping_attrs a = { .perms = MP_READ | MP_WRITE, .kind = MK_ANON };
	const struct mapping *m;
	uint64_t at = BASE;
	float got[40];
	size_t n = 0, k;

	(void)state;
	for (k = 0; k < 40; k++) {
		uint64_t len = 1 + rnd(70);

		model_map(p, at, at + len, &a);
		at += len + (rnd(3) ? 0 : rnd(40));	/* adjacent, or a gap */
	}
	for (k = 0; k < 300; k++)
		heat_add(&p->heat, BASE + rnd(at - BASE + 32), 1 + rnd(4), rnd(3) * 1000000000ULL);
	n = model_count_maps(p);
	assert_int_equal(model_heat_per_mapping(p, 2500000000ULL, got, n), 0);
	for (k = 0, m = model_first(p); m; m = model_next(m), k++) {
		float want = heat_range(&p->heat, mapping_start(m), mapping_end(m), 2500000000ULL);

		assert_true(got[k] > want - 1e-3f * (1 + want) && got[k] < want + 1e-3f * (1 + want));
	}
	assert_int_equal(k, n);
	proc_free(p);
}

int main(void)
{
	const char *env = getenv("MEVITOP_TEST_SEED");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_ops),
		cmocka_unit_test(test_runs_and_heat),
		cmocka_unit_test(test_heat_per_mapping),
	};

	seed = env ? strtoul(env, NULL, 0) : (unsigned)time(NULL);
	printf("test_model: seed %u (MEVITOP_TEST_SEED=%u replays it)\n", seed, seed);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
