// SPDX-License-Identifier: GPL-2.0
/*
 * The web view's JSON (out/web.h): the process list, and one process's mappings sent as
 * what changed.  A mapping is "changed" when the text it would be sent as differs from the
 * last text seen for it (a 64-bit hash of it is kept per mapping), so one rule covers its
 * runs, its heat, its name and its bounds, live or replayed.
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
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "model/share_figs.h"
#include "out/web_json.h"

static void put_pages(struct buf *b, const struct proc *p)
{
	uint64_t c[PS_COUNT];

	model_totals(p, c);
	json_buf_put(b, "\"mapped\": %" PRIu64 ", \"resident\": %" PRIu64 ", \"swapped\": %" PRIu64
	    ", \"untracked\": %" PRIu64, p->mapped_pages, c[PS_RESIDENT], c[PS_SWAPPED],
	    c[PS_UNTRACKED]);
}

/* --sharing: the process's USS and PSS in pages (a pass has read it), else nothing. */
static void put_share_totals(struct buf *b, const struct proc *p)
{
	struct share_figs f;

	if (!p->share)
		return;
	share_totals(p, &f);
	json_buf_put(b, ", \"uss\": %" PRIu64 ", \"pss\": %.1f", f.uss >> PAGE_SHIFT_4K,
	    (double)f.pss / (1 << PAGE_SHIFT_4K));
}

static void put_head(struct buf *b, const struct json_frame *f)
{
	json_buf_put(b, "{\"time\": %.6f, \"monotonic\": %.6f, \"mode\": \"%s\"", f->wall,
	    f->mono_ns / 1e9, f->mode);
}

int web_json_list(const struct json_frame *f, struct buf *b)
{
	bool any = false;

	put_head(b, f);
	json_buf_put(b, ", \"processes\": [");
	for (size_t i = 0; i < f->n; i++) {
		const struct proc *p = f->procs[i];

		if (!p->ready)
			continue;
		json_buf_put(b, "%s{\"pid\": %d, \"ppid\": %d, \"comm\": ", any ? ", " : "", p->pid,
		    p->ppid);
		json_buf_str(b, p->comm);
		json_buf_put(b, ", \"state\": \"%s\", \"faults\": %" PRIu64 ", \"fault_rate\": %.1f, ",
		    p->exited ? "exited" : "running", p->faults, p->fault_rate);
		put_pages(b, p);
		put_share_totals(b, p);
		json_buf_put(b, ", \"mappings\": %zu}", model_count_maps(p));
		any = true;
	}
	json_buf_put(b, "]}");
	return b->oom ? -ENOMEM : 0;
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

static int heat_level(float v)
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
		level = heat_level(heat_range(&p->heat, page, page + (1u << HEAT_BLOCK_SHIFT),
					      now_ns));
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

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)		/* FNV-1a */
		h = (h ^ c[i]) * 0x100000001b3ULL;
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ULL

/*
 * What decides, without writing its text, whether a mapping may have changed: its bounds,
 * attributes, path, the count of each state in it and its warm blocks.  A change that keeps
 * every count (one page evicted, another faulted in the same interval) is not seen by it:
 * such a mapping is caught by the rotation in put_mappings, which writes every mapping's
 * text at least once every WEB_RECHECK polls.
 */
static uint64_t fingerprint(const struct proc *p, const struct mapping *m,
			    const struct warm_set *ws)
{
	uint64_t s = mapping_start(m), e = mapping_end(m);
	uint64_t v[] = { s, e, m->perms, m->flags, m->offset, m->kind,
			 model_count(p, PS_RESIDENT, s, e), model_count(p, PS_SWAPPED, s, e),
			 model_count(p, PS_UNTRACKED, s, e) };
	uint64_t h = hash_bytes(HASH_SEED, v, sizeof(v));

	if (m->path)
		h = hash_bytes(h, m->path, strlen(m->path));
	for (int c = SHC_TWO; p->share && c < SHC_COUNT; c++) {
		uint64_t n = pageset_count_range(p->share->cls[c], s, e);

		h = hash_bytes(h, &n, sizeof(n));
	}
	for (size_t i = warm_from(ws, s); i < ws->n && ws->w[i].page < e; i++)
		h = hash_bytes(h, &ws->w[i], sizeof(ws->w[i]));
	return h;
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
	old->pid = p->pid;
	old->serial = p->serial;
	old->n = 0;
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

/* The mappings of p whose text changed after generation since, and every mapping's start
 * (the page drops the ones that are gone).  Marks for the next call are rebuilt here. */
static void put_mappings(struct web_deltas *d, const struct proc *p, uint64_t since,
			 uint64_t now_ns, struct buf *b)
{
	struct web_seen *s = seen_for(d, p);
	struct web_mark *next = NULL;
	size_t nn = 0, cap = 0;
	struct buf one = { 0 };
	struct warm_set ws = { 0 };
	bool first = true;

	if (warm_collect(p, now_ns, &ws))
		b->oom = true;
	d->gen++;
	s->used = d->gen;
	json_buf_put(b, ", \"mappings\": [");
	for (const struct mapping *m = model_first(p); m; m = model_next(m)) {
		struct web_mark *old = mark_find(s, mapping_start(m));
		uint64_t fp = fingerprint(p, m, &ws), h, gen;

		if (array_reserve(next, nn, cap, 64)) {
			b->oom = true;
			break;
		}
		/* Unchanged as far as the fingerprint says, known to the page, not its turn to
		 * be checked: no text at all (what makes a quiet poll of a big program cheap). */
		if (old && old->fp == fp && old->gen <= since && (nn + d->gen) % WEB_RECHECK) {
			next[nn++] = *old;
			continue;
		}
		one.len = 0;
		put_mapping(&one, p, m, &ws);
		if (one.oom) {
			b->oom = true;
			break;
		}
		h = hash_bytes(HASH_SEED, one.p, one.len);
		gen = old && old->hash == h ? old->gen : d->gen;
		next[nn++] = (struct web_mark){ mapping_start(m), h, gen, fp };
		if (gen > since) {
			json_buf_put(b, "%s%.*s", first ? "" : ", ", (int)one.len, one.p);
			first = false;
		}
	}
	json_buf_put(b, "], \"layout\": [");
	for (size_t i = 0; i < nn; i++)
		json_buf_put(b, "%s%" PRIu64, i ? "," : "", next[i].start);
	json_buf_put(b, "]");
	free(one.p);
	free(ws.w);
	free(s->m);
	s->m = next;
	s->n = nn;
}

int web_json_process(struct web_deltas *d, const struct json_frame *f, pid_t pid,
		     uint64_t since, struct buf *b)
{
	const struct proc *p = NULL;

	for (size_t i = 0; i < f->n && !p; i++)
		if (f->procs[i]->pid == pid && f->procs[i]->ready)
			p = f->procs[i];
	if (!p)
		return -ESRCH;
	put_head(b, f);
	json_buf_put(b, ", \"epoch\": %" PRIu64 ", \"pid\": %d, \"ppid\": %d, \"comm\": ", d->epoch,
	    p->pid, p->ppid);
	json_buf_str(b, p->comm);
	json_buf_put(b, ", \"state\": \"%s\", \"page_size\": %d, ", p->exited ? "exited" : "running",
	    1 << PAGE_SHIFT_4K);
	put_pages(b, p);
	put_share_totals(b, p);
	put_mappings(d, p, since, f->mono_ns, b);
	json_buf_put(b, ", \"gen\": %" PRIu64 ", \"since\": %" PRIu64 "}", d->gen, since);
	return b->oom ? -ENOMEM : 0;
}

void web_deltas_free(struct web_deltas *d)
{
	for (size_t i = 0; i < WEB_SEEN_PROCS; i++)
		free(d->procs[i].m);
	memset(d, 0, sizeof(*d));
}
