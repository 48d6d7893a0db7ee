// SPDX-License-Identifier: GPL-2.0
/*
 * The web view's first-touch answer (out/web_touch.h) from a table built as a replay builds
 * it (stacks_new_replay, no symbolizer) and a model whose resident pages are set here: runs
 * merged within a chunk and the merge window only, the stacks in the 'w' pane's order with
 * each touch pointing at its place there, pages counted from the model, the cut, the JSON.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "out/web_touch.h"
#include "stacks/stacks.h"

#define PID	42
#define BASE	4096ULL			/* pages: chunk-aligned (512 pages a chunk) */
#define NOW	(100ULL * 1000000000ULL)
#define MS	1000000ULL

struct fixture {
	struct stacks *s;
	struct proc *p;
	struct json_frame f;
};

static void add_stack(struct stacks *s, const char *inner, const char *outer)
{
	struct sym_frame fr[2] = { { .addr = 1, .name = (char *)inner },
				   { .addr = 2, .name = (char *)outer } };
	struct stack st = { .nframes = 2, .unwind = UNWIND_FP, .frames = fr };

	assert_int_equal(stacks_append(s, &st), 0);
}

static int setup(void **state)
{
	struct fixture *x = calloc(1, sizeof(*x));
	struct mapping_attrs a = { .perms = MP_READ | MP_WRITE, .kind = MK_ANON };

	assert_non_null(x);
	assert_int_equal(stacks_new_replay(&x->s), 0);
	add_stack(x->s, "zero+0x1", "main+0x2");
	add_stack(x->s, "one+0x1", "main+0x3");
	add_stack(x->s, "two+0x1", "main+0x4");
	x->p = proc_new(PID);
	assert_non_null(x->p);
	x->p->ready = true;
	assert_int_equal(model_map(x->p, BASE, BASE + 2048, &a), 0);
	x->f = (struct json_frame){ .mono_ns = NOW, .procs = &x->p, .n = 1, .nprocs = 1,
				    .stacks = x->s };
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *x = *state;

	stacks_free(x->s);
	proc_free(x->p);
	free(x);
	return 0;
}

static void test_runs_ranks_and_pages(void **state)
{
	struct fixture *x = *state;
	struct stack_touch t[700];
	struct web_tsnap s;
	size_t n = 0, i;

	/* Stack 0, tid 7: pages BASE..BASE+600 one a microsecond (exact mode's per-page
	 * touches): one run up to the chunk's end, another after it. */
	for (i = 0; i < 600; i++)
		t[n++] = (struct stack_touch){ .from = BASE + i, .to = BASE + i + 1, .stack = 0,
					       .tid = 7, .ts = NOW - 5000 * MS + i * 1000 };
	/* Stack 1, tid 8: ten pages; then stack 0 again, tid 7, 200 ms later: its own entry. */
	for (i = 0; i < 10; i++)
		t[n++] = (struct stack_touch){ .from = BASE + 600 + i, .to = BASE + 601 + i,
					       .stack = 1, .tid = 8, .ts = NOW - 3000 * MS };
	t[n++] = (struct stack_touch){ .from = BASE + 610, .to = BASE + 611, .stack = 0, .tid = 7,
				       .ts = NOW - 4800 * MS };
	t[n++] = (struct stack_touch){ .from = BASE + 611, .to = BASE + 612, .stack = 0, .tid = 7,
				       .ts = NOW - 4600 * MS };
	/* Stack 2: a chunk-style range of 300 pages. */
	t[n++] = (struct stack_touch){ .from = BASE + 1024, .to = BASE + 1324, .stack = 2,
				       .tid = 9, .ts = NOW - 1000 * MS };
	assert_int_equal(stacks_set_touches(x->s, PID, t, n), 0);
	model_set_state(x->p, BASE, BASE + 50, PS_RESIDENT);		/* stack 0: 50 + 1 */
	model_set_state(x->p, BASE + 611, BASE + 612, PS_RESIDENT);
	model_set_state(x->p, BASE + 600, BASE + 606, PS_RESIDENT);	/* stack 1: 6 */
	model_set_state(x->p, BASE + 1100, BASE + 1200, PS_RESIDENT);	/* stack 2: 100 */

	assert_int_equal(web_touch_snap(&x->f, PID, &s), 0);
	assert_false(s.cut);
	assert_int_equal(s.ns, 3);
	/* Most resident pages first: table stacks 2, 0, 1. */
	assert_int_equal(s.s[0].idx, 2);
	assert_int_equal(s.s[0].pages, 100);
	assert_int_equal(s.s[0].tid, 9);
	assert_string_equal(s.s[0].frames, "two+0x1 \u2190 main+0x4");
	assert_int_equal(s.s[1].idx, 0);
	assert_int_equal(s.s[1].pages, 51);
	assert_int_equal(s.s[1].ts, NOW - 5000 * MS);
	assert_int_equal(s.s[2].idx, 1);
	assert_int_equal(s.s[2].pages, 6);
	assert_int_equal(s.s[2].tid, 8);
	assert_int_equal(s.n, 6);
	struct { uint64_t from, to; uint32_t stack, tid; uint64_t ts; } want[] = {
		{ BASE, BASE + 512, 1, 7, NOW - 5000 * MS },		/* the chunk's end */
		{ BASE + 512, BASE + 600, 1, 7, NOW - 5000 * MS + 512 * 1000 },
		{ BASE + 600, BASE + 610, 2, 8, NOW - 3000 * MS },
		{ BASE + 610, BASE + 611, 1, 7, NOW - 4800 * MS },
		{ BASE + 611, BASE + 612, 1, 7, NOW - 4600 * MS },	/* 200 ms on */
		{ BASE + 1024, BASE + 1324, 0, 9, NOW - 1000 * MS },
	};
	for (i = 0; i < s.n; i++) {
		assert_int_equal(s.t[i].from, want[i].from);
		assert_int_equal(s.t[i].to, want[i].to);
		assert_int_equal(s.t[i].stack, want[i].stack);
		assert_int_equal(s.t[i].tid, want[i].tid);
		assert_int_equal(s.t[i].ts, want[i].ts);
	}

	struct buf b = { 0 };

	web_touch_json(&s, &b);
	assert_false(b.oom);
	assert_non_null(strstr(b.p, "{\"pid\": 42, \"cut\": false, \"chunk_pages\": 512, "
				    "\"stacks\": [{\"pages\": 100, \"tid\": 9, \"age_ms\": 1000, "
				    "\"unwind\": \"fp\", \"frames\": \"two+0x1 \u2190 main+0x4\"}, "));
	assert_non_null(strstr(b.p, "\"touches\": [4096, 512, 1, 7, 5000, 4608, 88, 1, 7, 4999, "
				    "4696, 10, 2, 8, 3000, "));
	assert_non_null(strstr(b.p, "5120, 300, 0, 9, 1000]}"));
	free(b.p);
	web_touch_snap_free(&s);
}

static void test_no_stacks_no_process_and_the_cut(void **state)
{
	struct fixture *x = *state;
	size_t n = WEB_TOUCH_MAX + 5, i;
	struct stack_touch *t = calloc(n, sizeof(*t));
	struct web_tsnap s;

	assert_int_equal(web_touch_snap(&x->f, PID + 1, &s), -ESRCH);
	web_touch_snap_free(&s);
	x->f.stacks = NULL;
	assert_int_equal(web_touch_snap(&x->f, PID, &s), -ENOENT);
	web_touch_snap_free(&s);
	x->f.stacks = x->s;
	assert_non_null(t);
	for (i = 0; i < n; i++)		/* threads in turn: nothing merges */
		t[i] = (struct stack_touch){ .from = i, .to = i + 1, .tid = (uint32_t)(i & 1),
					     .ts = NOW };
	assert_int_equal(stacks_set_touches(x->s, PID, t, n), 0);
	assert_int_equal(web_touch_snap(&x->f, PID, &s), 0);
	assert_true(s.cut);
	assert_int_equal(s.n, WEB_TOUCH_MAX);
	assert_int_equal(s.ns, 1);
	assert_int_equal(s.s[0].pages, 0);		/* nothing resident down there */
	web_touch_snap_free(&s);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_runs_ranks_and_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_stacks_no_process_and_the_cut, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
