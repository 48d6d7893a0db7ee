// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "procfs.h"
#include "stacks/stacks.h"
#include "stacks/unwind_check.h"

#define CHUNK_PAGES (1ULL << (MEVITOP_CHUNK_SHIFT - PAGE_SHIFT_4K))

/* One process's first touches, sorted by chunk. */
struct stacks_proc {
	pid_t pid;
	struct stack_touch *t;
	size_t n, cap;
};

struct stacks {
	struct symbolizer *sym;
	struct stack **tab;
	size_t ntab, captab;
	struct stacks_proc *procs;
	size_t nprocs, capprocs;
	struct stacks_stats st;
};

int stacks_new(uint64_t interval_ms, uint64_t sample_period, struct stacks **out)
{
	struct stacks *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	err = symbolizer_new(&s->sym);
	if (err) {
		free(s);
		return err;
	}
	s->st.interval_ms = interval_ms;
	s->st.sample_period = sample_period;
	*out = s;
	return 0;
}

static void stack_free(struct stack *st)
{
	uint16_t i;

	for (i = 0; i < st->nframes; i++)
		sym_frame_clear(&st->frames[i]);
	free(st->frames);
	free(st);
}

void stacks_free(struct stacks *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->ntab; i++)
		stack_free(s->tab[i]);
	free(s->tab);
	for (i = 0; i < s->nprocs; i++)
		free(s->procs[i].t);
	free(s->procs);
	symbolizer_free(s->sym);
	free(s);
}

const struct stacks_stats *stacks_stats(struct stacks *s)
{
	return &s->st;
}

const struct stack *stacks_get(struct stacks *s, uint32_t idx)
{
	return idx < s->ntab ? s->tab[idx] : NULL;
}

static struct stacks_proc *find_proc(struct stacks *s, pid_t pid, bool create)
{
	size_t i;

	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	if (!create || array_reserve(s->procs, s->nprocs, s->capprocs, 8))
		return NULL;
	memset(&s->procs[s->nprocs], 0, sizeof(s->procs[0]));
	s->procs[s->nprocs].pid = pid;
	return &s->procs[s->nprocs++];
}

void stacks_forget(struct stacks *s, pid_t pid)
{
	struct stacks_proc *sp = s ? find_proc(s, pid, false) : NULL;

	if (!s)
		return;
	if (!sp)
		return;
	free(sp->t);
	*sp = s->procs[--s->nprocs];
}

static bool in_exec_mapping(const struct proc *p, uint64_t addr)
{
	const struct mapping *m = model_find(p, addr >> PAGE_SHIFT_4K);

	return m && (m->perms & MP_EXEC);
}

static uint64_t hash_str(uint64_t h, const char *str)
{
	for (; *str; str++)
		h = (h ^ (unsigned char)*str) * 0x100000001b3ULL;	/* FNV-1a */
	return (h ^ 0xff) * 0x100000001b3ULL;
}

static bool same_stack(const struct stack *a, const struct stack *b)
{
	uint16_t i;

	if (a->hash != b->hash || a->nframes != b->nframes || a->unwind != b->unwind)
		return false;
	for (i = 0; i < a->nframes; i++)
		if (strcmp(a->frames[i].name, b->frames[i].name))
			return false;
	return true;
}

/* A return address the chain may name: in executable code, right after a call, and for a
 * direct call, a call of `callee` (the function it returns from; 0: unknown). */
static bool return_address_ok(const struct proc *p, uint64_t ra, uint64_t callee)
{
	uint64_t target;

	if (!in_exec_mapping(p, ra) || !unwind_call_precedes(p, ra, &target))
		return false;
	return !target || !callee || target == callee;
}

/*
 * Names the trustworthy part of ev's frames into st.  The kernel's frames are
 * ip, [rbp+8], [[rbp]+8], ...: frame i+1 is frame i's caller only if frame i's function set
 * up %rbp as its frame.  A function that did not (a leaf) still has its return address on
 * top of the stack (ev->top); after it the %rbp chain continues with frames[1].
 */
static int name_frames(struct stacks *s, const struct proc *p, const struct ev_stack *ev,
		       struct stack *st)
{
	uint16_t nk = ev->nframes > MEVITOP_STACK_DEPTH ? MEVITOP_STACK_DEPTH : ev->nframes;
	uint16_t next = 1;	/* the kernel frame that would be the current one's caller */
	int err;

	st->frames = calloc(MEVITOP_STACK_DEPTH, sizeof(*st->frames));
	if (!st->frames)
		return -ENOMEM;
	if (!nk) {
		st->frames[0].name = strdup("[unknown]");
		st->nframes = 1;
		return st->frames[0].name ? 0 : -ENOMEM;
	}
	err = symbolizer_name(s->sym, p, ev->frames[0], false, &st->frames[0]);
	st->nframes = 1;
	while (!err && st->nframes < MEVITOP_STACK_DEPTH) {
		const struct sym_frame *cur = &st->frames[st->nframes - 1];
		uint64_t a;

		if (unwind_frame_set_up(p, cur->func_start, cur->addr)) {
			if (next >= nk)
				break;
			a = ev->frames[next++];
		} else if (st->nframes == 1 && ev->top) {
			a = ev->top;	/* a leaf: its caller's return address is on top */
		} else {
			break;
		}
		if (!return_address_ok(p, a, cur->func_start))
			break;
		err = symbolizer_name(s->sym, p, a, true, &st->frames[st->nframes]);
		if (!err)
			st->nframes++;
	}
	st->unwind = st->nframes > 1 ? UNWIND_FP : UNWIND_IP;
	return err;
}

/* The table index of ev's stack, interned; -ENOMEM or -ENOSPC. */
static int intern(struct stacks *s, const struct proc *p, const struct ev_stack *ev)
{
	struct stack *st = calloc(1, sizeof(*st));
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;
	int err;

	if (!st)
		return -ENOMEM;
	err = name_frames(s, p, ev, st);
	if (err) {
		stack_free(st);
		return err;
	}
	for (i = 0; i < st->nframes; i++)
		h = hash_str(h, st->frames[i].name);
	st->hash = h + st->unwind;
	for (i = 0; i < s->ntab; i++) {
		if (same_stack(s->tab[i], st)) {
			stack_free(st);
			s->tab[i]->samples++;
			return i;
		}
	}
	if (s->ntab >= STACKS_MAX || array_reserve(s->tab, s->ntab, s->captab, 64)) {
		stack_free(st);
		return -ENOSPC;
	}
	st->samples = 1;
	s->tab[s->ntab] = st;
	s->st.unique++;
	return s->ntab++;
}

/* Index of the first touch with from >= page. */
static size_t lower_bound(const struct stacks_proc *sp, uint64_t page)
{
	size_t lo = 0, hi = sp->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (sp->t[mid].from < page)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The touch whose range holds page: ranges lie inside one chunk, so it starts in page's. */
static struct stack_touch *touch_holding(struct stacks_proc *sp, uint64_t page)
{
	size_t i;

	for (i = lower_bound(sp, page & ~(CHUNK_PAGES - 1)); i < sp->n && sp->t[i].from <= page;
	     i++)
		if (page < sp->t[i].to)
			return &sp->t[i];
	return NULL;
}

void stacks_on_event(struct stacks *s, const struct proc *p, const struct ev_stack *ev)
{
	uint64_t page = ev->addr >> PAGE_SHIFT_4K, chunk = page & ~(CHUNK_PAGES - 1);
	struct stack_touch t = { .tid = ev->tid, .ts = ev->ts, .addr = ev->addr }, *old;
	const struct mapping *m = p ? model_find(p, page) : NULL;
	struct stacks_proc *sp;
	size_t at;
	int idx;

	s->st.samples++;
	if (!m || p->exited) {
		s->st.dropped++;
		return;
	}
	t.from = mapping_start(m) > chunk ? mapping_start(m) : chunk;
	t.to = mapping_end(m) < chunk + CHUNK_PAGES ? mapping_end(m) : chunk + CHUNK_PAGES;
	idx = intern(s, p, ev);
	sp = idx < 0 ? NULL : find_proc(s, p->pid, true);
	if (!sp) {
		s->st.dropped++;
		return;
	}
	t.stack = idx;
	if (s->tab[idx]->unwind == UNWIND_IP)
		s->st.ip_only++;
	old = touch_holding(sp, page);
	if (old) {
		/* The range's first toucher stays, unless nothing of it is resident any more
		 * (freed and touched again).  This record precedes its own fault in the ring,
		 * so the model does not count that page yet. */
		if (!model_count(p, PS_RESIDENT, old->from, old->to)) {
			size_t i = old - sp->t;

			memmove(old, old + 1, (sp->n - i - 1) * sizeof(*old));
			sp->n--;
		} else {
			return;
		}
	}
	if (array_reserve(sp->t, sp->n, sp->cap, 64)) {
		s->st.dropped++;
		return;
	}
	at = lower_bound(sp, t.from);
	memmove(&sp->t[at + 1], &sp->t[at], (sp->n - at) * sizeof(*sp->t));
	sp->t[at] = t;
	sp->n++;
}

const struct stack_touch *stacks_touch_at(struct stacks *s, pid_t pid, uint64_t page)
{
	struct stacks_proc *sp = find_proc(s, pid, false);

	return sp ? touch_holding(sp, page) : NULL;
}

static int by_pages_desc(const void *a, const void *b)
{
	const struct stack_share *x = a, *y = b;

	if (x->pages != y->pages)
		return x->pages < y->pages ? 1 : -1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

int stacks_shares(struct stacks *s, const struct proc *p, uint64_t start, uint64_t end,
		  struct stack_share **out, size_t *n)
{
	struct stacks_proc *sp = find_proc(s, p->pid, false);
	struct stack_share *v = NULL;
	size_t nv = 0, cap = 0, i, j;

	*out = NULL;
	*n = 0;
	if (!sp || start >= end)
		return 0;
	for (i = lower_bound(sp, start & ~(CHUNK_PAGES - 1)); i < sp->n; i++) {
		const struct stack_touch *t = &sp->t[i];
		uint64_t from = t->from, to = t->to, pages;

		if (from >= end)
			break;
		if (to <= start)
			continue;
		pages = model_count(p, PS_RESIDENT, from > start ? from : start, to < end ? to : end);
		if (!pages)
			continue;
		for (j = 0; j < nv && v[j].stack != s->tab[t->stack]; j++)
			;
		if (j == nv) {
			if (array_reserve(v, nv, cap, 8)) {
				free(v);
				return -ENOMEM;
			}
			v[nv++] = (struct stack_share){ .stack = s->tab[t->stack], .tid = t->tid,
							.ts = t->ts };
		}
		v[j].pages += pages;
		if (t->ts < v[j].ts) {
			v[j].ts = t->ts;
			v[j].tid = t->tid;
		}
	}
	if (nv > 1)
		qsort(v, nv, sizeof(*v), by_pages_desc);
	*out = v;
	*n = nv;
	return 0;
}

/* Flame-graph frame names: the function alone (offsets would split every frame). */
static const char *folded_name(const struct sym_frame *f)
{
	return f->func ? f->func : f->name;
}

int stacks_write_folded(struct stacks *s, struct proc *const *procs, size_t n, FILE *out)
{
	size_t i, j;
	int k;

	for (i = 0; i < n; i++) {
		struct stack_share *v;
		size_t nv;

		if (stacks_shares(s, procs[i], 0, UINT64_MAX / 2, &v, &nv))
			return -ENOMEM;
		for (j = 0; j < nv; j++) {
			const struct stack *st = v[j].stack;

			fprintf(out, "%s", procs[i]->comm);
			for (k = st->nframes - 1; k >= 0; k--) {
				const char *name = folded_name(&st->frames[k]);

				/* ';' separates frames and a space ends them in this format. */
				fputc(';', out);
				for (; *name; name++)
					fputc(*name == ';' || *name == ' ' ? '_' : *name, out);
			}
			fprintf(out, " %" PRIu64 "\n", v[j].pages);
		}
		free(v);
	}
	return fflush(out) ? -errno : 0;
}

size_t stacks_count(const struct stacks *s)
{
	return s->ntab;
}

void stacks_touches(struct stacks *s, pid_t pid, const struct stack_touch **t, size_t *n)
{
	struct stacks_proc *sp = find_proc(s, pid, false);

	*t = sp ? sp->t : NULL;
	*n = sp ? sp->n : 0;
}

int stacks_new_replay(struct stacks **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *d = s ? strdup(s) : NULL;

	*oom |= s && !d;
	return d;
}

int stacks_append(struct stacks *s, const struct stack *st)
{
	struct stack *c;
	bool oom = false;
	uint16_t i;

	if (s->ntab >= STACKS_MAX)
		return -ENOSPC;
	if (array_reserve(s->tab, s->ntab, s->captab, 64) || !(c = calloc(1, sizeof(*c))))
		return -ENOMEM;
	*c = *st;
	c->frames = calloc(st->nframes ? st->nframes : 1, sizeof(*c->frames));
	if (!c->frames) {
		free(c);
		return -ENOMEM;
	}
	for (i = 0; i < st->nframes; i++) {
		const struct sym_frame *f = &st->frames[i];

		c->frames[i] = (struct sym_frame){ .addr = f->addr, .line = f->line,
						   .func_start = f->func_start };
		c->frames[i].name = dup_or_null(f->name ? f->name : "", &oom);
		c->frames[i].func = dup_or_null(f->func, &oom);
		c->frames[i].module = dup_or_null(f->module, &oom);
		c->frames[i].file = dup_or_null(f->file, &oom);
	}
	if (oom) {
		stack_free(c);
		return -ENOMEM;
	}
	s->tab[s->ntab++] = c;
	return 0;
}

int stacks_set_touches(struct stacks *s, pid_t pid, const struct stack_touch *t, size_t n)
{
	struct stacks_proc *sp;
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i].stack >= s->ntab || (i && t[i].from < t[i - 1].from))
			return -EINVAL;
	sp = find_proc(s, pid, true);
	if (!sp)
		return -ENOMEM;
	sp->n = 0;
	if (n > sp->cap) {
		struct stack_touch *v = realloc(sp->t, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		sp->t = v;
		sp->cap = n;
	}
	if (n)
		memcpy(sp->t, t, n * sizeof(*t));
	sp->n = n;
	return 0;
}

void stacks_clear_touches(struct stacks *s)
{
	for (size_t i = 0; i < s->nprocs; i++)
		free(s->procs[i].t);
	s->nprocs = 0;
}

char *stacks_format(const struct stack *st, const char *sep, char *buf, size_t len)
{
	size_t at = 0;
	uint16_t i;

	if (!len)
		return buf;
	buf[0] = 0;
	for (i = 0; i < st->nframes && at < len; i++) {
		int n = snprintf(buf + at, len - at, "%s%s", i ? sep : "", st->frames[i].name);

		if (n < 0)
			break;
		at += n;
	}
	return buf;
}
