// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rec/rec_codec.h"
#include "rec/rec_format.h"
#include "rec/rec_stacks.h"

/* The u64 statistics, in the order the payload stores them (append only: a reader of an
 * older file finds fewer and leaves the rest 0; a newer file's extra ones are skipped). */
/*
 * The order of the statistics in a frame (doc/recording-format.md).  The per-kind arrays
 * hold the record kinds of the format's first version (0..5); what came later is
 * appended, so older files (fewer values) read as zeroes and older readers skip them.
 */
#define REC_KINDS 6

static uint64_t *stat_u64(struct engine_stats *s, size_t i)
{
	uint64_t *fixed[] = { &s->events, &s->lost, &s->reconciles, &s->drift_pages, &s->scans,
			      &s->scanned_pages, &s->maps_reads, &s->overflows };
	uint64_t *later[] = { &s->retired, &s->layout_changes, &s->layout_unowned,
			      &s->layout_hooked, &s->lost_by_kind[EV_STACK],
			      &s->events_by_kind[EV_STACK] };
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);

	_Static_assert(EV_STACK == REC_KINDS && EV_KIND_MAX == REC_KINDS + 1,
		       "a new record kind: append its counters to later[]");
	if (i < nfixed)
		return fixed[i];
	i -= nfixed;
	if (i < REC_KINDS)
		return &s->lost_by_kind[i];
	i -= REC_KINDS;
	if (i < REC_KINDS)
		return &s->events_by_kind[i];
	i -= REC_KINDS;
	return i < sizeof(later) / sizeof(later[0]) ? later[i] : NULL;
}

#define N_STAT_U64 (8 + 2 * REC_KINDS + 6)

static double *stat_f64(struct engine_stats *s, size_t i)
{
	double *fixed[] = { &s->events_per_sec, &s->cpu_pct, &s->interval_s,
			    &s->maps_reads_per_sec };

	return i < sizeof(fixed) / sizeof(fixed[0]) ? fixed[i] : NULL;
}

#define N_STAT_F64 4

/* --- encoder --- */

struct prev_entry {
	int pid;
	pid_t ppid;			/* as last written (0 at a fresh start) */
	struct rbuf counters, layout;
	struct proc *model;		/* a copy of the process as last written, for patches */
	struct heat heat;		/* --heat: its heat table as last written */
	struct stack_touch *touches;	/* --stacks: its first touches as last written */
	size_t ntouches;
};

struct rec_encoder {
	struct prev_entry *prev;
	size_t nprev;
	bool heat;
	size_t stacks_written;		/* --stacks: the table's size in the file */
};

struct rec_encoder *rec_encoder_new(void)
{
	return calloc(1, sizeof(struct rec_encoder));
}

static void free_entries(struct prev_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		rbuf_free(&e[i].counters);
		rbuf_free(&e[i].layout);
		proc_free(e[i].model);
		heat_free(&e[i].heat);
		free(e[i].touches);
	}
	free(e);
}

void rec_encoder_record_heat(struct rec_encoder *enc, bool on)
{
	enc->heat = on;
}

void rec_encoder_free(struct rec_encoder *enc)
{
	if (!enc)
		return;
	free_entries(enc->prev, enc->nprev);
	free(enc);
}

static struct prev_entry *find_prev(const struct rec_encoder *enc, int pid)
{
	size_t lo = 0, hi = enc->nprev;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (enc->prev[mid].pid == pid)
			return &enc->prev[mid];
		if (enc->prev[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * The states a run can take, coded relative to the state its pages had before (a layout:
 * not resident): code k is the k-th of the other three states in the order resident,
 * not resident, swapped, untracked.  Pages moving in and out of RAM -- nearly every change
 * -- are all code 0, which zstd then stores in almost nothing.
 */
static const enum page_state state_order[] = { PS_RESIDENT, PS_NOT_RESIDENT, PS_SWAPPED,
					       PS_UNTRACKED };

static enum page_state state_after(enum page_state old, uint8_t code)
{
	for (size_t i = 0; i < PS_COUNT; i++) {
		if (state_order[i] == old)
			continue;
		if (!code--)
			return state_order[i];
	}
	return PS_COUNT;	/* code > 2: the caller refuses it */
}

static uint8_t state_code(enum page_state old, enum page_state st)
{
	uint8_t code = 0;

	for (size_t i = 0; state_order[i] != st; i++)
		code += state_order[i] != old;
	return code;
}

/* A run block being built: three columns (gaps, lengths, state codes) compress far better
 * than interleaved runs, each column's numbers having one distribution. */
struct run_cols {
	struct rbuf gaps, lens, codes;
	uint64_t at, n;
	const struct proc *old;		/* a patch's base, or NULL (a layout) */
};

static int put_run(uint64_t s, uint64_t e, enum page_state st, void *arg)
{
	struct run_cols *c = arg;
	enum page_state old = PS_NOT_RESIDENT;

	/* model_diff splits where either side changes, so the base is uniform over [s, e);
	 * pages the base did not map were not resident there (the decoder's view too). */
	if (c->old && model_find(c->old, s))
		old = model_page_state(c->old, s);
	rbuf_varint(&c->gaps, s - c->at);
	rbuf_varint(&c->lens, e - s - 1);
	rbuf_u8(&c->codes, state_code(old, st));
	c->at = e;
	c->n++;
	return 0;
}

static void encode_counters(struct rbuf *b, const struct proc *p, size_t bytes)
{
	rbuf_u8(b, p->exited);
	rbuf_varint(b, p->faults);
	rbuf_f64(b, p->fault_rate);
	rbuf_varint(b, bytes);
}

static void encode_attrs(struct rbuf *b, const struct mapping *m, uint64_t at)
{
	rbuf_varint(b, mapping_start(m) - at);
	rbuf_varint(b, mapping_end(m) - mapping_start(m));
	rbuf_varint(b, m->offset);
	rbuf_varint(b, m->ino);
	rbuf_varint(b, m->dev_major);
	rbuf_varint(b, m->dev_minor);
	rbuf_varint(b, m->perms);
	rbuf_varint(b, m->flags);
	rbuf_varint(b, m->kind);
	rbuf_str(b, m->path);
}

/*
 * A layout: the mappings, then one run block over all of them -- the runs of p (old ==
 * NULL), or the ranges where p's states differ from old's (a patch).  0 or -ENOMEM.
 */
static int encode_layout(struct rbuf *b, const struct proc *p, const struct proc *old)
{
	const struct mapping *m;
	struct run_cols c = { .old = old };
	uint64_t at = 0;
	int err = 0;

	rbuf_str(b, p->comm);
	rbuf_varint(b, p->uid);
	rbuf_varint(b, p->brk_start);
	rbuf_varint(b, model_count_maps(p));
	for (m = model_first(p); m; m = model_next(m)) {
		encode_attrs(b, m, at);
		at = mapping_end(m);
	}
	for (m = model_first(p); m && !err; m = model_next(m)) {
		/* old's runs are clipped to old's mappings: pages it did not map were not
		 * resident there, which is also what the decoder's copy starts from. */
		if (old)
			err = model_diff(p, old, mapping_start(m), mapping_end(m), put_run, &c);
		else
			model_runs(p, mapping_start(m), mapping_end(m), put_run, &c);
	}
	rbuf_varint(b, c.n);
	rbuf_varint(b, c.gaps.len);
	rbuf_bytes(b, c.gaps.p, c.gaps.len);
	rbuf_varint(b, c.lens.len);
	rbuf_bytes(b, c.lens.p, c.lens.len);
	rbuf_bytes(b, c.codes.p, c.codes.len);
	if (c.gaps.oom || c.lens.oom || c.codes.oom)
		err = -ENOMEM;
	rbuf_free(&c.gaps);
	rbuf_free(&c.lens);
	rbuf_free(&c.codes);
	return err;
}

struct heat_row {
	uint64_t block, stamp_ns;
	float value;
};

static int by_block(const void *a, const void *b)
{
	const struct heat_row *x = a, *y = b;

	return x->block < y->block ? -1 : x->block > y->block;
}

static void put_f32(struct rbuf *b, float v)
{
	uint8_t le[4];
	uint32_t bits;

	memcpy(&bits, &v, sizeof(bits));
	rbuf_le32(le, bits);
	rbuf_bytes(b, le, sizeof(le));
}

/*
 * REC_SECTION_HEAT of p into body: its entries as they are (value and stamp, so replay
 * decays them exactly as live mode does) -- every one when the reader starts p afresh
 * (old == NULL), else those that changed since old (and, as 0, those old had and p no
 * longer has: pruned).  Returns the rows written, or -ENOMEM.
 */
static long encode_heat(struct rbuf *body, const struct proc *p, const struct heat *old,
			uint64_t now_ns)
{
	const struct heat *h = &p->heat;
	struct heat_row *rows = malloc((h->used + (old ? old->used : 0) + 1) * sizeof(*rows));
	struct rbuf gaps = { 0 };
	size_t n = 0, i;
	uint64_t at = 0;

	if (!rows)
		return -ENOMEM;
	for (i = 0; i < h->cap; i++) {
		const struct heat_entry *e = &h->slots[i], *o;

		if (!e->block)
			continue;
		o = old ? heat_find(old, (e->block - 1) << HEAT_BLOCK_SHIFT) : NULL;
		if (o && o->value == e->value && o->stamp_ns == e->stamp_ns)
			continue;
		rows[n++] = (struct heat_row){ e->block - 1, e->stamp_ns, e->value };
	}
	for (i = 0; old && i < old->cap; i++)
		if (old->slots[i].block &&
		    !heat_find(h, (old->slots[i].block - 1) << HEAT_BLOCK_SHIFT))
			rows[n++] = (struct heat_row){ old->slots[i].block - 1, now_ns, 0 };
	qsort(rows, n, sizeof(*rows), by_block);
	for (i = 0; i < n; i++) {
		rbuf_varint(&gaps, rows[i].block - at);
		at = rows[i].block;
	}
	rbuf_varint(body, n);
	rbuf_varint(body, gaps.len);
	rbuf_bytes(body, gaps.p, gaps.len);
	body->oom |= gaps.oom;
	rbuf_free(&gaps);
	for (i = 0; i < n; i++)
		put_f32(body, rows[i].value);
	for (i = 0; i < n; i++)
		rbuf_varint(body, rec_zigzag((int64_t)(rows[i].stamp_ns - now_ns)));
	free(rows);
	return n;
}

/* A section's body is built apart: its length goes first. */
static void put_section(struct rbuf *out, uint64_t kind, struct rbuf *body)
{
	rbuf_varint(out, kind);
	rbuf_varint(out, body->len);
	rbuf_bytes(out, body->p, body->len);
	out->oom |= body->oom;
	rbuf_free(body);
}

/* A copy of pid's first-touch stacks, to see next time whether they changed. */
static int keep_touches(struct prev_entry *ce, struct stacks *s, pid_t pid)
{
	const struct stack_touch *t;
	size_t n;

	stacks_touches(s, pid, &t, &n);
	ce->touches = n ? malloc(n * sizeof(*t)) : NULL;
	if (n && !ce->touches)
		return -ENOMEM;
	if (n)
		memcpy(ce->touches, t, n * sizeof(*t));
	ce->ntouches = n;
	return 0;
}

static void encode_frame_sections(struct rec_encoder *enc, struct rbuf *out,
				  const struct json_frame *f, bool keyframe)
{
	bool stacks = f->stacks && (keyframe || stacks_count(f->stacks) > enc->stacks_written);
	struct rbuf b = { 0 };
	uint64_t ts = 0;

	rbuf_varint(out, f->has_touches + stacks);
	if (stacks) {
		/* The table only grows: a keyframe holds all of it, a delta what was added. */
		rec_put_stacks(&b, f->stacks, keyframe ? 0 : enc->stacks_written);
		put_section(out, REC_SECTION_STACKS, &b);
		enc->stacks_written = stacks_count(f->stacks);
	}
	if (!f->has_touches)
		return;
	rbuf_varint(&b, f->ntouches);
	rbuf_varint(&b, f->touches_dropped);
	for (size_t i = 0; i < f->ntouches; i++) {
		const struct first_touch *t = &f->touches[i];

		rbuf_varint(&b, t->pid);
		rbuf_varint(&b, t->tid);
		rbuf_varint(&b, t->addr);
		rbuf_u8(&b, t->write);
		rbuf_varint(&b, rec_zigzag((int64_t)(t->ts_ns - ts)));
		ts = t->ts_ns;
	}
	put_section(out, REC_SECTION_TOUCHES, &b);
}

int rec_encode(struct rec_encoder *enc, const struct json_frame *f, bool keyframe,
	       uint32_t flags, struct rbuf *out)
{
	struct engine_stats st = f->stats;
	struct prev_entry *cur;
	size_t i, ncur = 0, nready = 0;
	int prev_pid = 0, err = 0;

	cur = calloc(f->n ? f->n : 1, sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	rbuf_varint(out, flags);
	rbuf_varint(out, N_STAT_U64);
	for (i = 0; i < N_STAT_U64; i++)
		rbuf_varint(out, *stat_u64(&st, i));
	rbuf_varint(out, N_STAT_F64);
	for (i = 0; i < N_STAT_F64; i++)
		rbuf_f64(out, *stat_f64(&st, i));
	rbuf_varint(out, st.interval_scale);
	rbuf_str(out, f->mode);
	rbuf_varint(out, f->interval_ms);
	rbuf_varint(out, f->engine_bytes);
	rbuf_varint(out, f->nprocs);
	rbuf_str(out, f->extra_stats);
	for (i = 0; i < f->n; i++)
		nready += f->procs[i]->ready;
	rbuf_varint(out, nready);
	for (i = 0; i < f->n; i++) {
		const struct proc *p = f->procs[i];
		struct prev_entry *pe, *ce;
		struct rbuf patch = { 0 }, secs = { 0 }, body = { 0 };
		unsigned nsecs;
		uint8_t tag = 0;
		bool fresh;

		if (!p->ready)
			continue;
		ce = &cur[ncur++];
		ce->pid = p->pid;
		encode_counters(&ce->counters, p, f->proc_bytes[i]);
		if (encode_layout(&ce->layout, p, NULL))
			err = -ENOMEM;
		pe = keyframe ? NULL : find_prev(enc, p->pid);
		if (!pe || pe->counters.len != ce->counters.len ||
		    memcmp(pe->counters.p, ce->counters.p, ce->counters.len))
			tag |= REC_TAG_COUNTERS;
		if (!pe || pe->layout.len != ce->layout.len ||
		    memcmp(pe->layout.p, ce->layout.p, ce->layout.len)) {
			tag |= REC_TAG_LAYOUT;
			/* A patch against the last written copy, when that is smaller. */
			if (pe && pe->model && !encode_layout(&patch, p, pe->model) && !patch.oom &&
			    patch.len < ce->layout.len)
				tag = (tag & ~REC_TAG_LAYOUT) | REC_TAG_PATCH;
			ce->model = proc_clone(p, p->pid);
			if (!ce->model)
				err = -ENOMEM;
		} else {
			ce->model = pe->model;	/* unchanged: the copy carries over */
			pe->model = NULL;
		}
		/* The process's sections.  A reader starts a process afresh at a keyframe or
		 * a full layout: then everything, else what changed. */
		fresh = !pe || (tag & REC_TAG_LAYOUT);
		nsecs = 0;
		if (enc->heat) {
			long rows = encode_heat(&body, p, fresh ? NULL : &pe->heat, f->mono_ns);

			if (rows < 0 || heat_copy(&ce->heat, &p->heat))
				err = -ENOMEM;
			if (rows > 0) {
				put_section(&secs, REC_SECTION_HEAT, &body);
				nsecs++;
			}
			rbuf_free(&body);
		}
		if (f->stacks && keep_touches(ce, f->stacks, p->pid))
			err = -ENOMEM;
		if (f->stacks && (fresh ? ce->ntouches > 0 : ce->ntouches != pe->ntouches ||
		    (ce->ntouches && memcmp(ce->touches, pe->touches,
					    ce->ntouches * sizeof(*ce->touches))))) {
			rec_put_touches(&body, f->stacks, p->pid, f->mono_ns);
			put_section(&secs, REC_SECTION_FIRST_TOUCH, &body);
			nsecs++;
		}
		/* The parent: known at a fresh start, or changed (a parent's exit reparents its
		 * children); else the reader keeps the one it has (0 at a fresh start). */
		ce->ppid = p->ppid;
		if (p->ppid != (fresh ? 0 : pe->ppid)) {
			rbuf_varint(&body, (uint64_t)p->ppid);
			put_section(&secs, REC_SECTION_PARENT, &body);
			nsecs++;
		}
		if (nsecs)
			tag |= REC_TAG_SECTIONS;
		rbuf_varint(out, p->pid - prev_pid);
		prev_pid = p->pid;
		rbuf_u8(out, tag);
		if (tag & REC_TAG_COUNTERS)
			rbuf_bytes(out, ce->counters.p, ce->counters.len);
		if (tag & REC_TAG_LAYOUT)
			rbuf_bytes(out, ce->layout.p, ce->layout.len);
		if (tag & REC_TAG_PATCH)
			rbuf_bytes(out, patch.p, patch.len);
		if (nsecs) {
			rbuf_varint(out, nsecs);
			rbuf_bytes(out, secs.p, secs.len);
		}
		out->oom |= secs.oom;
		rbuf_free(&secs);
		rbuf_free(&patch);
		if (ce->counters.oom || ce->layout.oom)
			err = -ENOMEM;
	}
	encode_frame_sections(enc, out, f, keyframe);
	if (out->oom)
		err = -ENOMEM;
	free_entries(enc->prev, enc->nprev);
	enc->prev = cur;
	enc->nprev = ncur;
	if (err) {
		/* The next frame must not be a delta against a state the file does not hold. */
		free_entries(enc->prev, enc->nprev);
		enc->prev = NULL;
		enc->nprev = 0;
		enc->stacks_written = 0;
	}
	return err;
}

/* --- decoder --- */

struct dproc {
	int pid;		/* kept when p moves on to the next frame */
	struct proc *p;
	size_t bytes;
	uint64_t state_pages;	/* pages in runs, for REC_MAX_STATE_PAGES */
	struct stack_touch *touches;	/* --stacks (moves on with p) */
	size_t ntouches;
};

struct rec_decoder {
	struct dproc *cur;
	size_t ncur;
	/* The json_frame handed out points into these. */
	struct proc **procs;
	size_t *bytes;
	char *mode, *extra;
	struct first_touch *touches;
	uint64_t mono_ns;		/* the frame being decoded: heat is as of then */
	struct stacks *stacks;		/* --stacks: the table so far, the frame's touches */
};

struct rec_decoder *rec_decoder_new(void)
{
	return calloc(1, sizeof(struct rec_decoder));
}

static void free_dprocs(struct dproc *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		proc_free(d[i].p);
		free(d[i].touches);
	}
	free(d);
}

static void free_view(struct rec_decoder *dec)
{
	free(dec->procs);
	free(dec->bytes);
	free(dec->mode);
	free(dec->extra);
	free(dec->touches);
	dec->procs = NULL;
	dec->bytes = NULL;
	dec->mode = dec->extra = NULL;
	dec->touches = NULL;
}

void rec_decoder_reset(struct rec_decoder *dec)
{
	free_dprocs(dec->cur, dec->ncur);
	dec->cur = NULL;
	dec->ncur = 0;
	stacks_free(dec->stacks);
	dec->stacks = NULL;
	free_view(dec);
}

void rec_decoder_free(struct rec_decoder *dec)
{
	if (!dec)
		return;
	rec_decoder_reset(dec);
	free(dec);
}

static int bad(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* Takes len pages from a frame's budget of pages in runs (hostile files: bounded memory);
 * false when the budget had room. */
static bool spend(uint64_t *budget, uint64_t len, char *why, size_t whylen)
{
	if (len > *budget) {
		bad(why, whylen, "more than %llu pages in runs in one frame",
		    (unsigned long long)REC_MAX_STATE_PAGES);
		return true;
	}
	*budget -= len;
	return false;
}

static struct dproc *find_dproc(struct dproc *d, size_t n, int pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (d[mid].pid == pid)
			return &d[mid];
		if (d[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

struct counters {
	bool exited;
	uint64_t faults;
	double fault_rate;
	size_t bytes;
};

static void decode_counters(struct rcur *c, struct counters *k)
{
	uint8_t exited = rcur_u8(c);

	if (exited > 1)
		c->bad = true;
	k->exited = exited;
	k->faults = rcur_varint(c);
	k->fault_rate = rcur_f64(c);
	k->bytes = rcur_varint(c);
}

static bool same_mapping(const struct mapping *a, const struct mapping *b)
{
	return mapping_start(a) == mapping_start(b) && mapping_end(a) == mapping_end(b) &&
	       a->offset == b->offset && a->ino == b->ino && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && a->perms == b->perms && a->flags == b->flags &&
	       a->kind == b->kind && !strcmp(a->path ? a->path : "", b->path ? b->path : "");
}

static bool same_layout(const struct proc *a, const struct proc *b)
{
	const struct mapping *x = model_first(a), *y = model_first(b);

	for (; x && y; x = model_next(x), y = model_next(y))
		if (!same_mapping(x, y))
			return false;
	return !x && !y;
}

/*
 * A run block on p: runs in address order, each inside one mapping of p, setting its pages
 * to the state its code names relative to what they were (fresh: not resident, without
 * looking).  New resident, swapped or untracked pages are taken from *state_budget.
 */
static int decode_run_block(struct rcur *c, struct proc *p, bool fresh, uint64_t *state_budget,
			    char *why, size_t whylen)
{
	uint64_t n = rcur_varint(c), i, at = 0;
	struct rcur gaps, lens, codes;
	const struct mapping *m = model_first(p);

	/* Each run takes at least 3 bytes: a gap, a length and a code. */
	if (c->bad || n > rcur_left(c) / 3)
		return bad(why, whylen, "process %d: bad run count", p->pid);
	gaps = rcur_take(c, rcur_varint(c));
	lens = rcur_take(c, rcur_varint(c));
	codes = rcur_take(c, n);
	if (c->bad)
		return bad(why, whylen, "process %d: run columns cut short", p->pid);
	for (i = 0; i < n; i++) {
		uint64_t gap = rcur_varint(&gaps), len = rcur_varint(&lens) + 1, x = at + gap;
		uint8_t code = rcur_u8(&codes);
		enum page_state st;

		if (gaps.bad || lens.bad || gap > REC_MAX_PAGE || x >= REC_MAX_PAGE || len == 0 ||
		    len > REC_MAX_PAGE)
			return bad(why, whylen, "process %d: run %" PRIu64 " out of range",
				   p->pid, i);
		while (m && mapping_end(m) <= x)
			m = model_next(m);
		if (!m || x < mapping_start(m) || len > mapping_end(m) - x)
			return bad(why, whylen, "process %d: run %" PRIu64 " at page 0x%" PRIx64
				   " outside the mappings", p->pid, i, x);
		st = state_after(fresh ? PS_NOT_RESIDENT : model_page_state(p, x), code);
		if (st == PS_COUNT)
			return bad(why, whylen, "process %d: run %" PRIu64 ": bad state code %u",
				   p->pid, i, code);
		if (st != PS_NOT_RESIDENT && spend(state_budget, len, why, whylen))
			return -EBADMSG;
		model_set_state(p, x, x + len, st);
		at = x + len;
	}
	if (rcur_left(&gaps) || rcur_left(&lens))
		return bad(why, whylen, "process %d: run columns longer than their runs", p->pid);
	return 0;
}

static const enum page_state tracked_states[] = { PS_RESIDENT, PS_SWAPPED, PS_UNTRACKED };

/*
 * Builds a process from a layout (old == NULL) or from a patch on old: the mapping list,
 * then a run block -- on a fresh process, or on old's states (old's process itself when the
 * mapping list is old's, else a copy of its states into the new mappings).  *state_budget
 * is what runs may still add.
 */
static int decode_layout(struct rcur *c, struct dproc *d, int pid, struct dproc *old,
			 uint64_t *state_budget, char *why, size_t whylen)
{
	uint64_t nmaps, at = 0, i, counts[PS_COUNT];
	char *comm;
	struct proc *p;
	int err;

	comm = rcur_str(c, sizeof(p->comm) - 1);
	if (!comm)
		return bad(why, whylen, "process %d: bad command name", pid);
	p = proc_new(pid);
	if (!p) {
		free(comm);
		return -ENOMEM;
	}
	strcpy(p->comm, comm);
	free(comm);
	p->ready = true;
	p->uid = rcur_varint(c);
	p->brk_start = rcur_varint(c);
	d->p = p;
	d->state_pages = 0;
	nmaps = rcur_varint(c);
	/* Each mapping takes at least 10 bytes: a count beyond that is a lie. */
	if (c->bad || nmaps > rcur_left(c) / 10)
		return bad(why, whylen, "process %d: bad mapping count", pid);
	for (i = 0; i < nmaps; i++) {
		struct mapping_attrs a = { 0 };
		uint64_t gap = rcur_varint(c), len = rcur_varint(c), s, e;
		char *path;

		a.offset = rcur_varint(c);
		a.ino = rcur_varint(c);
		a.dev_major = rcur_varint(c);
		a.dev_minor = rcur_varint(c);
		a.perms = rcur_varint(c);
		a.flags = rcur_varint(c);
		a.kind = rcur_varint(c);
		path = rcur_str(c, REC_MAX_STR);
		if (c->bad)
			return bad(why, whylen, "process %d: mapping %" PRIu64 " is cut short", pid, i);
		a.path = path;
		s = at + gap;
		e = s + len;
		/* In address order, without overlap (s >= at by construction), in range. */
		if (gap > REC_MAX_PAGE || len == 0 || len > REC_MAX_PAGE || e > REC_MAX_PAGE ||
		    a.kind >= MK_COUNT) {
			free(path);
			return bad(why, whylen, "process %d: mapping %" PRIu64 " out of range or order",
				   pid, i);
		}
		err = model_map_keep(p, s, e, &a);
		free(path);
		if (err)
			return err;
		at = e;
	}
	if (!old) {
		uint64_t before = *state_budget;

		err = decode_run_block(c, p, true, state_budget, why, whylen);
		d->state_pages = before - *state_budget;
		return err;
	}
	/* What the base holds is at most what old held, which was within its budget. */
	if (old->state_pages > *state_budget)
		return bad(why, whylen, "more than %llu pages in runs in one frame",
			   (unsigned long long)REC_MAX_STATE_PAGES);
	*state_budget -= old->state_pages;
	if (same_layout(p, old->p)) {
		/* The usual delta: pages moved, mappings did not.  Patch old in place. */
		strcpy(old->p->comm, p->comm);
		old->p->uid = p->uid;
		old->p->brk_start = p->brk_start;
		proc_free(p);
		d->p = p = old->p;
		old->p = NULL;
	} else {
		const struct mapping *m;

		if (heat_copy(&p->heat, &old->p->heat))
			return -ENOMEM;
		p->ppid = old->p->ppid;	/* a patch keeps what it does not say */
		for (m = model_first(p); m; m = model_next(m))
			for (size_t k = 0; k < 3; k++)
				pageset_copy_range(p->set[tracked_states[k]],
						   old->p->set[tracked_states[k]],
						   mapping_start(m), mapping_end(m));
	}
	err = decode_run_block(c, p, false, state_budget, why, whylen);
	if (err)
		return err;
	model_totals(p, counts);
	d->state_pages = counts[PS_RESIDENT] + counts[PS_SWAPPED] + counts[PS_UNTRACKED];
	return 0;
}

/* REC_SECTION_TOUCHES: rows of pid, tid, address, write, time (a zigzag difference). */
static int decode_touches(struct rcur *c, struct rec_decoder *dec, struct json_frame *f,
			  char *why, size_t whylen)
{
	uint64_t n = rcur_varint(c), ts = 0;

	f->touches_dropped = rcur_varint(c);
	/* Each row takes at least 5 bytes. */
	if (c->bad || f->has_touches || n > REC_MAX_TOUCHES || n > rcur_left(c) / 5)
		return bad(why, whylen, "bad first-touch section");
	dec->touches = calloc(n ? n : 1, sizeof(*dec->touches));
	if (!dec->touches)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct first_touch *t = &dec->touches[i];
		uint64_t pid = rcur_varint(c), tid = rcur_varint(c);
		uint8_t write;

		t->addr = rcur_varint(c);
		write = rcur_u8(c);
		ts += (uint64_t)rec_unzigzag(rcur_varint(c));
		t->ts_ns = ts;
		if (c->bad || pid == 0 || pid > REC_MAX_PID || tid > UINT32_MAX || write > 1)
			return bad(why, whylen, "first touch %" PRIu64 ": bad fields", i);
		t->pid = pid;
		t->tid = tid;
		t->write = write;
	}
	if (rcur_left(c))
		return bad(why, whylen, "bad first-touch section");
	f->has_touches = true;
	f->touches = dec->touches;
	f->ntouches = n;
	return 0;
}

static float get_f32(struct rcur *c)
{
	uint8_t le[4];
	uint32_t bits;
	float v;

	for (size_t i = 0; i < sizeof(le); i++)
		le[i] = rcur_u8(c);
	bits = rec_le32(le);
	memcpy(&v, &bits, sizeof(v));
	return v;
}

/* REC_SECTION_HEAT: blocks (increasing), their values and stamps. */
static int decode_heat(struct rcur *c, struct rec_decoder *dec, struct dproc *d, char *why,
		       size_t whylen)
{
	uint64_t n = rcur_varint(c), i, block = 0;
	struct rcur gaps, values;

	/* Each row takes at least 6 bytes: a gap, a value and a stamp. */
	if (c->bad || n > rcur_left(c) / 6)
		return bad(why, whylen, "process %d: bad heat section", d->pid);
	gaps = rcur_take(c, rcur_varint(c));
	values = rcur_take(c, n * 4);
	for (i = 0; i < n; i++) {
		uint64_t gap = rcur_varint(&gaps);
		float v = get_f32(&values);
		uint64_t stamp = dec->mono_ns + (uint64_t)rec_unzigzag(rcur_varint(c));

		block += gap;
		if (gaps.bad || values.bad || c->bad || (i && gap == 0) ||
		    block >= REC_MAX_PAGE >> HEAT_BLOCK_SHIFT || !(v >= 0 && v < 1e30f))
			return bad(why, whylen, "process %d: heat row %" PRIu64 " out of range or order",
				   d->pid, i);
		if (heat_set(&d->p->heat, block << HEAT_BLOCK_SHIFT, v, stamp))
			return -ENOMEM;
	}
	if (rcur_left(&gaps) || rcur_left(c))
		return bad(why, whylen, "process %d: bad heat section", d->pid);
	return 0;
}

/* REC_SECTION_PARENT: one varint, the parent pid (0: not known). */
static int decode_parent(struct rcur *c, struct dproc *d, char *why, size_t whylen)
{
	uint64_t ppid = rcur_varint(c);

	if (c->bad || ppid > REC_MAX_PID || rcur_left(c))
		return bad(why, whylen, "process %d: bad parent section", d->pid);
	d->p->ppid = (pid_t)ppid;
	return 0;
}

/*
 * Sections (the format's extension point): of a process (d) or of the frame (d == NULL).
 * Kinds this reader does not know are skipped.
 */
static int decode_sections(struct rcur *c, struct rec_decoder *dec, struct dproc *d,
			   struct json_frame *f, char *why, size_t whylen)
{
	uint64_t n = rcur_varint(c), i;
	int err = 0;

	/* Each section takes at least 2 bytes: its kind and its length. */
	if (c->bad || n > rcur_left(c) / 2)
		return bad(why, whylen, "bad section count");
	for (i = 0; i < n && !err; i++) {
		uint64_t kind = rcur_varint(c);
		struct rcur body = rcur_take(c, rcur_varint(c));

		if (c->bad)
			return bad(why, whylen, "section %" PRIu64 " cut short", i);
		if (!d && kind == REC_SECTION_TOUCHES)
			err = decode_touches(&body, dec, f, why, whylen);
		else if (!d && kind == REC_SECTION_STACKS)
			err = rec_get_stacks(&body, &dec->stacks, why, whylen);
		else if (d && kind == REC_SECTION_HEAT)
			err = decode_heat(&body, dec, d, why, whylen);
		else if (d && kind == REC_SECTION_PARENT)
			err = decode_parent(&body, d, why, whylen);
		else if (d && kind == REC_SECTION_FIRST_TOUCH) {
			free(d->touches);
			err = rec_get_touches(&body, dec->mono_ns, &d->touches, &d->ntouches, why,
					      whylen);
		}
	}
	return err;
}

static int decode(struct rec_decoder *dec, struct rcur *c, bool keyframe, struct json_frame *f,
		  uint32_t *flags, char *why, size_t whylen)
{
	uint64_t n, i, nstat, budget = REC_MAX_STATE_PAGES;
	struct dproc *cur;
	size_t ncur = 0;
	int pid = 0, err = 0;

	memset(f, 0, sizeof(*f));
	*flags = rcur_varint(c);
	nstat = rcur_varint(c);
	if (c->bad || nstat > rcur_left(c))
		return bad(why, whylen, "bad statistics count");
	for (i = 0; i < nstat; i++) {
		uint64_t v = rcur_varint(c), *slot = stat_u64(&f->stats, i);

		if (slot)
			*slot = v;
	}
	nstat = rcur_varint(c);
	if (c->bad || nstat > rcur_left(c) / 8)
		return bad(why, whylen, "bad statistics count");
	for (i = 0; i < nstat; i++) {
		double v = rcur_f64(c), *slot = stat_f64(&f->stats, i);

		if (slot)
			*slot = v;
	}
	f->stats.interval_scale = rcur_varint(c);
	dec->mode = rcur_str(c, 64);
	f->interval_ms = rcur_varint(c);
	f->engine_bytes = rcur_varint(c);
	f->nprocs = rcur_varint(c);
	dec->extra = rcur_str(c, REC_MAX_EXTRA);
	n = rcur_varint(c);
	/* Each process entry takes at least 2 bytes. */
	if (c->bad || n > rcur_left(c) / 2)
		return bad(why, whylen, "bad frame header fields");
	f->mode = dec->mode;
	f->extra_stats = dec->extra;
	cur = calloc(n ? n : 1, sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	for (i = 0; i < n && !err; i++) {
		uint64_t delta = rcur_varint(c);
		uint8_t tag = rcur_u8(c);
		struct dproc *old, *d = &cur[ncur];
		struct counters k;

		if (c->bad || delta == 0 || delta > REC_MAX_PID - (uint64_t)pid || tag > 15 ||
		    ((tag & REC_TAG_LAYOUT) && (tag & REC_TAG_PATCH))) {
			err = bad(why, whylen, "process entry %" PRIu64 ": bad pid or tag", i);
			break;
		}
		pid += delta;
		old = find_dproc(dec->cur, dec->ncur, pid);
		if ((keyframe || !old || !old->p) &&
		    (tag & ~REC_TAG_SECTIONS) != (REC_TAG_COUNTERS | REC_TAG_LAYOUT)) {
			err = bad(why, whylen, "process %d: a delta with no earlier state", pid);
			break;
		}
		/* Counters come first; without them the process keeps the previous ones. */
		if (tag & REC_TAG_COUNTERS) {
			decode_counters(c, &k);
		} else {
			k.exited = old->p->exited;
			k.faults = old->p->faults;
			k.fault_rate = old->p->fault_rate;
			k.bytes = old->bytes;
		}
		if (c->bad) {
			err = bad(why, whylen, "process %d: cut short", pid);
			break;
		}
		d->pid = pid;
		if (tag & (REC_TAG_LAYOUT | REC_TAG_PATCH)) {
			err = decode_layout(c, d, pid, tag & REC_TAG_PATCH ? old : NULL, &budget,
					    why, whylen);
			ncur += d->p != NULL;
			if (err)
				break;
			if (tag & REC_TAG_PATCH) {	/* a patch keeps what it does not say */
				d->touches = old->touches;
				d->ntouches = old->ntouches;
				old->touches = NULL;
			}
		} else {
			if (old->state_pages > budget) {
				err = bad(why, whylen, "more than %llu pages in runs in one frame",
					  (unsigned long long)REC_MAX_STATE_PAGES);
				break;
			}
			budget -= old->state_pages;
			*d = *old;
			old->p = NULL;	/* moved */
			old->touches = NULL;
			ncur++;
		}
		d->p->exited = k.exited;
		d->p->faults = k.faults;
		d->p->fault_rate = k.fault_rate;
		d->bytes = k.bytes;
		if (tag & REC_TAG_SECTIONS)
			err = decode_sections(c, dec, d, f, why, whylen);
		if (!err && c->bad)
			err = bad(why, whylen, "process %d: cut short", pid);
	}
	if (!err)
		err = decode_sections(c, dec, NULL, f, why, whylen);
	if (!err && rcur_left(c))
		err = bad(why, whylen, "%zu bytes after the last process", rcur_left(c));
	if (!err && dec->stacks) {
		/* The frame's first touches, against the table as it now is. */
		stacks_clear_touches(dec->stacks);
		for (i = 0; i < ncur && !err; i++)
			if (cur[i].ntouches)
				err = stacks_set_touches(dec->stacks, cur[i].pid, cur[i].touches,
							 cur[i].ntouches);
		if (err == -EINVAL)
			err = bad(why, whylen, "first-touch stacks out of order or beyond the "
				  "table");
		f->stacks = dec->stacks;
	}
	free_dprocs(dec->cur, dec->ncur);
	dec->cur = cur;
	dec->ncur = ncur;
	if (err)
		return err;
	dec->procs = calloc(ncur ? ncur : 1, sizeof(*dec->procs));
	dec->bytes = calloc(ncur ? ncur : 1, sizeof(*dec->bytes));
	if (!dec->procs || !dec->bytes)
		return -ENOMEM;
	for (i = 0; i < ncur; i++) {
		dec->procs[i] = cur[i].p;
		dec->bytes[i] = cur[i].bytes;
	}
	f->procs = dec->procs;
	f->proc_bytes = dec->bytes;
	f->n = ncur;
	return 0;
}

int rec_decode(struct rec_decoder *dec, const uint8_t *p, size_t len, bool keyframe,
	       uint64_t mono_ns, struct json_frame *f, uint32_t *flags, char *why, size_t whylen)
{
	struct rcur c = { .p = p, .end = p + len };
	int err;

	free_view(dec);
	if (keyframe)
		rec_decoder_reset(dec);
	dec->mono_ns = mono_ns;
	err = decode(dec, &c, keyframe, f, flags, why, whylen);
	if (err) {
		if (err == -ENOMEM)
			snprintf(why, whylen, "out of memory");
		rec_decoder_reset(dec);
		memset(f, 0, sizeof(*f));
	}
	return err;
}
