// SPDX-License-Identifier: GPL-2.0
/*
 * The web view's JSON (out/web.h): the process list, and one process's mappings sent as
 * what changed.  Both are written from a web_snap (out/web_snap.h), a copy taken while the
 * source was held, so none of this runs under the engine's lock.
 *
 * What changed is exact and found without writing text: each viewed process keeps the copy
 * its last answer was written from, and the next answer xors each page set (and with
 * --sharing each class's set) with that copy's (pageset_xor: container by container); a
 * mapping with a page in the difference changed, and so did one whose bounds, attributes,
 * path or heat levels (a fingerprint of them) differ.  A page evicted and another faulted
 * in within one interval, counts unchanged, is in the difference like any other change.
 *
 * Page runs are sent as flat triples [gap, length, state]: gap is the pages between the end
 * of the run before (the mapping's start, first) and this one's start, which are not
 * resident; state 1 resident, 2 swapped, 3 untracked.  A 4 Mi-page mapping is a few numbers
 * unless it is fragmented, and a fragmented one is short numbers (half the bytes that
 * offsets from the mapping's start would take).  With --sharing, "share" gives the pages
 * mapped more than once the same way, by class, and the list USS and PSS.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "model/share_figs.h"
#include "out/web_json.h"

static void put_pages(struct buf *b, uint64_t mapped, const uint64_t c[PS_COUNT])
{
	json_buf_put(b, "\"mapped\": %" PRIu64 ", \"resident\": %" PRIu64 ", \"swapped\": %"
	    PRIu64 ", \"untracked\": %" PRIu64, mapped, c[PS_RESIDENT], c[PS_SWAPPED],
	    c[PS_UNTRACKED]);
}

static void put_head(struct buf *b, const struct web_snap *s)
{
	json_buf_put(b, "{\"time\": %.6f, \"monotonic\": %.6f, \"mode\": \"%s\"", s->wall,
	    s->mono_ns / 1e9, s->mode);
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)		/* FNV-1a */
		h = (h ^ c[i]) * 0x100000001b3ULL;
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ULL

#define TENTHS "%.1f"		/* a rate's and a PSS's text */

/* Do a and b print differently?  The page has what was printed; a change below the digit
 * is not sent, and the rows kept for the next diff (web_rows) print as the page's do. */
static bool tenths_differ(double a, double b)
{
	char x[32], y[32];

	snprintf(x, sizeof(x), TENTHS, a);
	snprintf(y, sizeof(y), TENTHS, b);
	return strcmp(x, y) != 0;
}

/*
 * Row r's text, or with o (the same pid's row as the page has it) only the fields whose
 * text differs from o's, after ", " if comma; nothing at all when none differs (the pid
 * is written with the first field that does, so a quiet row costs compares only).
 * Whether anything was written (always, without o).  A row whose share flag differs from
 * o's is sent whole (rows_diff): its uss and pss are there or not.
 */
static bool put_fields(struct buf *b, const struct web_row *r, const struct web_row *o,
		       bool comma)
{
	bool any = false;

#define FIELD(differs, ...)						\
	do {								\
		if (!o || (differs)) {					\
			if (!any)					\
				json_buf_put(b, "%s{\"pid\": %d",	\
					     comma ? ", " : "", r->pid);	\
			any = true;					\
			json_buf_put(b, __VA_ARGS__);			\
		}							\
	} while (0)
	FIELD(r->ppid != o->ppid, ", \"ppid\": %d", r->ppid);
	FIELD(memcmp(r->comm, o->comm, sizeof(r->comm)), ", \"comm\": ");
	if (!o || memcmp(r->comm, o->comm, sizeof(r->comm)))
		json_buf_str(b, r->comm);
	FIELD(r->exited != o->exited, ", \"state\": \"%s\"", r->exited ? "exited" : "running");
	FIELD(r->faults != o->faults, ", \"faults\": %" PRIu64, r->faults);
	FIELD(tenths_differ(r->fault_rate, o->fault_rate), ", \"fault_rate\": " TENTHS,
	      r->fault_rate);
	FIELD(r->mapped != o->mapped, ", \"mapped\": %" PRIu64, r->mapped);
	FIELD(r->counts[PS_RESIDENT] != o->counts[PS_RESIDENT], ", \"resident\": %" PRIu64,
	      r->counts[PS_RESIDENT]);
	FIELD(r->counts[PS_SWAPPED] != o->counts[PS_SWAPPED], ", \"swapped\": %" PRIu64,
	      r->counts[PS_SWAPPED]);
	FIELD(r->counts[PS_UNTRACKED] != o->counts[PS_UNTRACKED], ", \"untracked\": %" PRIu64,
	      r->counts[PS_UNTRACKED]);
	if (r->share) {
		FIELD(r->uss != o->uss, ", \"uss\": %" PRIu64, r->uss);
		FIELD(tenths_differ(r->pss, o->pss), ", \"pss\": " TENTHS, r->pss);
	}
	FIELD(r->maps != o->maps, ", \"mappings\": %zu", r->maps);
#undef FIELD
	if (any)
		json_buf_put(b, "}");
	return any;
}

static void put_row(struct buf *b, const struct web_row *r, bool comma)
{
	put_fields(b, r, NULL, comma);
}

static void put_rows(struct buf *b, const struct web_snap *s)
{
	json_buf_put(b, ", \"processes\": [");
	for (size_t i = 0; i < s->n; i++)
		put_row(b, &s->rows[i], i);
	json_buf_put(b, "]}");
}

int web_json_list(const struct web_snap *s, struct buf *b, struct web_sent *out)
{
	size_t head;

	put_head(b, s);
	head = b->len;
	put_rows(b, s);
	if (b->oom)
		return -ENOMEM;
	/* The rows' text is the list's shape: the time before it is not. */
	*out = (struct web_sent){ .shape = hash_bytes(HASH_SEED, b->p + head, b->len - head) };
	return 0;
}

/* What rows_diff writes, each list comma-separated in its own buffer: the rows of s new
 * since was or sent whole (a share flag changed), the fields that changed of the others
 * (only those, a row each), the pids gone; and how many of each. */
struct rows_out {
	struct buf whole, fields, gone;
	size_t n_whole, n_fields, n_gone;
};

/* One walk over s's rows and was's, both in pid order, each row's fields compared and
 * written at once. */
static void rows_diff(const struct web_snap *s, const struct web_rows *was, struct rows_out *d)
{
	size_t i = 0, j = 0;

	while (i < s->n || j < was->n) {
		const struct web_row *r = i < s->n ? &s->rows[i] : NULL;
		const struct web_row *o = j < was->n ? &was->r[j] : NULL;

		if (o && (!r || o->pid < r->pid)) {		/* gone */
			json_buf_put(&d->gone, "%s%d", d->n_gone++ ? "," : "", o->pid);
			j++;
			continue;
		}
		if (!o || r->pid < o->pid || r->share != o->share) {	/* new, or whole */
			put_row(&d->whole, r, d->n_whole++);
		} else if (put_fields(&d->fields, r, o, d->n_fields)) {	/* changed */
			d->n_fields++;
		}
		if (o && o->pid == r->pid)
			j++;
		i++;
	}
}

static void put_buf(struct buf *b, const struct buf *part)
{
	if (part->oom)
		b->oom = true;
	else if (part->len)
		json_buf_mem(b, part->p, part->len);
}

int web_json_list_event(const struct web_snap *s, struct web_rows *was, struct buf *b)
{
	uint64_t seq = was->seq + 1;
	struct rows_out d = { 0 };
	size_t changed;

	rows_diff(s, was, &d);
	changed = d.n_whole + d.n_fields;
	if (was->seq && !changed && !d.n_gone)
		goto out;
	if (!was->seq || changed + d.n_gone > s->n / 2) {
		json_buf_put(b, "event: list\ndata: ");
		put_head(b, s);
		json_buf_put(b, ", \"seq\": %" PRIu64, seq);
		if (d.n_whole == s->n && s->n) {	/* every row new: the walk wrote them */
			json_buf_put(b, ", \"processes\": [");
			put_buf(b, &d.whole);
			json_buf_put(b, "]}");
		} else {
			put_rows(b, s);
		}
	} else {
		json_buf_put(b, "event: listdiff\ndata: ");
		put_head(b, s);
		json_buf_put(b, ", \"seq\": %" PRIu64 ", \"base\": %" PRIu64 ", \"rows\": %zu, "
			     "\"changed\": [", seq, was->seq, s->n);
		put_buf(b, &d.whole);
		json_buf_put(b, "], \"updated\": [");
		put_buf(b, &d.fields);
		json_buf_put(b, "], \"removed\": [");
		put_buf(b, &d.gone);
		json_buf_put(b, "]}");
	}
	json_buf_put(b, "\n\n");
	if (!b->oom && array_reserve_n(was->r, s->n, was->cap, 64))
		b->oom = true;
	if (b->oom) {
		web_rows_free(was);	/* the next event is the whole list */
		goto out;
	}
	if (s->n)
		memcpy(was->r, s->rows, s->n * sizeof(*s->rows));
	was->n = s->n;
	was->seq = seq;
out:
	free(d.whole.p);
	free(d.fields.p);
	free(d.gone.p);
	return b->oom ? -ENOMEM : 0;
}

void web_rows_free(struct web_rows *r)
{
	free(r->r);
	memset(r, 0, sizeof(*r));
}

struct runs_ctx {
	struct buf *b;
	uint64_t last;			/* where the run before ended (the mapping's start first) */
	bool first;
};

static int put_run(uint64_t start, uint64_t end, enum page_state s, void *arg)
{
	struct runs_ctx *c = arg;

	if (s == PS_NOT_RESIDENT)
		return 0;
	json_buf_u64s(c->b, !c->first, (uint64_t[]){ start - c->last, end - start, (uint64_t)s }, 3);
	c->last = end;
	c->first = false;
	return 0;
}

/* The process's warm heat blocks, in address order, read once per request (not once per
 * mapping: a big program has a thousand mappings and as many thousand blocks). */
struct warm {
	uint64_t page;			/* the block's first page */
	int level;			/* 1..WEB_HEAT_LEVELS: which of the page's heat colours */
};

/* Where each heat colour starts, in decayed faults a block (the page's legend says so). */
static const float heat_levels[WEB_HEAT_LEVELS] = { 0.05f, 0.5f, 2.0f, 8.0f };

int web_json_heat_level(float v)
{
	int l = 0;

	while (l < WEB_HEAT_LEVELS && v >= heat_levels[l])
		l++;
	return l;
}

struct warm_set {
	struct warm *w;
	size_t n, cap;
};

static int warm_cmp(const void *a, const void *b)
{
	const struct warm *x = a, *y = b;

	return x->page < y->page ? -1 : x->page > y->page;
}

static int warm_collect(const struct proc *p, uint64_t now_ns, struct warm_set *ws)
{
	for (uint32_t i = 0; i < p->heat.cap; i++) {
		const struct heat_entry *h = &p->heat.slots[i];
		uint64_t page = (h->block - 1) << HEAT_BLOCK_SHIFT;
		int level;

		if (!h->block)
			continue;
		level = web_json_heat_level(heat_entry_value(h, now_ns));	/* the block's heat */
		if (!level)
			continue;
		if (array_reserve(ws->w, ws->n, ws->cap, 256))
			return -ENOMEM;
		ws->w[ws->n++] = (struct warm){ page, level };
	}
	if (ws->n)	/* qsort(NULL, 0, ...) is undefined */
		qsort(ws->w, ws->n, sizeof(*ws->w), warm_cmp);
	return 0;
}

/* The first warm block of ws that ends after page s. */
static size_t warm_from(const struct warm_set *ws, uint64_t s)
{
	size_t lo = 0, hi = ws->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ws->w[mid].page + (1u << HEAT_BLOCK_SHIFT) <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Heat of each warm block of m: [block offset from m's start, level].  Levels, not values:
 * a value decays every poll, a level changes only when the colour would. */
static void put_heat(struct buf *b, const struct warm_set *ws, const struct mapping *m)
{
	uint64_t s = mapping_start(m), e = mapping_end(m);
	bool first = true;

	json_buf_put(b, ", \"heat\": [");
	for (size_t i = warm_from(ws, s); i < ws->n && ws->w[i].page < e; i++) {
		json_buf_put(b, "%s%" PRId64 ",%d", first ? "" : ",", (int64_t)(ws->w[i].page - s),
		    ws->w[i].level);
		first = false;
	}
	json_buf_put(b, "]");
}

/* --sharing: the mapping's pages mapped by more than one process, as [offset from its
 * start, length, class] (class 1 by 2, 2 by 3-8, 3 by 9 or more: model/share.h); the
 * other resident pages are private. */
static void put_share_runs(struct buf *b, const struct proc *p, const struct mapping *m)
{
	uint64_t s = mapping_start(m), e = mapping_end(m), rs, re;
	bool first = true;

	if (!p->share)
		return;
	json_buf_put(b, ", \"share\": [");
	for (int c = SHC_TWO; c < SHC_COUNT; c++)
		for (rs = s; pageset_next_run(p->share->cls[c], rs, e, &rs, &re); rs = re) {
			json_buf_u64s(b, !first, (uint64_t[]){ rs - s, re - rs, (uint64_t)c }, 3);
			first = false;
		}
	json_buf_put(b, "]");
}

static void put_mapping(struct buf *b, const struct proc *p, const struct mapping *m,
			const struct warm_set *ws)
{
	uint64_t s = mapping_start(m), e = mapping_end(m);
	struct runs_ctx rc = { .b = b, .last = s, .first = true };
	char perms[5];

	mapping_perms_str(m->perms, perms);
	json_buf_put(b, "{\"start\": %" PRIu64 ", \"end\": %" PRIu64 ", \"perms\": \"%s\", \"offset\": %"
	    PRIu64 ", \"kind\": \"%s\", \"tracker\": \"%s\", \"path\": ", s, e, perms, m->offset,
	    map_kind_name(m->kind), m->flags & MF_UFFD ? "userfaultfd" : "pagemap");
	json_buf_str(b, m->path ? m->path : "");
	json_buf_put(b, ", \"runs\": [");
	model_runs(p, s, e, put_run, &rc);
	json_buf_put(b, "]");
	put_heat(b, ws, m);
	put_share_runs(b, p, m);
	json_buf_put(b, "}");
}

/* What of a mapping's text the page sets do not decide: its bounds, attributes, path and
 * warm blocks' levels (the page states are compared by changed_maps). */
static uint64_t fingerprint(const struct mapping *m, const struct warm_set *ws)
{
	uint64_t s = mapping_start(m), e = mapping_end(m);
	uint64_t v[] = { s, e, m->perms, m->flags, m->offset, m->kind };
	uint64_t h = hash_bytes(HASH_SEED, v, sizeof(v));

	if (m->path)
		h = hash_bytes(h, m->path, strlen(m->path));
	for (size_t i = warm_from(ws, s); i < ws->n && ws->w[i].page < e; i++)
		h = hash_bytes(h, &ws->w[i], sizeof(ws->w[i]));
	return h;
}

/* dirty[i] for each mapping ms[i] (address order) holding a page of x. */
static void mark_changed(const struct pageset *x, const struct mapping *const *ms, size_t n,
			 bool *dirty)
{
	uint64_t from = 0, rs, re;
	size_t i = 0;

	while (i < n && pageset_next_run(x, from, UINT64_MAX, &rs, &re)) {
		while (i < n && mapping_end(ms[i]) <= rs)
			i++;
		if (i == n)
			break;
		if (mapping_start(ms[i]) < re) {
			dirty[i] = true;	/* the rest of it need not be looked at */
			from = mapping_end(ms[i++]);
		} else {
			from = mapping_start(ms[i]);
		}
	}
}

static int mark_xor(const struct pageset *a, const struct pageset *b,
		    const struct mapping *const *ms, size_t n, bool *dirty)
{
	struct pageset *x = pageset_xor(a, b);

	if (!x)
		return -ENOMEM;
	mark_changed(x, ms, n, dirty);
	pageset_free(x);
	return 0;
}

/* The mappings of p where a page's state or sharing class differs from base's (NULL: every
 * mapping).  0 or -ENOMEM. */
static int changed_maps(const struct proc *base, const struct proc *p,
			const struct mapping *const *ms, size_t n, bool *dirty)
{
	int err = 0;

	if (!base || !base->share != !p->share) {	/* "share" comes or goes: all */
		memset(dirty, true, n * sizeof(*dirty));
		return 0;
	}
	for (int st = PS_RESIDENT; st < PS_COUNT && !err; st++)
		err = mark_xor(base->set[st], p->set[st], ms, n, dirty);
	for (int c = SHC_TWO; p->share && c < SHC_COUNT && !err; c++)
		err = mark_xor(base->share->cls[c], p->share->cls[c], ms, n, dirty);
	return err;
}

static void seen_reset(struct web_seen *s)
{
	free(s->m);
	proc_free(s->base);
	s->m = NULL;
	s->base = NULL;
	s->n = 0;
	s->key = 0;
}

/* The cache entry for p (the least recently used one is reused for a process not seen). */
static struct web_seen *seen_for(struct web_deltas *d, const struct proc *p)
{
	struct web_seen *old = &d->procs[0];

	for (size_t i = 0; i < WEB_SEEN_PROCS; i++) {
		struct web_seen *s = &d->procs[i];

		if (s->pid == p->pid && s->serial == p->serial && s->used)
			return s;
		if (s->used < old->used)
			old = s;
	}
	seen_reset(old);
	old->pid = p->pid;
	old->serial = p->serial;
	old->used = 0;
	return old;
}

static struct web_mark *mark_find(struct web_seen *s, uint64_t start)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {		/* marks are kept in address order */
		size_t mid = (lo + hi) / 2;

		if (s->m[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->m[lo].start == start ? &s->m[lo] : NULL;
}

/* Writes the mappings whose marks say they changed after since, then every start. */
static size_t put_changed(struct buf *b, const struct proc *p, const struct mapping *const *ms,
			  const struct web_mark *next, size_t n, uint64_t since,
			  const struct warm_set *ws)
{
	size_t sent = 0;

	json_buf_put(b, ", \"mappings\": [");
	for (size_t i = 0; i < n; i++) {
		if (next[i].gen <= since)
			continue;
		json_buf_put(b, sent++ ? ", " : "");
		put_mapping(b, p, ms[i], ws);
	}
	json_buf_put(b, "], \"layout\": [");
	for (size_t i = 0; i < n; i++)
		json_buf_put(b, "%s%" PRIu64, i ? "," : "", next[i].start);
	json_buf_put(b, "]");
	return sent;
}

/* The mappings of p that changed after generation since, and every mapping's start (the
 * page drops the ones that are gone; out->shape takes them in).  On success p becomes the
 * entry's base (the next poll's comparison) and *taken says so; the marks are rebuilt. */
static void put_mappings(struct web_deltas *d, struct proc *p, uint64_t since,
			 uint64_t now_ns, struct buf *b, struct web_sent *out, bool *taken)
{
	struct web_seen *s = seen_for(d, p);
	size_t n = model_count_maps(p), i = 0;
	const struct mapping **ms = calloc(n + 1, sizeof(*ms));
	struct web_mark *next = calloc(n + 1, sizeof(*next));
	bool *dirty = calloc(n + 1, sizeof(*dirty));
	struct warm_set ws = { 0 };

	/* This frame's copy, taken by an answer before: no page differs from the base. */
	bool reuse = p == s->base;

	d->gen++;
	s->used = d->gen;
	if (!ms || !next || !dirty || warm_collect(p, now_ns, &ws))
		goto oom;
	for (const struct mapping *m = model_first(p); m && i < n; m = model_next(m))
		ms[i++] = m;
	if (!reuse && changed_maps(s->base, p, ms, n, dirty))
		goto oom;
	for (i = 0; i < n; i++) {
		const struct web_mark *old = mark_find(s, mapping_start(ms[i]));
		uint64_t fp = fingerprint(ms[i], &ws);
		bool same = old && old->fp == fp && !dirty[i];

		next[i] = (struct web_mark){ mapping_start(ms[i]), same ? old->gen : d->gen, fp };
	}
	out->maps = put_changed(b, p, ms, next, n, since, &ws);
	for (i = 0; i < n; i++)
		out->shape = hash_bytes(out->shape, &next[i].start, sizeof(next[i].start));
	if (b->oom)
		goto oom;
	free(s->m);
	if (!reuse)
		proc_free(s->base);
	s->m = next;
	s->n = n;
	s->base = p;
	*taken = true;
	free(ms);
	free(dirty);
	free(ws.w);
	return;
oom:
	/* Forget the process: its next answer is everything, whatever since says. */
	seen_reset(s);
	b->oom = true;
	free(ms);
	free(next);
	free(dirty);
	free(ws.w);
}

int web_json_process(struct web_deltas *d, struct web_snap *snap, uint64_t since,
		     struct buf *b, struct web_sent *out)
{
	struct proc *p = snap->p;
	uint64_t c[PS_COUNT];
	struct share_figs sf;
	bool taken = false;
	size_t head;

	put_head(b, snap);
	head = b->len;
	json_buf_put(b, ", \"epoch\": %" PRIu64 ", \"pid\": %d, \"ppid\": %d, \"comm\": ",
		     d->epoch, p->pid, p->ppid);
	json_buf_str(b, p->comm);
	json_buf_put(b, ", \"state\": \"%s\", \"page_size\": %d, ",
		     p->exited ? "exited" : "running", 1 << PAGE_SHIFT_4K);
	model_totals(p, c);
	put_pages(b, p->mapped_pages, c);
	if (p->share) {		/* --sharing: USS and PSS in pages (a pass has read it) */
		share_totals(p, &sf);
		json_buf_put(b, ", \"uss\": %" PRIu64 ", \"pss\": %.1f", sf.uss >> PAGE_SHIFT_4K,
			     (double)sf.pss / (1 << PAGE_SHIFT_4K));
	}
	/* The figures before the mappings, then the layout, are the shape (not the time). */
	*out = (struct web_sent){ .shape = hash_bytes(HASH_SEED, b->p ? b->p + head : "",
						      b->oom ? 0 : b->len - head) };
	put_mappings(d, p, since, snap->mono_ns, b, out, &taken);
	if (taken && !snap->shared) {
		struct web_seen *s = seen_for(d, p);

		s->key = snap->key;
		s->wall = snap->wall;
		s->mono_ns = snap->mono_ns;
		memcpy(s->mode, snap->mode, sizeof(s->mode));
		s->shown = snap->shown;
	}
	if (taken)
		snap->p = NULL;
	json_buf_put(b, ", \"gen\": %" PRIu64 ", \"since\": %" PRIu64 "}", d->gen, since);
	return b->oom ? -ENOMEM : 0;
}

bool web_deltas_share(struct web_deltas *d, const struct proc *p, uint64_t key,
		      struct web_snap *snap)
{
	for (size_t i = 0; i < WEB_SEEN_PROCS; i++) {
		struct web_seen *s = &d->procs[i];

		if (s->used && s->base && s->pid == p->pid && s->serial == p->serial &&
		    s->key == key) {
			*snap = (struct web_snap){ .key = key, .wall = s->wall,
						   .mono_ns = s->mono_ns, .p = s->base,
						   .shared = true };
			memcpy(snap->mode, s->mode, sizeof(snap->mode));
			return true;
		}
	}
	return false;
}

bool web_deltas_unchanged(struct web_deltas *d, const struct proc *p,
			  const struct proc_shown *now, const struct web_snap *head,
			  struct web_snap *snap)
{
	for (size_t i = 0; i < WEB_SEEN_PROCS; i++) {
		struct web_seen *s = &d->procs[i];

		if (s->used && s->base && s->pid == p->pid && s->serial == p->serial &&
		    model_shown_same(&s->shown, now)) {
			s->key = head->key;
			s->wall = head->wall;
			s->mono_ns = head->mono_ns;
			memcpy(s->mode, head->mode, sizeof(s->mode));
			return web_deltas_share(d, p, head->key, snap);
		}
	}
	return false;
}

void web_deltas_free(struct web_deltas *d)
{
	for (size_t i = 0; i < WEB_SEEN_PROCS; i++)
		seen_reset(&d->procs[i]);
	memset(d, 0, sizeof(*d));
}
