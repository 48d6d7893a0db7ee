// SPDX-License-Identifier: GPL-2.0
/*
 * The decoder of frame payloads (rec_codec.h): the previous frame's processes, and each
 * field of an untrusted payload checked against rec_format.h's limits before it is used.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rec/rec_codec.h"
#include "rec/rec_codec_int.h"
#include "rec/rec_format.h"
#include "rec/rec_share.h"
#include "rec/rec_stacks.h"

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
	char *files;			/* the frame's page cache members, or NULL */
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
	free(dec->files);
	free(dec->touches);
	dec->files = NULL;
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
		st = rec_state_after(fresh ? PS_NOT_RESIDENT : model_page_state(p, x), code);
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
		model_changed(p);
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
		float v = rcur_f32(&values);
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

/* REC_SECTION_SHARE: the process's sharing pass replaces the one it had. */
static int decode_share(struct rcur *c, struct dproc *d, char *why, size_t whylen)
{
	struct share *s;
	int err = rec_get_share(c, &s, why, whylen);

	if (err)
		return err;
	share_free(d->p->share);
	d->p->share = s;
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
		else if (!d && kind == REC_SECTION_FILES) {
			free(dec->files);
			dec->files = rcur_str(&body, REC_MAX_FILES_TEXT);
			if (!dec->files)
				return bad(why, whylen, "bad page cache section");
			f->files_text = dec->files;
		}
		else if (d && kind == REC_SECTION_HEAT)
			err = decode_heat(&body, dec, d, why, whylen);
		else if (d && kind == REC_SECTION_PARENT)
			err = decode_parent(&body, d, why, whylen);
		else if (d && kind == REC_SECTION_SHARE)
			err = decode_share(&body, d, why, whylen);
		else if (d && kind == REC_SECTION_SHARE_COUNTS)
			err = rec_get_share_counts(&body, d->p->share, why, whylen);
		else if (d && kind == REC_SECTION_FIRST_TOUCH) {
			free(d->touches);
			err = rec_get_touches(&body, dec->mono_ns, &d->touches, &d->ntouches, why,
					      whylen);
		}
	}
	return err;
}

/* The frame's header (rec_codec_encode.c's encode_header) into f; *nprocs: the entries
 * that follow. */
static int decode_header(struct rcur *c, struct rec_decoder *dec, struct json_frame *f,
			 uint32_t *flags, uint64_t *nprocs, char *why, size_t whylen)
{
	uint64_t i, nstat;

	*flags = rcur_varint(c);
	nstat = rcur_varint(c);
	if (c->bad || nstat > rcur_left(c))
		return bad(why, whylen, "bad statistics count");
	for (i = 0; i < nstat; i++) {
		uint64_t v = rcur_varint(c), *slot = rec_stat_u64(&f->stats, i);

		if (slot)
			*slot = v;
	}
	nstat = rcur_varint(c);
	if (c->bad || nstat > rcur_left(c) / 8)
		return bad(why, whylen, "bad statistics count");
	for (i = 0; i < nstat; i++) {
		double v = rcur_f64(c), *slot = rec_stat_f64(&f->stats, i);

		if (slot)
			*slot = v;
	}
	f->stats.interval_scale = rcur_varint(c);
	dec->mode = rcur_str(c, 64);
	f->interval_ms = rcur_varint(c);
	f->engine_bytes = rcur_varint(c);
	f->nprocs = rcur_varint(c);
	dec->extra = rcur_str(c, REC_MAX_EXTRA);
	*nprocs = rcur_varint(c);
	/* Each process entry takes at least 2 bytes. */
	if (c->bad || *nprocs > rcur_left(c) / 2)
		return bad(why, whylen, "bad frame header fields");
	f->mode = dec->mode;
	f->extra_stats = dec->extra;
	return 0;
}

/*
 * Process entry i (after the one of *pid, which becomes this one's) into d: in full, as a
 * patch on the previous frame's, or carried over from it.  *budget: the pages in runs the
 * frame may still hold.  d->p is set once d holds a process (to be freed with the frame).
 */
static int decode_proc(struct rcur *c, struct rec_decoder *dec, uint64_t i, bool keyframe,
		       int *pid, uint64_t *budget, struct dproc *d, struct json_frame *f,
		       char *why, size_t whylen)
{
	uint64_t delta = rcur_varint(c);
	uint8_t tag = rcur_u8(c);
	struct dproc *old;
	struct counters k;
	int err;

	if (c->bad || delta == 0 || delta > REC_MAX_PID - (uint64_t)*pid || tag > 15 ||
	    ((tag & REC_TAG_LAYOUT) && (tag & REC_TAG_PATCH)))
		return bad(why, whylen, "process entry %" PRIu64 ": bad pid or tag", i);
	*pid += delta;
	old = find_dproc(dec->cur, dec->ncur, *pid);
	if ((keyframe || !old || !old->p) &&
	    (tag & ~REC_TAG_SECTIONS) != (REC_TAG_COUNTERS | REC_TAG_LAYOUT))
		return bad(why, whylen, "process %d: a delta with no earlier state", *pid);
	/* Counters come first; without them the process keeps the previous ones. */
	if (tag & REC_TAG_COUNTERS) {
		decode_counters(c, &k);
	} else {
		k.exited = old->p->exited;
		k.faults = old->p->faults;
		k.fault_rate = old->p->fault_rate;
		k.bytes = old->bytes;
	}
	if (c->bad)
		return bad(why, whylen, "process %d: cut short", *pid);
	d->pid = *pid;
	if (tag & (REC_TAG_LAYOUT | REC_TAG_PATCH)) {
		err = decode_layout(c, d, *pid, tag & REC_TAG_PATCH ? old : NULL, budget, why,
				    whylen);
		if (err)
			return err;
		if (tag & REC_TAG_PATCH) {	/* a patch keeps what it does not say */
			d->touches = old->touches;
			d->ntouches = old->ntouches;
			old->touches = NULL;
		}
	} else {
		if (old->state_pages > *budget)
			return bad(why, whylen, "more than %llu pages in runs in one frame",
				   (unsigned long long)REC_MAX_STATE_PAGES);
		*budget -= old->state_pages;
		*d = *old;
		old->p = NULL;	/* moved */
		old->touches = NULL;
	}
	d->p->exited = k.exited;
	d->p->faults = k.faults;
	d->p->fault_rate = k.fault_rate;
	d->bytes = k.bytes;
	if (tag & REC_TAG_SECTIONS) {
		err = decode_sections(c, dec, d, f, why, whylen);
		if (err)
			return err;
	}
	if (c->bad)
		return bad(why, whylen, "process %d: cut short", *pid);
	return 0;
}

/* The frame's first touches (its processes' --stacks sections), against the table as it
 * now is. */
static int set_frame_touches(struct rec_decoder *dec, const struct dproc *cur, size_t ncur,
			     struct json_frame *f, char *why, size_t whylen)
{
	int err = 0;

	stacks_clear_touches(dec->stacks);
	for (size_t i = 0; i < ncur && !err; i++)
		if (cur[i].ntouches)
			err = stacks_set_touches(dec->stacks, cur[i].pid, cur[i].touches,
						 cur[i].ntouches);
	if (err == -EINVAL)
		err = bad(why, whylen, "first-touch stacks out of order or beyond the table");
	f->stacks = dec->stacks;
	return err;
}

/* f's processes: the decoder's, as the arrays a json_frame holds. */
static int publish(struct rec_decoder *dec, struct json_frame *f)
{
	size_t n = dec->ncur;

	dec->procs = calloc(n ? n : 1, sizeof(*dec->procs));
	dec->bytes = calloc(n ? n : 1, sizeof(*dec->bytes));
	if (!dec->procs || !dec->bytes)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		dec->procs[i] = dec->cur[i].p;
		dec->bytes[i] = dec->cur[i].bytes;
	}
	f->procs = dec->procs;
	f->proc_bytes = dec->bytes;
	f->n = n;
	return 0;
}

static int decode(struct rec_decoder *dec, struct rcur *c, bool keyframe, struct json_frame *f,
		  uint32_t *flags, char *why, size_t whylen)
{
	uint64_t n = 0, i, budget = REC_MAX_STATE_PAGES;
	struct dproc *cur;
	size_t ncur = 0;
	int pid = 0, err;

	memset(f, 0, sizeof(*f));
	err = decode_header(c, dec, f, flags, &n, why, whylen);
	if (err)
		return err;
	cur = calloc(n ? n : 1, sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	for (i = 0; i < n && !err; i++) {
		err = decode_proc(c, dec, i, keyframe, &pid, &budget, &cur[ncur], f, why, whylen);
		ncur += cur[ncur].p != NULL;
	}
	if (!err)
		err = decode_sections(c, dec, NULL, f, why, whylen);
	if (!err && rcur_left(c))
		err = bad(why, whylen, "%zu bytes after the last process", rcur_left(c));
	if (!err && dec->stacks)
		err = set_frame_touches(dec, cur, ncur, f, why, whylen);
	free_dprocs(dec->cur, dec->ncur);
	dec->cur = cur;
	dec->ncur = ncur;
	return err ? err : publish(dec, f);
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
