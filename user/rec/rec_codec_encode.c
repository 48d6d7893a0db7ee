// SPDX-License-Identifier: GPL-2.0
/*
 * The encoder of frame payloads (rec_codec.h): what it remembers of each process between
 * frames, and the layout, heat and first-touch sections built from a json_frame.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "rec/rec_codec.h"
#include "rec/rec_codec_int.h"
#include "rec/rec_format.h"
#include "rec/rec_share.h"
#include "rec/rec_stacks.h"

struct prev_entry {
	int pid;
	pid_t ppid;			/* as last written (0 at a fresh start) */
	struct rbuf counters, layout;
	struct proc *model;		/* a copy of the process as last written, for patches */
	struct heat heat;		/* --heat: its heat table as last written */
	struct stack_touch *touches;	/* --stacks: its first touches as last written */
	size_t ntouches;
	uint64_t share_at;		/* --sharing: the pass last written (0: none) */
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
	rbuf_u8(&c->codes, rec_state_code(old, st));
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
		rbuf_f32(body, rows[i].value);
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

	rbuf_varint(out, f->has_touches + stacks + (f->files_text != NULL));
	if (f->files_text) {
		/* Text as live JSON wrote it: replay prints the very members (they are small
		 * beside the processes at the default --files-top, and compress well). */
		rbuf_str(&b, f->files_text);
		put_section(out, REC_SECTION_FILES, &b);
	}
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

/* The frame's header: flags, statistics, mode and sizes, then how many processes follow. */
static void encode_header(struct rbuf *out, const struct json_frame *f, uint32_t flags)
{
	struct engine_stats st = f->stats;
	size_t i, nready = 0;

	rbuf_varint(out, flags);
	rbuf_varint(out, N_STAT_U64);
	for (i = 0; i < N_STAT_U64; i++)
		rbuf_varint(out, *rec_stat_u64(&st, i));
	rbuf_varint(out, N_STAT_F64);
	for (i = 0; i < N_STAT_F64; i++)
		rbuf_f64(out, *rec_stat_f64(&st, i));
	rbuf_varint(out, st.interval_scale);
	rbuf_str(out, f->mode);
	rbuf_varint(out, f->interval_ms);
	rbuf_varint(out, f->engine_bytes);
	rbuf_varint(out, f->nprocs);
	rbuf_str(out, f->extra_stats);
	for (i = 0; i < f->n; i++)
		nready += f->procs[i]->ready;
	rbuf_varint(out, nready);
}

/*
 * The process's sections into secs, against pe (what was last written of it, or NULL);
 * fresh: the reader starts it afresh (a keyframe or a full layout), so everything, else what
 * changed.  Returns how many; *err becomes -ENOMEM when one could not be kept or built.
 */
static unsigned encode_proc_sections(struct rec_encoder *enc, const struct json_frame *f,
				     const struct proc *p, struct prev_entry *pe,
				     struct prev_entry *ce, bool fresh, struct rbuf *secs, int *err)
{
	struct rbuf body = { 0 };
	unsigned nsecs = 0;

	if (enc->heat) {
		long rows = encode_heat(&body, p, fresh ? NULL : &pe->heat, f->mono_ns);

		if (rows < 0 || heat_copy(&ce->heat, &p->heat))
			*err = -ENOMEM;
		if (rows > 0) {
			put_section(secs, REC_SECTION_HEAT, &body);
			nsecs++;
		}
		rbuf_free(&body);
	}
	if (f->stacks && keep_touches(ce, f->stacks, p->pid))
		*err = -ENOMEM;
	if (f->stacks && (fresh ? ce->ntouches > 0 : ce->ntouches != pe->ntouches ||
	    (ce->ntouches && memcmp(ce->touches, pe->touches,
				    ce->ntouches * sizeof(*ce->touches))))) {
		rec_put_touches(&body, f->stacks, p->pid, f->mono_ns);
		put_section(secs, REC_SECTION_FIRST_TOUCH, &body);
		nsecs++;
	}
	/* --sharing: the last pass, when it is another than the one written (a fresh start
	 * has none); "none" when a process lost it (exec). */
	ce->share_at = p->share ? (p->share->at_ns ? p->share->at_ns : 1) : 0;
	if (ce->share_at != (fresh ? 0 : pe->share_at)) {
		rec_put_share(&body, p->share);
		put_section(secs, REC_SECTION_SHARE, &body);
		nsecs++;
		if (rec_put_share_counts(&body, p->share)) {
			put_section(secs, REC_SECTION_SHARE_COUNTS, &body);
			nsecs++;
		}
	}
	/* The parent: known at a fresh start, or changed (a parent's exit reparents its
	 * children); else the reader keeps the one it has (0 at a fresh start). */
	ce->ppid = p->ppid;
	if (p->ppid != (fresh ? 0 : pe->ppid)) {
		rbuf_varint(&body, (uint64_t)p->ppid);
		put_section(secs, REC_SECTION_PARENT, &body);
		nsecs++;
	}
	return nsecs;
}

static bool same_bytes(const struct rbuf *a, const struct rbuf *b)
{
	return a->len == b->len && !memcmp(a->p, b->p, a->len);
}

/*
 * Process p's entry (after the previous entry's pid prev_pid): ce becomes what the next
 * frame compares with, pe is what the last one wrote (NULL: write it in full).  0 or -ENOMEM.
 */
static int encode_proc(struct rec_encoder *enc, const struct json_frame *f, size_t i,
		       struct prev_entry *pe, struct prev_entry *ce, int prev_pid,
		       struct rbuf *out)
{
	const struct proc *p = f->procs[i];
	struct rbuf patch = { 0 }, secs = { 0 };
	uint8_t tag = 0;
	unsigned nsecs;
	int err = 0;

	ce->pid = p->pid;
	encode_counters(&ce->counters, p, f->proc_bytes[i]);
	if (encode_layout(&ce->layout, p, NULL))
		err = -ENOMEM;
	if (!pe || !same_bytes(&pe->counters, &ce->counters))
		tag |= REC_TAG_COUNTERS;
	if (!pe || !same_bytes(&pe->layout, &ce->layout)) {
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
	nsecs = encode_proc_sections(enc, f, p, pe, ce, !pe || (tag & REC_TAG_LAYOUT), &secs,
				     &err);
	if (nsecs)
		tag |= REC_TAG_SECTIONS;
	rbuf_varint(out, p->pid - prev_pid);
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
	return err;
}

int rec_encode(struct rec_encoder *enc, const struct json_frame *f, bool keyframe,
	       uint32_t flags, struct rbuf *out)
{
	struct prev_entry *cur;
	size_t i, ncur = 0;
	int prev_pid = 0, err = 0;

	cur = calloc(f->n ? f->n : 1, sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	encode_header(out, f, flags);
	for (i = 0; i < f->n; i++) {
		const struct proc *p = f->procs[i];

		if (!p->ready)
			continue;
		if (encode_proc(enc, f, i, keyframe ? NULL : find_prev(enc, p->pid), &cur[ncur++],
				prev_pid, out))
			err = -ENOMEM;
		prev_pid = p->pid;
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
