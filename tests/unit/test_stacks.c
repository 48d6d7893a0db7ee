// SPDX-License-Identifier: GPL-2.0
/*
 * The first-touch table and the symbolizer, on this very process: its model is built from
 * /proc/self/maps, and its own functions are the truth a name is checked against.  Then
 * seeded random stack records (any frame count, garbage and real addresses, ranges whose
 * pages come and go) under ASan: no crash, and the invariants hold after each batch.
 * MEVITOP_TEST_SEED replays a run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "kernel/procfs.h"
#include "stacks/stacks.h"

static unsigned seed;

static uint64_t rnd(uint64_t n)
{
	return n ? (uint64_t)rand_r(&seed) % n : 0;
}

/* A function whose name the symbolizer must find (noinline: it has its own extent). */
__attribute__((noinline)) int stacks_test_known_function(int x)
{
	return x * 3 + 1;
}

#define ANON_EXEC 0x10000000ULL	/* page number of a fake JIT region (not mapped for real) */
#define DELETED 0x10001000ULL	/* ... and of a deleted file's mapping */

static struct proc *self_model(void)
{
	struct proc *p = proc_new(getpid());
	char line[512], path[256], perms[5];
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(p);
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		struct mapping_attrs a = { 0 };

		path[0] = 0;
		if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %255[^\n]", &start, &end, perms, &off,
			   &maj, &min, &ino, path) < 7)
			continue;
		a.offset = off;
		a.ino = ino;
		a.dev_major = maj;
		a.dev_minor = min;
		a.perms = (perms[0] == 'r' ? MP_READ : 0) | (perms[1] == 'w' ? MP_WRITE : 0) |
			  (perms[2] == 'x' ? MP_EXEC : 0);
		a.kind = !strcmp(path, "[vdso]") ? MK_VDSO : path[0] == '/' ? MK_FILE : MK_ANON;
		a.path = path[0] == '/' ? path : NULL;
		if (!strcmp(path, "[vsyscall]"))
			continue;
		assert_int_equal(model_map(p, start >> 12, end >> 12, &a), 0);
	}
	fclose(f);
	struct mapping_attrs jit = { .perms = MP_READ | MP_EXEC, .kind = MK_ANON };
	struct mapping_attrs gone = { .perms = MP_READ | MP_EXEC, .kind = MK_FILE,
				      .path = "/nonexistent/wl (deleted)", .ino = 1 };

	assert_int_equal(model_map(p, ANON_EXEC, ANON_EXEC + 16, &jit), 0);
	assert_int_equal(model_map(p, DELETED, DELETED + 16, &gone), 0);
	p->ready = true;	/* modelled, as the engine says once the layout is read */
	return p;
}

static struct ev_stack record(uint64_t addr, uint64_t ip)
{
	struct ev_stack ev = { .kind = EV_STACK, .nframes = 1, .tgid = getpid(),
			       .tid = getpid(), .addr = addr, .ts = 1 };

	ev.frames[0] = ip;
	return ev;
}

/* The stack that first touched the range holding addr's page. */
static const struct stack *stack_at(struct stacks *s, const struct proc *p, uint64_t addr)
{
	const struct stack_touch *t = stacks_touch_at(s, p->pid, addr >> 12);

	return t ? stacks_get(s, t->stack) : NULL;
}

static void test_names(void **state)
{
	struct proc *p = self_model();
	struct stacks *s;
	uint64_t fn = (uint64_t)(uintptr_t)&stacks_test_known_function;
	uint64_t a = ANON_EXEC << 12, d = DELETED << 12;
	const struct stack *st;
	char want[64];
	struct ev_stack ev;

	(void)state;
	assert_int_equal(stacks_new(1000, 0, false, &s), 0);
	ev = record(a + 0x100, fn + 4);
	stacks_on_event(s, p, &ev);
	st = stack_at(s, p, a + 0x100);
	assert_non_null(st);
	assert_string_equal(st->frames[0].name, "stacks_test_known_function+0x4");
	assert_string_equal(st->frames[0].func, "stacks_test_known_function");
	assert_int_equal(st->frames[0].func_start, fn);
	assert_string_equal(st->frames[0].module, "test_stacks");
	assert_non_null(st->frames[0].file);
	assert_true(strstr(st->frames[0].file, "test_stacks.c") != NULL);
	/* Both records fall in one range (the fake JIT mapping's part of its chunk): the first
	 * toucher keeps it while the range has resident pages; none is resident here, so the
	 * second takes over. */
	ev = record(a + 0x5000, a + 0x5010);
	stacks_on_event(s, p, &ev);
	st = stack_at(s, p, a + 0x100);
	snprintf(want, sizeof(want), "[anon:0x%" PRIx64 "]", a + 0x5010);
	assert_string_equal(st->frames[0].name, want);
	ev = record(d + 0x100, d + 0x20);
	stacks_on_event(s, p, &ev);
	st = stack_at(s, p, d + 0x100);
	assert_string_equal(st->frames[0].name, "[unknown]");
	assert_null(st->frames[0].func);
	stacks_free(s);
	proc_free(p);
}

static void test_first_toucher_keeps_resident_range(void **state)
{
	struct proc *p = self_model();
	uint64_t fn = (uint64_t)(uintptr_t)&stacks_test_known_function;
	uint64_t a = ANON_EXEC << 12;
	struct stack_share *v;
	struct stacks *s;
	struct ev_stack ev;
	size_t n;

	(void)state;
	assert_int_equal(stacks_new(1000, 0, false, &s), 0);
	ev = record(a, fn + 4);
	stacks_on_event(s, p, &ev);
	model_set_state(p, ANON_EXEC, ANON_EXEC + 5, PS_RESIDENT);
	ev = record(a + 0x6000, a + 0x10);
	stacks_on_event(s, p, &ev);
	assert_int_equal(stacks_shares(s, p, ANON_EXEC, ANON_EXEC + 16, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].pages, 5);
	assert_string_equal(v[0].stack->frames[0].func, "stacks_test_known_function");
	free(v);
	stacks_free(s);
	proc_free(p);
}

/* A process not modelled yet (its layout not read): its records wait and are applied, in
 * order, once it is ready; those of one that goes before that are dropped. */
static void test_early_records_wait_for_the_layout(void **state)
{
	struct proc *p = self_model();
	uint64_t fn = (uint64_t)(uintptr_t)&stacks_test_known_function;
	uint64_t a = ANON_EXEC << 12;
	struct stacks *s;
	struct ev_stack ev;

	(void)state;
	assert_int_equal(stacks_new(1000, 0, false, &s), 0);
	p->ready = false;
	ev = record(a, fn + 4);
	stacks_on_event(s, p, &ev);
	ev = record(a + 0x1000, a + 0x10);	/* same range: the first keeps it */
	stacks_on_event(s, p, &ev);
	assert_null(stack_at(s, p, a));
	/* Its layout read and scanned: the first record's pages are resident by then. */
	model_set_state(p, ANON_EXEC, ANON_EXEC + 2, PS_RESIDENT);
	p->ready = true;
	stacks_on_layout(s, p);
	assert_non_null(stack_at(s, p, a));
	assert_string_equal(stack_at(s, p, a)->frames[0].func, "stacks_test_known_function");
	assert_int_equal(stacks_stats(s)->dropped, 0);
	stacks_forget(s, p->pid);
	p->ready = false;
	stacks_on_event(s, p, &ev);
	stacks_forget(s, p->pid);	/* exited before its layout was read */
	p->ready = true;
	stacks_on_layout(s, p);
	assert_null(stack_at(s, p, a));
	assert_int_equal(stacks_stats(s)->dropped, 1);
	stacks_free(s);
	proc_free(p);
}

/* Calls getpid through the PLT (this test is built as PIE, without -fno-plt); the
 * volatile add keeps the call from being a tail jump. */
static volatile int plt_sink;
__attribute__((noinline)) int stacks_test_calls_getpid(void)
{
	int r = getpid();

	plt_sink++;
	return r;
}

/* The call instruction in stacks_test_calls_getpid: its return address, its target. */
static void find_plt_call(uint64_t *ra, uint64_t *stub)
{
	const unsigned char *c = (const unsigned char *)(uintptr_t)&stacks_test_calls_getpid;
	int32_t rel;
	int i;

	for (i = 0; i < 64; i++) {
		if (c[i] != 0xe8)
			continue;
		memcpy(&rel, c + i + 1, sizeof(rel));
		*ra = (uint64_t)(uintptr_t)(c + i + 5);
		*stub = *ra + (int64_t)rel;
		return;
	}
	fail_msg("no call in stacks_test_calls_getpid");
}

/*
 * A function entered through the PLT: a fault at its first instruction has the caller's
 * return address on top of the stack, after a call of getpid@plt, not of getpid itself; the
 * PLT entry's GOT slot says it leads there, so the caller is named.  And a fault in the PLT
 * entry itself is named after where it leads.
 */
static void test_plt(void **state)
{
	struct proc *p = self_model();
	uint64_t callee = (uint64_t)(uintptr_t)&getpid, ra = 0, stub = 0;	/* find_plt_call fails the test or sets both */
	const struct stack *st;
	struct stacks *s;
	struct ev_stack ev;

	(void)state;
	stacks_test_calls_getpid();	/* binds the GOT slot (lazy binding) */
	find_plt_call(&ra, &stub);
	assert_true(stub != callee);	/* the call goes through the PLT */
	assert_int_equal(stacks_new(1000, 0, false, &s), 0);
	ev = record(ANON_EXEC << 12, callee);
	ev.top = ra;
	stacks_on_event(s, p, &ev);
	st = stack_at(s, p, ANON_EXEC << 12);
	assert_non_null(st);
	assert_int_equal(st->nframes, 2);
	assert_int_equal(st->frames[0].func_start, callee);
	assert_string_equal(st->frames[1].func, "stacks_test_calls_getpid");
	ev = record((DELETED << 12) + 0x100, stub);
	ev.top = ra;
	stacks_on_event(s, p, &ev);
	st = stack_at(s, p, (DELETED << 12) + 0x100);
	assert_non_null(st);
	assert_true(strstr(st->frames[0].name, "getpid@plt") != NULL);
	assert_int_equal(st->nframes, 2);
	assert_string_equal(st->frames[1].func, "stacks_test_calls_getpid");
	stacks_free(s);
	proc_free(p);
}

/* A random address: garbage, in some mapping, or in the known function. */
static uint64_t random_addr(const struct proc *p)
{
	const struct mapping *m;
	size_t k;

	switch (rnd(4)) {
	case 0:
		return ((uint64_t)rand_r(&seed) << 32) | rand_r(&seed);
	case 1:
		return (uint64_t)(uintptr_t)&stacks_test_known_function + rnd(64);
	default:
		k = rnd(model_count_maps(p));
		for (m = model_first(p); m && k; m = model_next(m))
			k--;
		return m ? (mapping_start(m) << 12) + rnd((mapping_end(m) - mapping_start(m)) << 12)
			 : 0;
	}
}

static void check_invariants(struct stacks *s, const struct proc *p)
{
	const struct mapping *m;

	for (m = model_first(p); m; m = model_next(m)) {
		uint64_t sum = 0, prev = UINT64_MAX;
		struct stack_share *v;
		size_t n, i;

		assert_int_equal(stacks_shares(s, p, mapping_start(m), mapping_end(m), &v, &n), 0);
		for (i = 0; i < n; i++) {
			assert_true(v[i].pages > 0 && v[i].pages <= prev);
			assert_true(v[i].stack->nframes >= 1);
			prev = v[i].pages;
			sum += v[i].pages;
		}
		assert_true(sum <= model_count(p, PS_RESIDENT, mapping_start(m), mapping_end(m)));
		free(v);
	}
}

/* The folded output the plain way, as its format says: every mapping's shares, each made a
 * line ("comm;outer;...;inner", function names, ';' and ' ' inside a name made '_'), and
 * lines of the same text summed, in order of first appearance.  Quadratic, and the truth. */
static char *folded_reference(struct stacks *s, struct proc *p)
{
	char **lines = NULL, *out = NULL;
	uint64_t *pages = NULL;
	size_t n = 0, i, len = 0;
	const struct mapping *m;
	FILE *f;

	for (m = model_first(p); m; m = model_next(m)) {
		struct stack_share *sh;
		size_t nsh, j;

		assert_int_equal(stacks_shares(s, p, mapping_start(m), mapping_end(m), &sh, &nsh),
				 0);
		for (j = 0; j < nsh; j++) {
			char *line = NULL;
			size_t ll = 0;
			FILE *lf = open_memstream(&line, &ll);

			fputs(p->comm, lf);
			for (int k = sh[j].stack->nframes - 1; k >= 0; k--) {
				const struct sym_frame *fr = &sh[j].stack->frames[k];
				const char *c = fr->func ? fr->func : fr->name;

				fputc(';', lf);
				for (; *c; c++)
					fputc(*c == ';' || *c == ' ' ? '_' : *c, lf);
			}
			fclose(lf);
			for (i = 0; i < n && strcmp(lines[i], line); i++)
				;
			if (i == n) {
				lines = realloc(lines, (n + 1) * sizeof(*lines));
				pages = realloc(pages, (n + 1) * sizeof(*pages));
				lines[n] = line;
				pages[n++] = 0;
			} else {
				free(line);
			}
			pages[i] += sh[j].pages;
		}
		free(sh);
	}
	f = open_memstream(&out, &len);
	for (i = 0; i < n; i++) {
		fprintf(f, "%s %" PRIu64 "\n", lines[i], pages[i]);
		free(lines[i]);
	}
	fclose(f);
	free(lines);
	free(pages);
	return out;
}

static void check_folded(struct stacks *s, struct proc *p)
{
	char *got = NULL, *want = folded_reference(s, p);
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);

	assert_int_equal(stacks_write_folded(s, &p, 1, f), 0);
	fclose(f);
	assert_string_equal(got, want);
	free(got);
	free(want);
}

static void test_random_records(void **state)
{
	struct proc *p = self_model();
	uint64_t fn = (uint64_t)(uintptr_t)&stacks_test_known_function;
	struct stacks *s;
	int round, i, k;

	(void)state;
	assert_int_equal(stacks_new(1000, 0, false, &s), 0);
	for (round = 0; round < 40; round++) {
		for (i = 0; i < 100; i++) {
			struct ev_stack ev = { .kind = EV_STACK, .tgid = p->pid, .tid = rnd(1 << 22),
					       .ts = rnd(1ULL << 40), .top = random_addr(p) };

			ev.nframes = rnd(5) ? rnd(MEVITOP_STACK_DEPTH + 1) : rand_r(&seed) & 0xffff;
			for (k = 0; k < MEVITOP_STACK_DEPTH; k++)
				ev.frames[k] = random_addr(p);
			ev.addr = random_addr(p);
			stacks_on_event(s, rnd(50) ? p : NULL, &ev);
			if (!rnd(10)) {
				uint64_t pg = random_addr(p) >> 12;

				model_set_state(p, pg, pg + rnd(600), rnd(2) ? PS_RESIDENT
									    : PS_NOT_RESIDENT);
			}
		}
		check_invariants(s, p);
		check_folded(s, p);
		/* A name in the known function's extent is always its name. */
		for (uint32_t j = 0; stacks_get(s, j); j++) {
			const struct stack *st = stacks_get(s, j);

			for (k = 0; k < st->nframes; k++) {
				const struct sym_frame *f = &st->frames[k];
				uint64_t look = k ? f->addr - 1 : f->addr;

				if (f->func && look >= fn && look < fn + 8)
					assert_string_equal(f->func, "stacks_test_known_function");
			}
		}
	}
	assert_true(stacks_stats(s)->samples == 4000);
	stacks_forget(s, p->pid);
	assert_null(stacks_touch_at(s, p->pid, ANON_EXEC));
	stacks_free(s);
	proc_free(p);
}

#define EXACT_MAP 0x10100000ULL	/* page number of a fake anonymous mapping, 2 chunks */
#define EXACT_PAGES 1024

/*
 * Exact mode: each first touch takes the stack of its thread's fault on its page, whether
 * the stack came first (the usual order) or after (a late drain), and a touch stands for its
 * page alone; a page touched anew changes hands.  Checked page by page against a reference
 * array, with seeded random touches by three threads (each thread's stack has its own
 * frame: the function + tid).
 */
static void test_exact_pages(void **state)
{
	struct proc *p = self_model();
	uint64_t fn = (uint64_t)(uintptr_t)&stacks_test_known_function;
	struct mapping_attrs anon = { .perms = MP_READ | MP_WRITE, .kind = MK_ANON };
	uint32_t ref[EXACT_PAGES] = { 0 };
	struct stack_share *v;
	struct stacks *s;
	uint64_t ts = 1000, sum;
	size_t n, i;
	int k;

	(void)state;
	assert_int_equal(model_map(p, EXACT_MAP, EXACT_MAP + EXACT_PAGES, &anon), 0);
	assert_int_equal(stacks_new(1000, 0, true, &s), 0);
	for (k = 0; k < 20000; k++) {
		uint32_t tid = 1 + rnd(3);
		/* Runs (sequential touches by one thread) as well as scattered pages. */
		uint64_t pg = rnd(4) ? (k / 7 * 5 + tid) % EXACT_PAGES : rnd(EXACT_PAGES);
		struct ev_stack ev = record((EXACT_MAP + pg) << 12 | rnd(4096), fn + tid);
		bool late = !rnd(8);

		ev.tid = tid;
		ev.ts = ++ts;
		if (!rnd(20)) {		/* a fault that is no first touch: never asked for */
			stacks_on_event(s, p, &ev);
			continue;
		}
		if (!late)
			stacks_on_event(s, p, &ev);
		stacks_on_first_touch(s, p, tid, ev.addr & ~4095ULL, ++ts);
		if (late)
			stacks_on_event(s, p, &ev);
		model_set_page(p, EXACT_MAP + pg, PS_RESIDENT);
		ref[pg] = tid;
		if (!rnd(50)) {		/* freed: not resident, its first toucher still known */
			uint64_t f = rnd(EXACT_PAGES);

			model_set_state(p, EXACT_MAP + f, EXACT_MAP + f + 1 + rnd(8),
					PS_NOT_RESIDENT);
		}
	}
	for (i = 0; i < EXACT_PAGES; i++) {
		const struct stack_touch *t = stacks_touch_at(s, p->pid, EXACT_MAP + i);
		char want[64];

		if (!ref[i]) {
			assert_null(t);
			continue;
		}
		assert_non_null(t);
		assert_int_equal(t->tid, ref[i]);
		snprintf(want, sizeof(want), "stacks_test_known_function+0x%x", ref[i]);
		assert_string_equal(stacks_get(s, t->stack)->frames[0].name, want);
	}
	assert_int_equal(stacks_shares(s, p, EXACT_MAP, EXACT_MAP + EXACT_PAGES, &v, &n), 0);
	for (i = 0, sum = 0; i < n; i++)
		sum += v[i].pages;
	assert_int_equal(sum, model_count(p, PS_RESIDENT, EXACT_MAP, EXACT_MAP + EXACT_PAGES));
	assert_true(n <= 3);
	free(v);
	assert_int_equal(stacks_stats(s)->joined, stacks_stats(s)->first_touches);
	assert_int_equal(stacks_stats(s)->unique, 3);
	stacks_free(s);
	proc_free(p);
}

int main(void)
{
	const char *env = getenv("MEVITOP_TEST_SEED");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_first_toucher_keeps_resident_range),
		cmocka_unit_test(test_random_records),
		cmocka_unit_test(test_exact_pages),
		cmocka_unit_test(test_early_records_wait_for_the_layout),
		cmocka_unit_test(test_plt),
	};

	seed = env ? strtoul(env, NULL, 0) : (unsigned)time(NULL);
	fprintf(stderr, "test_stacks: MEVITOP_TEST_SEED=%u\n", seed);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
