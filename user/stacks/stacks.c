// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "lib/hashtab.h"
#include "kernel/procfs.h"
#include "stacks/early_stacks.h"
#include "stacks/fault_stacks.h"
#include "stacks/raw_cache.h"
#include "stacks/stacks.h"
#include "stacks/unwind_check.h"

#define CHUNK_PAGES (1ULL << (MEVITOP_CHUNK_SHIFT - PAGE_SHIFT_4K))
#define NO_STACK UINT32_MAX		/* exact mode: a first touch whose stack is on its way */

/* One process's first touches, sorted by chunk. */
struct stacks_proc {
	pid_t pid;
	struct stack_touch *t;
	size_t n, cap;
};

struct stacks {
	struct symbolizer *sym;
	struct raw_cache *raw;
	struct fault_stacks *faults;	/* exact mode: stacks waiting for their first touch */
	struct early_stacks *early;	/* stacks of processes not modelled yet */
	struct stack **tab;
	size_t ntab, captab;
	struct hashtab index;		/* tab's stacks by their names (same_stack) */
	struct stacks_proc *procs;
	size_t nprocs, capprocs;
	struct stacks_stats st;
};

static const struct hashtab_ops tab_ops;	/* the index's, beside intern() */

int stacks_new(uint64_t interval_ms, uint64_t sample_period, bool exact, struct stacks **out)
{
	struct stacks *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	hashtab_init(&s->index, &tab_ops, s);
	err = symbolize_new(&s->sym);
	if (!err)
		err = raw_cache_new(&s->raw);
	if (!err)
		err = early_stacks_new(&s->early);
	if (!err && exact)
		err = fault_stacks_new(&s->faults);
	if (err) {
		stacks_free(s);
		return err;
	}
	s->st.interval_ms = exact ? 0 : interval_ms;
	s->st.sample_period = exact ? 0 : sample_period;
	s->st.exact = exact;
	*out = s;
	return 0;
}

static void stack_free(struct stack *st)
{
	uint16_t i;

	for (i = 0; i < st->nframes; i++)
		symbolize_frame_clear(&st->frames[i]);
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
	hashtab_free(&s->index);
	raw_cache_free(s->raw);
	fault_stacks_free(s->faults);
	early_stacks_free(s->early);
	for (i = 0; i < s->nprocs; i++)
		free(s->procs[i].t);
	free(s->procs);
	symbolize_free(s->sym);
	free(s);
}

void stacks_set_duty(struct stacks *s, uint64_t on_ms, uint64_t every_ms)
{
	s->st.duty_on_ms = on_ms;
	s->st.duty_every_ms = every_ms;
}

void stacks_set_sampler(struct stacks *s, const struct fault_sampler_stats *fs)
{
	s->st.sampler = *fs;
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
	raw_cache_forget(s->raw, pid);
	s->st.dropped += early_stacks_drop(s->early, pid);
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

	uint64_t dest;

	if (!in_exec_mapping(p, ra) || !unwind_check_call_precedes(p, ra, &target))
		return false;
	/* A call of foo@plt returns from foo: the PLT entry's GOT slot says it reaches it. */
	return !target || !callee || target == callee ||
	       (unwind_check_plt_dest(p, target, &dest) && dest == callee);
}

/* A faulting instruction no symbol covers may be a PLT entry (its code page faulted in on
 * a first call): named after where it leads, "foo@plt", when that is known. */
static int name_plt(struct stacks *s, const struct proc *p, struct sym_frame *f)
{
	struct sym_frame dest = { 0 };
	uint64_t to;
	char *name;
	int err;

	if (f->func || !unwind_check_plt_dest(p, f->addr, &to))
		return 0;
	err = symbolize_name(s->sym, p, to, false, &dest);
	if (err || !dest.func || dest.func_start != to) {
		symbolize_frame_clear(&dest);
		return err;
	}
	if (asprintf(&name, "%s@plt", dest.func) < 0) {
		symbolize_frame_clear(&dest);
		return -ENOMEM;
	}
	free(f->name);
	free(f->func);
	f->name = name;
	f->func = strdup(name);
	f->func_start = f->addr;	/* the entry sets up no frame: its caller is on top */
	symbolize_frame_clear(&dest);
	return f->func ? 0 : -ENOMEM;
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
	err = symbolize_name(s->sym, p, ev->frames[0], false, &st->frames[0]);
	if (!err)
		err = name_plt(s, p, &st->frames[0]);
	st->nframes = 1;
	while (!err && st->nframes < MEVITOP_STACK_DEPTH) {
		const struct sym_frame *cur = &st->frames[st->nframes - 1];
		uint64_t a;

		if (unwind_check_frame_set_up(p, cur->func_start, cur->addr)) {
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
		err = symbolize_name(s->sym, p, a, true, &st->frames[st->nframes]);
		if (!err)
			st->nframes++;
	}
	st->unwind = st->nframes > 1 ? UNWIND_FP : UNWIND_IP;
	return err;
}

static uint64_t tab_hash(uint32_t item, void *ctx)
{
	const struct stacks *s = ctx;

	return s->tab[item]->hash;
}

static bool tab_equal(uint32_t item, const void *key, void *ctx)
{
	const struct stacks *s = ctx;

	return same_stack(s->tab[item], key);
}

static const struct hashtab_ops tab_ops = { tab_hash, tab_equal };

/* The table index of ev's stack, interned; -ENOMEM or -ENOSPC. */
static int intern(struct stacks *s, const struct proc *p, const struct ev_stack *ev)
{
	int64_t cached = raw_cache_get(s->raw, p, ev);
	struct stack *st;
	uint64_t h = 0xcbf29ce484222325ULL;
	uint32_t found;
	size_t i;
	int err;

	if (cached >= 0) {
		s->tab[cached]->samples++;
		return cached;
	}
	st = calloc(1, sizeof(*st));
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
	if (hashtab_find(&s->index, st->hash, st, &found)) {
		stack_free(st);
		s->tab[found]->samples++;
		raw_cache_put(s->raw, p, ev, found);
		return found;
	}
	if (s->ntab >= STACKS_MAX || array_reserve(s->tab, s->ntab, s->captab, 64) ||
	    hashtab_add(&s->index, st->hash, s->ntab)) {
		stack_free(st);
		return -ENOSPC;
	}
	st->samples = 1;
	s->tab[s->ntab] = st;
	s->st.unique++;
	raw_cache_put(s->raw, p, ev, s->ntab);
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

/* Exact mode: a fault's stack.  A first touch of its page by its thread may already be
 * waiting for it (the ring buffer was drained late); else it waits for that touch. */
static void exact_on_event(struct stacks *s, const struct proc *p, const struct ev_stack *ev)
{
	uint64_t page = ev->addr >> PAGE_SHIFT_4K;
	struct stacks_proc *sp = p ? find_proc(s, p->pid, false) : NULL;
	struct stack_touch *t = sp ? touch_holding(sp, page) : NULL;
	int idx;

	if (!p || p->exited)
		return;		/* nothing to name it with; its touch, if any, stays unnamed */
	/* Named now, while the layout is the fault's; the raw cache makes a loop's repeats a
	 * lookup. */
	idx = intern(s, p, ev);
	if (idx < 0) {
		s->st.dropped++;
		return;
	}
	if (!t || t->stack != NO_STACK || t->tid != ev->tid || ev->ts > t->ts) {
		struct fault_stack fs = { .tgid = ev->tgid, .tid = ev->tid, .page = page,
					  .ts = ev->ts, .addr = ev->addr, .stack = idx };

		fault_stacks_put(s->faults, &fs);
		return;
	}
	t->stack = idx;
	s->st.joined++;
	if (s->tab[idx]->unwind == UNWIND_IP)
		s->st.ip_only++;
}

static void insert_touch(struct stacks_proc *sp, size_t at, const struct stack_touch *t)
{
	memmove(&sp->t[at + 1], &sp->t[at], (sp->n - at) * sizeof(*sp->t));
	sp->t[at] = *t;
	sp->n++;
}

/* Takes page out of the touch *t holds it (it was freed and is touched anew); 0 or
 * -ENOMEM (a split needs one more entry). */
static int cut_page(struct stacks_proc *sp, struct stack_touch *t, uint64_t page)
{
	size_t i = t - sp->t;
	struct stack_touch right;

	if (t->from == page && t->to == page + 1) {
		memmove(t, t + 1, (sp->n - i - 1) * sizeof(*t));
		sp->n--;
	} else if (t->from == page) {
		t->from++;
	} else if (t->to == page + 1) {
		t->to--;
	} else {
		if (array_reserve(sp->t, sp->n, sp->cap, 64))
			return -ENOMEM;
		t = &sp->t[i];
		right = *t;
		right.from = page + 1;
		t->to = page;
		insert_touch(sp, i + 1, &right);
	}
	return 0;
}

static bool extends(const struct stack_touch *a, const struct stack_touch *b)
{
	return a->stack == b->stack && a->stack != NO_STACK && a->tid == b->tid &&
	       (a->from & ~(CHUNK_PAGES - 1)) == (b->from & ~(CHUNK_PAGES - 1));
}

void stacks_first_touch_unplaced(struct stacks *s)
{
	if (!s->faults)
		return;
	s->st.first_touches++;
	s->st.dropped++;
}

void stacks_on_first_touch(struct stacks *s, const struct proc *p, uint32_t tid,
			   uint64_t addr, uint64_t ts_ns)
{
	uint64_t page = addr >> PAGE_SHIFT_4K;
	struct stack_touch t = { .from = page, .to = page + 1, .stack = NO_STACK, .tid = tid,
				 .ts = ts_ns, .addr = addr }, *old;
	struct stacks_proc *sp;
	struct fault_stack fs;
	size_t at;

	if (!s->faults)
		return;
	s->st.first_touches++;
	sp = find_proc(s, p->pid, true);
	if (!sp) {
		s->st.dropped++;
		return;
	}
	if (fault_stacks_take(s->faults, p->pid, tid, page, ts_ns, &fs)) {
		t.stack = fs.stack;
		t.ts = fs.ts;
		t.addr = fs.addr;
		s->st.joined++;
		if (s->tab[fs.stack]->unwind == UNWIND_IP)
			s->st.ip_only++;
	}
	old = touch_holding(sp, page);
	if ((old && cut_page(sp, old, page)) || array_reserve(sp->t, sp->n, sp->cap, 64)) {
		s->st.dropped++;
		return;
	}
	at = lower_bound(sp, page);
	if (at && sp->t[at - 1].to == page && extends(&sp->t[at - 1], &t)) {
		sp->t[at - 1].to++;
	} else if (at < sp->n && sp->t[at].from == page + 1 && extends(&sp->t[at], &t)) {
		sp->t[at].from--;
		sp->t[at].ts = t.ts;
		sp->t[at].addr = t.addr;
	} else {
		insert_touch(sp, at, &t);
	}
}

/* A stack record of p, which is modelled. */
static void on_sample(struct stacks *s, const struct proc *p, const struct ev_stack *ev)
{
	uint64_t page = ev->addr >> PAGE_SHIFT_4K, chunk = page & ~(CHUNK_PAGES - 1);
	struct stack_touch t = { .tid = ev->tid, .ts = ev->ts, .addr = ev->addr }, *old;
	const struct mapping *m = model_find(p, page);
	struct stacks_proc *sp;
	int idx;

	if (s->faults) {
		exact_on_event(s, p, ev);
		return;
	}
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
	insert_touch(sp, lower_bound(sp, t.from), &t);
}

void stacks_on_event(struct stacks *s, const struct proc *p, const struct ev_stack *ev)
{
	s->st.samples++;
	if (!p || (!p->exited && (!p->ready || !model_find(p, ev->addr >> PAGE_SHIFT_4K)))) {
		s->st.dropped += early_stacks_put(s->early, ev);
		return;
	}
	on_sample(s, p, ev);
}

struct replay_ctx {
	struct stacks *s;
	const struct proc *p;
};

static void replay(void *arg, const struct ev_stack *ev)
{
	struct replay_ctx *c = arg;

	on_sample(c->s, c->p, ev);
}

void stacks_on_layout(struct stacks *s, const struct proc *p)
{
	struct replay_ctx c = { .s = s, .p = p };

	if (s)
		early_stacks_take(s->early, p->pid, replay, &c);
}

const struct stack_touch *stacks_touch_at(struct stacks *s, pid_t pid, uint64_t page)
{
	struct stacks_proc *sp = find_proc(s, pid, false);
	const struct stack_touch *t = sp ? touch_holding(sp, page) : NULL;

	return t && t->stack != NO_STACK ? t : NULL;
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
		if (to <= start || t->stack == NO_STACK)
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

/* One folded line's weight: stack st accounts for pages. */
struct folded_sum {
	const struct stack *st;
	uint64_t hash;			/* of the folded names (folded_hash) */
	uint64_t pages;
};

static uint64_t folded_hash(const struct stack *st)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (int k = 0; k < st->nframes; k++)
		h = hash_str(h, folded_name(&st->frames[k]));
	return h + st->nframes;
}

/* Two stacks print the same folded line (other offsets in the same functions, say). */
static bool same_folded(const struct folded_sum *a, const struct stack *b, uint64_t hash)
{
	if (a->st == b)
		return true;
	if (a->hash != hash || a->st->nframes != b->nframes)
		return false;
	for (int k = 0; k < b->nframes; k++)
		if (strcmp(folded_name(&a->st->frames[k]), folded_name(&b->frames[k])))
			return false;
	return true;
}

/* The lines found so far (in order of first appearance) and an index of them by folded
 * name, so each share is placed in constant time: a process with many distinct stacks used
 * to take quadratic time. */
struct folded_set {
	struct folded_sum *v;
	size_t n, cap;
	struct hashtab index;
};

static uint64_t folded_item_hash(uint32_t item, void *ctx)
{
	const struct folded_set *f = ctx;

	return f->v[item].hash;
}

/* key: the folded_sum a stack would start (its stack and folded hash). */
static bool folded_item_equal(uint32_t item, const void *key, void *ctx)
{
	const struct folded_set *f = ctx;
	const struct folded_sum *k = key;

	return same_folded(&f->v[item], k->st, k->hash);
}

static const struct hashtab_ops folded_ops = { folded_item_hash, folded_item_equal };

static int folded_add(struct folded_set *f, const struct stack_share *sh)
{
	struct folded_sum k = { .st = sh->stack, .hash = folded_hash(sh->stack) };
	uint32_t i;

	if (!hashtab_find(&f->index, k.hash, &k, &i)) {
		if (array_reserve(f->v, f->n, f->cap, 16) || hashtab_add(&f->index, k.hash, f->n))
			return -ENOMEM;
		i = f->n++;
		f->v[i] = k;
	}
	f->v[i].pages += sh->pages;
	return 0;
}

/*
 * Process p's stacks, weighted the way JSON's first_touch is: mapping by mapping (a chunk's
 * touch counts only in the mapping it was in), summed per stack in order of first
 * appearance.
 */
static int folded_sums(struct stacks *s, const struct proc *p, struct folded_sum **out,
		       size_t *nout)
{
	struct folded_set f = { 0 };
	const struct mapping *m;
	size_t i;

	hashtab_init(&f.index, &folded_ops, &f);

	for (m = model_first(p); m; m = model_next(m)) {
		struct stack_share *sh;
		size_t nsh;

		if (stacks_shares(s, p, mapping_start(m), mapping_end(m), &sh, &nsh))
			goto oom;
		for (i = 0; i < nsh; i++)
			if (folded_add(&f, &sh[i])) {
				free(sh);
				goto oom;
			}
		free(sh);
	}
	hashtab_free(&f.index);
	*out = f.v;
	*nout = f.n;
	return 0;
oom:
	hashtab_free(&f.index);
	free(f.v);
	return -ENOMEM;
}

int stacks_write_folded(struct stacks *s, struct proc *const *procs, size_t n, FILE *out)
{
	size_t i, j;
	int k;

	for (i = 0; i < n; i++) {
		struct folded_sum *v;
		size_t nv;

		if (folded_sums(s, procs[i], &v, &nv))
			return -ENOMEM;
		for (j = 0; j < nv; j++) {
			const struct stack *st = v[j].st;

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
	struct stacks *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	hashtab_init(&s->index, &tab_ops, s);
	*out = s;
	return 0;
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
	if (n > sp->cap) {	/* exactly n, known up front: not a growing array (array.h) */
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
