// SPDX-License-Identifier: GPL-2.0
/* The web view's page cache: the files list and one file's heatmap (out/web_files.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "model/fcache.h"
#include "out/web_files.h"
#include "out/web_json.h"

/* --- the list --- */

static void row_of(const struct fc_file *f, struct web_frow *r)
{
	*r = (struct web_frow){
		.dev = f->dev, .ino = f->ino, .kind = fcache_kind_name(f->kind), .size = f->size,
		.cached = f->pages.cached, .dirty = f->pages.dirty, .wb = f->pages.writeback,
		.evicted = f->pages.evicted, .adds = f->adds_per_sec,
		.evicts = f->evictions_per_sec, .mapped = f->nmapped_by,
	};
}

static int copy_row(struct fc_file *f, void *arg)
{
	struct web_flist *l = arg;

	if (l->n == l->cap && array_reserve(l->v, l->n, l->cap, 1024))
		return -ENOMEM;
	row_of(f, &l->v[l->n]);
	if (array_add_str(&l->names, &l->names_len, &l->names_cap, f->name,
			  &l->v[l->n].name))
		return -ENOMEM;
	l->n++;
	return 0;
}

int web_files_list_update(struct web_files *fs, struct fcache *t)
{
	struct web_flist *l = &fs->list;

	if (!t) {
		l->n = 0;
		return 0;
	}
	if (l->gen && l->gen == fcache_generation(t))
		return 0;		/* every viewer of this refresh shares the copy */
	l->n = l->names_len = 0;
	l->copies++;
	if (fcache_each(t, copy_row, l)) {
		l->gen = 0;		/* the rows copied so far; again next time */
		return -ENOMEM;
	}
	l->gen = fcache_generation(t);
	return 0;
}

enum fkey { K_CACHED, K_DIRTY, K_WB, K_EVICTED, K_ADDS, K_EVICTS, K_SIZE, K_NAME, K_KIND,
	    K_MAPPED, K_COUNT };

static const char *const key_names[K_COUNT] = {
	"cached", "dirty", "writeback", "evicted", "adds", "evicts", "size", "name", "kind",
	"mapped",
};

struct sort_ctx {
	const struct web_flist *l;
	enum fkey key;
	bool desc;
};

static int cmp_num(double a, double b)
{
	return a < b ? -1 : a > b;
}

static int row_cmp(const struct web_frow *a, const struct web_frow *b, const struct sort_ctx *c)
{
	int r = 0;

	switch (c->key) {
	case K_CACHED: r = cmp_num(a->cached, b->cached); break;
	case K_DIRTY: r = cmp_num(a->dirty, b->dirty); break;
	case K_WB: r = cmp_num(a->wb, b->wb); break;
	case K_EVICTED: r = cmp_num(a->evicted, b->evicted); break;
	case K_ADDS: r = cmp_num(a->adds, b->adds); break;
	case K_EVICTS: r = cmp_num(a->evicts, b->evicts); break;
	case K_SIZE: r = cmp_num(a->size, b->size); break;
	case K_NAME: r = strcmp(c->l->names + a->name, c->l->names + b->name); break;
	case K_KIND: r = strcmp(a->kind, b->kind); break;
	case K_MAPPED: r = cmp_num(a->mapped, b->mapped); break;
	case K_COUNT: break;
	}
	if (c->desc)
		r = -r;
	/* Ties in one order whichever way: the page's test of each column sees a total order. */
	return r ? r : a->dev != b->dev ? cmp_num(a->dev, b->dev) : cmp_num(a->ino, b->ino);
}

static int row_cmp_r(const void *x, const void *y, void *arg)
{
	return row_cmp(*(const struct web_frow *const *)x, *(const struct web_frow *const *)y, arg);
}

/* A row's figures (its name apart: the list's is in its copy, a file's in its snapshot). */
static void put_row(struct buf *b, const struct web_frow *r, const char *name)
{
	json_buf_put(b, "\"dev\": %" PRIu64 ", \"ino\": %" PRIu64 ", \"name\": ", r->dev, r->ino);
	json_buf_str(b, name);
	json_buf_put(b, ", \"kind\": \"%s\", \"size\": %" PRIu64 ", \"cached\": %" PRIu64
		     ", \"dirty\": %" PRIu64 ", \"writeback\": %" PRIu64 ", \"evicted\": %" PRIu64
		     ", \"adds\": %.1f, \"evicts\": %.1f, \"mapped\": %zu", r->kind ? r->kind : "",
		     r->size, r->cached, r->dirty, r->wb, r->evicted, r->adds, r->evicts, r->mapped);
}

void web_files_list_json(const struct web_files *fs, bool have, const char *sort, bool desc,
			 const char *filter, size_t limit, struct buf *b)
{
	const struct web_flist *l = &fs->list;
	struct sort_ctx c = { l, K_CACHED, desc };
	const struct web_frow **v = malloc((l->n ? l->n : 1) * sizeof(*v));
	size_t n = 0, shown;

	for (int k = 0; sort && k < K_COUNT; k++)
		if (!strcmp(sort, key_names[k]))
			c.key = k;
	if (!v) {
		b->oom = true;
		return;
	}
	for (size_t i = 0; i < l->n; i++)
		if (!filter || !*filter || strstr(l->names + l->v[i].name, filter))
			v[n++] = &l->v[i];
	if (n)
		qsort_r(v, n, sizeof(*v), row_cmp_r, &c);
	shown = n < limit ? n : limit;
	json_buf_put(b, "{\"have\": %s, \"gen\": %" PRIu64 ", \"files\": %zu, \"matched\": %zu"
		     ", \"sort\": \"%s\", \"desc\": %s, \"rows\": [", have ? "true" : "false",
		     l->gen, l->n, n, key_names[c.key], desc ? "true" : "false");
	for (size_t i = 0; i < shown; i++) {
		json_buf_put(b, i ? ", {" : "{");
		put_row(b, v[i], l->names + v[i]->name);
		json_buf_put(b, "}");
	}
	json_buf_put(b, "]}");
	free(v);
}

/* --- one file --- */

static const struct proc *proc_of(const struct json_frame *f, pid_t pid)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {		/* f->procs is sorted by pid */
		size_t mid = (lo + hi) / 2;

		if (f->procs[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->n && f->procs[lo]->pid == pid ? f->procs[lo] : NULL;
}

int web_files_snap(struct fcache *t, const struct json_frame *fr, uint64_t dev, uint64_t ino,
		   struct web_fsnap *out)
{
	struct fc_file *f = t ? fcache_find(t, dev, ino) : NULL;

	memset(out, 0, sizeof(*out));
	out->mono_ns = fr->mono_ns;
	out->row.dev = dev;
	out->row.ino = ino;
	if (!f)
		return 0;
	out->found = true;
	out->gen = fcache_generation(t);
	row_of(f, &out->row);
	if (!(out->name = strdup(f->name)))
		return -ENOMEM;
	for (size_t i = 0; i < f->nmapped_by && out->npids < WEB_FILE_PIDS; i++) {
		const struct proc *p = proc_of(fr, f->mapped_by[i]);

		out->pids[out->npids] = f->mapped_by[i];
		memcpy(out->comms[out->npids++], p ? p->comm : "?", p ? sizeof(p->comm) : 2);
	}
	/* The engine keeps its sets from the next refresh on (the terminal's file heatmap
	 * asks the same way; the oldest of FC_WANTED_MAX asks gives way). */
	if (!f->watched || !f->cached_set)
		return fcache_want_pages(t, dev, ino, true) == -ENOMEM ? -ENOMEM : 0;
	out->have_sets = true;
	out->cached = pageset_clone(f->cached_set);
	out->dirty = f->dirty_set ? pageset_clone(f->dirty_set) : pageset_new();
	out->wb = f->writeback_set ? pageset_clone(f->writeback_set) : pageset_new();
	return out->cached && out->dirty && out->wb ? 0 : -ENOMEM;
}

static void seen_reset(struct web_fseen *s)
{
	pageset_free(s->prev);
	heat_free(&s->adds);
	heat_free(&s->evicts);
	memset(s, 0, sizeof(*s));
}

static struct web_fseen *seen_for(struct web_files *fs, uint64_t dev, uint64_t ino)
{
	struct web_fseen *old = &fs->seen[0];

	fs->uses++;
	for (size_t i = 0; i < WEB_FILES_SEEN; i++) {
		struct web_fseen *s = &fs->seen[i];

		if (s->used && s->dev == dev && s->ino == ino) {
			s->used = fs->uses;
			return s;
		}
		if (s->used < old->used)
			old = s;
	}
	seen_reset(old);
	*old = (struct web_fseen){ .dev = dev, .ino = ino, .used = fs->uses };
	return old;
}

/* A new generation's cached set: what came and went since the last one is heat. */
static void heat_update(struct web_fseen *h, struct web_fsnap *s)
{
	if (h->gen == s->gen)
		return;
	if (h->prev) {
		heat_add_diff(&h->adds, s->cached, h->prev, s->mono_ns);
		heat_add_diff(&h->evicts, h->prev, s->cached, s->mono_ns);
		heat_prune(&h->adds, s->mono_ns);
		heat_prune(&h->evicts, s->mono_ns);
	}
	pageset_free(h->prev);
	h->prev = s->cached;		/* the next one's base: taken from the snapshot */
	s->cached = NULL;
	h->gen = s->gen;
}

struct fruns {
	struct buf *b;
	uint64_t last;
	bool first;
};

static void put_frun(struct fruns *r, uint64_t s, uint64_t e, int state)
{
	if (s >= e)
		return;
	json_buf_u64s(r->b, !r->first, (uint64_t[]){ s - r->last, e - s, (uint64_t)state }, 3);
	r->last = e;
	r->first = false;
}

/* The cached pages as runs, writeback over dirty over cached (the terminal's order). */
static void put_fruns(struct buf *b, const struct pageset *c, const struct pageset *d,
		      const struct pageset *w)
{
	struct fruns r = { b, 0, true };
	uint64_t from = 0, rs, re;

	while (pageset_next_run(c, from, UINT64_MAX, &rs, &re)) {
		uint64_t p = rs;

		while (p < re) {
			uint64_t ws = re, we = re, ds = re, de = re;

			pageset_next_run(w, p, re, &ws, &we);
			pageset_next_run(d, p, re, &ds, &de);
			if (ws <= ds && ws < re) {
				put_frun(&r, p, ws, 1);
				put_frun(&r, ws, we, 3);
				p = we;
			} else if (ds < re) {
				de = de < ws ? de : ws;
				put_frun(&r, p, ds, 1);
				put_frun(&r, ds, de, 2);
				p = de;
			} else {
				put_frun(&r, p, re, 1);
				p = re;
			}
		}
		from = re;
	}
}

/* Warm blocks of either table: [block offset, adds level, evictions level]. */
static void put_fheat(struct buf *b, const struct web_fseen *h, uint64_t now)
{
	const struct heat *t[2] = { &h->adds, &h->evicts };
	uint64_t *blocks = NULL;
	size_t n = 0, cap = 0;
	bool first = true;

	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < t[k]->cap; i++) {
			const struct heat_entry *e = &t[k]->slots[i];

			if (!e->block || !web_json_heat_level(heat_entry_value(e, now)))
				continue;
			if (array_reserve(blocks, n, cap, 256)) {
				b->oom = true;
				free(blocks);
				return;
			}
			blocks[n++] = e->block - 1;
		}
	for (size_t i = 0; i < n; i++) {	/* few: a quadratic dedup is fine */
		uint64_t page = blocks[i] << HEAT_BLOCK_SHIFT;
		const struct heat_entry *a = heat_find(&h->adds, page), *e;
		bool dup = false;

		for (size_t j = 0; j < i && !dup; j++)
			dup = blocks[j] == blocks[i];
		if (dup)
			continue;
		e = heat_find(&h->evicts, page);
		json_buf_u64s(b, !first, (uint64_t[]){ page,
			(uint64_t)(a ? web_json_heat_level(heat_entry_value(a, now)) : 0),
			(uint64_t)(e ? web_json_heat_level(heat_entry_value(e, now)) : 0) }, 3);
		first = false;
	}
	free(blocks);
}

void web_files_file_json(struct web_files *fs, struct web_fsnap *s, struct buf *b)
{
	json_buf_put(b, "{\"monotonic\": %.6f, \"found\": %s, \"have_sets\": %s, \"gen\": %"
		     PRIu64 ", \"page_size\": 4096, ", s->mono_ns / 1e9, s->found ? "true" : "false",
		     s->have_sets ? "true" : "false", s->gen);
	put_row(b, &s->row, s->name ? s->name : "");
	json_buf_put(b, ", \"mapped_by\": [");
	for (size_t i = 0; i < s->npids; i++) {
		char comm[17];

		memcpy(comm, s->comms[i], 16);
		comm[16] = 0;
		json_buf_put(b, "%s{\"pid\": %d, \"comm\": ", i ? ", " : "", s->pids[i]);
		json_buf_str(b, comm);
		json_buf_put(b, "}");
	}
	json_buf_put(b, "], \"runs\": [");
	if (s->have_sets)
		put_fruns(b, s->cached, s->dirty, s->wb);
	json_buf_put(b, "], \"heat\": [");
	if (s->have_sets) {
		struct web_fseen *h = seen_for(fs, s->row.dev, s->row.ino);

		heat_update(h, s);
		put_fheat(b, h, s->mono_ns);
	}
	json_buf_put(b, "]}");
}

void web_files_snap_free(struct web_fsnap *s)
{
	free(s->name);
	pageset_free(s->cached);
	pageset_free(s->dirty);
	pageset_free(s->wb);
	memset(s, 0, sizeof(*s));
}

void web_files_free(struct web_files *fs)
{
	free(fs->list.v);
	free(fs->list.names);
	for (size_t i = 0; i < WEB_FILES_SEEN; i++)
		seen_reset(&fs->seen[i]);
	memset(fs, 0, sizeof(*fs));
}
