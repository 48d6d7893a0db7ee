// SPDX-License-Identifier: GPL-2.0
/* The web view's "who touched" layer (out/web_touch.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "out/web_touch.h"
#include "stacks/stacks.h"

#define FRAMES_LEN	256		/* the terminal's cursor line's frames[] */
#define CHUNK_SHIFT	(MEVITOP_CHUNK_SHIFT - PAGE_SHIFT_4K)	/* a touch's chunk, in pages */

/* Does t continue run r: the same thread and stack, adjacent, in the same chunk (so a
 * page's touch is found as stacks_touch_at finds it), within the merge window? */
static bool continues(const struct web_touch *r, const struct stack_touch *t)
{
	return r->stack == t->stack && r->tid == t->tid && r->to == t->from &&
	       r->from >> CHUNK_SHIFT == t->from >> CHUNK_SHIFT && t->ts >= r->ts &&
	       t->ts - r->ts < WEB_TOUCH_MERGE_NS;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Most resident pages first, then the earliest (the 'w' pane's order). */
static int by_pages(const void *a, const void *b)
{
	const struct web_tstack *x = a, *y = b;

	if (x->pages != y->pages)
		return x->pages < y->pages ? 1 : -1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The touches of p with a stack, runs merged, their stack the table's index. */
static int copy_touches(struct stacks *st, pid_t pid, struct web_tsnap *out)
{
	const struct stack_touch *t;
	size_t n, i;

	stacks_touches(st, pid, &t, &n);
	for (i = 0; i < n; i++) {
		if (!stacks_get(st, t[i].stack))
			continue;	/* exact mode: its stack is on its way */
		if (out->n && continues(&out->t[out->n - 1], &t[i])) {
			out->t[out->n - 1].to = t[i].to;
			continue;
		}
		if (out->n == WEB_TOUCH_MAX) {
			out->cut = true;
			break;
		}
		if (array_reserve(out->t, out->n, out->cap, 64))
			return -ENOMEM;
		out->t[out->n++] = (struct web_touch){ .from = t[i].from, .to = t[i].to,
						       .stack = t[i].stack, .tid = t[i].tid,
						       .ts = t[i].ts };
	}
	return 0;
}

/* The distinct stacks of out's touches, the pane's order, each touch's stack then an
 * index into them; their figures from p's resident pages now. */
static int rank_stacks(struct stacks *st, const struct proc *p, struct web_tsnap *out)
{
	uint32_t *ids = malloc((out->n ? out->n : 1) * sizeof(*ids)), *rank;
	size_t i, m = 0;

	if (!ids)
		return -ENOMEM;
	for (i = 0; i < out->n; i++)
		ids[i] = out->t[i].stack;
	qsort(ids, out->n, sizeof(*ids), cmp_u32);
	for (i = 0; i < out->n; i++)
		if (!m || ids[m - 1] != ids[i])
			ids[m++] = ids[i];
	out->s = calloc(m ? m : 1, sizeof(*out->s));
	rank = malloc((m ? m : 1) * sizeof(*rank));
	if (!out->s || !rank) {
		free(ids);
		free(rank);
		return -ENOMEM;
	}
	out->ns = m;
	for (i = 0; i < m; i++)
		out->s[i] = (struct web_tstack){ .idx = ids[i], .ts = UINT64_MAX };
	for (i = 0; i < out->n; i++) {
		struct web_touch *t = &out->t[i];
		struct web_tstack *s;

		t->stack = (uint32_t)((uint32_t *)bsearch(&t->stack, ids, m, sizeof(*ids),
							   cmp_u32) - ids);
		s = &out->s[t->stack];
		s->pages += model_count(p, PS_RESIDENT, t->from, t->to);
		if (t->ts < s->ts) {
			s->ts = t->ts;
			s->tid = t->tid;
		}
	}
	qsort(out->s, m, sizeof(*out->s), by_pages);
	for (i = 0; i < m; i++)		/* the table's index to its place in the order */
		rank[(uint32_t *)bsearch(&out->s[i].idx, ids, m, sizeof(*ids), cmp_u32) - ids] =
			(uint32_t)i;
	for (i = 0; i < out->n; i++)
		out->t[i].stack = rank[out->t[i].stack];
	free(ids);
	free(rank);
	return 0;
}

int web_touch_snap(const struct json_frame *f, pid_t pid, struct web_tsnap *out)
{
	const struct proc *p = NULL;
	char frames[FRAMES_LEN];
	size_t i;
	int err;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->mono_ns = f->mono_ns;
	if (!f->stacks)
		return -ENOENT;
	for (i = 0; i < f->n && !p; i++)
		if (f->procs[i]->pid == pid && f->procs[i]->ready)
			p = f->procs[i];
	if (!p)
		return -ESRCH;
	err = copy_touches(f->stacks, pid, out);
	if (!err)
		err = rank_stacks(f->stacks, p, out);
	for (i = 0; !err && i < out->ns; i++) {
		const struct stack *st = stacks_get(f->stacks, out->s[i].idx);

		out->s[i].fp = st->unwind == UNWIND_FP;
		out->s[i].frames = strdup(stacks_format(st, " \u2190 ", frames, sizeof(frames)));
		if (!out->s[i].frames)
			err = -ENOMEM;
	}
	return err;
}

static uint64_t age_ms(const struct web_tsnap *s, uint64_t ts)
{
	return s->mono_ns > ts ? (s->mono_ns - ts) / 1000000 : 0;
}

void web_touch_json(const struct web_tsnap *s, struct buf *b)
{
	size_t i;

	json_buf_put(b, "{\"pid\": %d, \"cut\": %s, \"chunk_pages\": %llu, \"stacks\": [",
		     (int)s->pid, s->cut ? "true" : "false", 1ULL << CHUNK_SHIFT);
	for (i = 0; i < s->ns; i++) {
		json_buf_put(b, "%s{\"pages\": %" PRIu64 ", \"tid\": %u, \"age_ms\": %" PRIu64
			     ", \"unwind\": \"%s\", \"frames\": ", i ? ", " : "", s->s[i].pages,
			     s->s[i].tid, age_ms(s, s->s[i].ts), s->s[i].fp ? "fp" : "ip");
		json_buf_str(b, s->s[i].frames);
		json_buf_put(b, "}");
	}
	json_buf_put(b, "], \"touches\": [");
	for (i = 0; i < s->n; i++)
		json_buf_put(b, "%s%" PRIu64 ", %" PRIu64 ", %u, %u, %" PRIu64, i ? ", " : "",
			     s->t[i].from, s->t[i].to - s->t[i].from, s->t[i].stack, s->t[i].tid,
			     age_ms(s, s->t[i].ts));
	json_buf_put(b, "]}");
}

void web_touch_snap_free(struct web_tsnap *s)
{
	for (size_t i = 0; s->s && i < s->ns; i++)
		free(s->s[i].frames);
	free(s->s);
	free(s->t);
	memset(s, 0, sizeof(*s));
}
