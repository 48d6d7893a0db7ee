// SPDX-License-Identifier: GPL-2.0
/* The page cache members of a JSON snapshot (json_files.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include "out/json_buf.h"
#include "out/json_files.h"

static const char *name_src(enum fc_name_src s)
{
	switch (s) {
	case FC_NAME_PATH: return "path";
	case FC_NAME_PROC: return "process";
	case FC_NAME_SYSV: return "sysvipc";
	case FC_NAME_FILE_ARG: return "file_arg";
	case FC_NAME_KERNEL: return "kernel";
	default: return "none";
	}
}

static void put_pages(struct buf *b, const struct fc_pages *p)
{
	json_buf_put(b, "{\"cached\": %" PRIu64 ", \"dirty\": %" PRIu64 ", \"writeback\": %" PRIu64
	       ", \"evicted\": %" PRIu64 ", \"recently_evicted\": %" PRIu64 "}", p->cached,
	       p->dirty, p->writeback, p->evicted, p->recently_evicted);
}

static void put_memory(struct buf *b, const struct mem_summary *m)
{
	json_buf_put(b, "\"memory\": {\"total\": %" PRIu64 ", \"free\": %" PRIu64 ", \"available\": %"
	       PRIu64 ", \"anon\": %" PRIu64 ", \"file\": %" PRIu64 ", \"shmem\": %" PRIu64
	       ", \"kernel\": %" PRIu64 ", \"swap_total\": %" PRIu64 ", \"swap_used\": %" PRIu64
	       ", \"accounted\": %" PRIu64 ", \"accounted_anon\": %" PRIu64
	       ", \"accounted_files\": %" PRIu64 ", \"anon_pending\": %" PRIu64
	       ", \"anon_unreadable\": %" PRIu64 ", \"anon_source\": \"%s\", \"cached\": %" PRIu64
	       ", \"buffers\": %" PRIu64 "}",
	       m->total, m->free, m->available, m->anon, m->file, m->shmem, m->kernel,
	       m->swap_total, m->swap_used, m->accounted, m->accounted_anon, m->accounted_files,
	       m->anon_pending, m->anon_unreadable, m->anon_meminfo ? "meminfo" : "rollups",
	       m->cached, m->buffers);
}

/* Every cached page in exactly one run: cached runs split where dirty or writeback
 * pages lie (writeback wins: a page rewritten while being written is both). */
static void put_runs(struct buf *b, const struct fc_file *f)
{
	uint64_t rs, re, from = 0;
	bool first = true;

	json_buf_put(b, ", \"runs\": [");
	while (pageset_next_run(f->cached_set, from, UINT64_MAX, &rs, &re)) {
		uint64_t p = rs;

		while (p < re) {
			const char *st = pageset_contains(f->writeback_set, p) ? "writeback" :
					 pageset_contains(f->dirty_set, p) ? "dirty" : "cached";
			uint64_t q = p + 1;

			while (q < re && (pageset_contains(f->writeback_set, q) ? "writeback" :
					  pageset_contains(f->dirty_set, q) ? "dirty" : "cached") == st)
				q++;
			json_buf_put(b, "%s{\"start\": %" PRIu64 ", \"end\": %" PRIu64 ", \"state\": \"%s\"}",
			       first ? "" : ", ", p, q, st);
			first = false;
			p = q;
		}
		from = re;
	}
	json_buf_put(b, "]");
}

static void put_file(struct buf *b, const struct fc_file *f, bool comma)
{
	size_t i;

	json_buf_put(b, "%s{\"path\": ", comma ? ", " : "");
	json_buf_str(b, f->name);
	json_buf_put(b, ", \"name_source\": \"%s\"", name_src(f->name_src));
	if (f->why) {
		json_buf_put(b, ", \"why\": ");
		json_buf_str(b, f->why);
	}
	json_buf_put(b, ", \"kind\": \"%s\", \"dev\": \"%u:%u\", \"ino\": %" PRIu64 ", \"size\": %" PRIu64
	       ", \"pages\": ", fcache_kind_name(f->kind), major(f->dev), minor(f->dev), f->ino,
	       f->size);
	put_pages(b, &f->pages);
	json_buf_put(b, ", \"exact\": %s, \"adds_per_sec\": %.1f, \"evictions_per_sec\": %.1f"
	       ", \"mapped_by\": [", f->have_stat ? "true" : "false", f->adds_per_sec,
	       f->evictions_per_sec);
	for (i = 0; i < f->nmapped_by; i++)
		json_buf_put(b, "%s%d", i ? ", " : "", f->mapped_by[i]);
	json_buf_put(b, "], \"memcg\": ");
	if (f->memcg)
		json_buf_str(b, f->memcg);
	else
		json_buf_put(b, "null");
	if (f->watched) {
		json_buf_put(b, ", \"watched\": true");
		if (f->cached_set && f->dirty_set && f->writeback_set)
			put_runs(b, f);
	}
	json_buf_put(b, "}");
}

static void put_stats(struct buf *b, const struct files_stats *s)
{
	json_buf_put(b, ", \"files_stats\": {\"source\": \"%s\", \"full_walk_ms\": %.1f"
	       ", \"full_walk_steps\": %" PRIu64 ", \"walk_ms\": %.2f, \"walk_steps\": %" PRIu64
	       ", \"walk_cuts\": %" PRIu64 ", \"walk_errors\": %" PRIu64 ", \"opens\": %" PRIu64
	       ", \"opened\": %" PRIu64 ", \"cachestats\": %" PRIu64 ", \"proc_scans\": %" PRIu64
	       ", \"tree_walks\": %" PRIu64 ", \"queued_names\": %" PRIu64 ", \"refresh_ms\": %.2f, \"mapped_ms\": %.2f, \"proc_ms\": %.2f"
	       ", \"kinfo\": %" PRIu64 ", \"kinfo_ms\": %.2f, \"rewalks\": %" PRIu64 "}",
	       s->source ? s->source : "none",
	       s->full_walk_ns / 1e6, s->full_walk_steps, s->walk_ns / 1e6, s->walk_steps,
	       s->walk_cuts, s->walk_errors, s->opens, s->opened, s->cachestats, s->proc_scans,
	       s->tree_walks, s->queued, s->refresh_ns / 1e6, s->mapped_ns / 1e6, s->proc_ns / 1e6,
	       s->kinfo, s->kinfo_ns / 1e6, s->rewalks);
}

static void put_listed(struct buf *b, const struct fc_file *f, size_t *k,
		       struct fc_pages *listed)
{
	put_file(b, f, *k > 0);
	(*k)++;
	listed->cached += f->pages.cached;
	listed->dirty += f->pages.dirty;
	listed->writeback += f->pages.writeback;
	listed->evicted += f->pages.evicted;
	listed->recently_evicted += f->pages.recently_evicted;
}

/* --file's rows are listed whatever their size. */
struct watched_ctx {
	struct buf *b;
	struct fc_file **top;
	size_t ntop, *k;
	struct fc_pages *listed;
};

static int put_watched_beyond(struct fc_file *f, void *arg)
{
	struct watched_ctx *w = arg;
	size_t i;

	if (!f->watched)
		return 0;
	for (i = 0; i < w->ntop; i++)
		if (w->top[i] == f)
			return 0;
	put_listed(w->b, f, w->k, w->listed);
	return 0;
}

int json_files_text(struct engine *e, uint32_t top, bool whole_system, char **out)
{
	struct fcache *t = engine_fcache(e);
	struct buf b = { 0 };
	struct fc_pages om = { 0 }, listed = { 0 };
	uint64_t omitted = 0;
	size_t n = 0, i, k = 0;
	struct fc_file **v;

	*out = NULL;
	if (whole_system)
		put_memory(&b, engine_memory(e));
	if (!t) {
		*out = b.p;
		return b.oom ? -ENOMEM : 0;
	}
	/* The top N in one pass; the whole table is sorted only when all of it is listed. */
	if (!whole_system) {
		v = NULL;	/* only the watched rows, below */
	} else if (!top) {
		v = fcache_sorted(t, FC_SORT_CACHED, &n);
	} else {
		v = malloc(top * sizeof(*v));
		n = v ? engine_files_top(e, v, top) : 0;
		if (!v)
			b.oom = true;
	}
	json_buf_put(&b, "%s\"files\": [", b.len ? ", " : "");
	for (i = 0; i < n; i++)
		put_listed(&b, v[i], &k, &listed);
	if (!whole_system || top) {
		struct watched_ctx w = { &b, v, n, &k, &listed };

		engine_files_each_watched(e, put_watched_beyond, &w);
		if (whole_system)
			free(v);
	}
	json_buf_put(&b, "]");
	if (whole_system) {
		struct fc_totals tot;

		engine_files_totals(e, &tot);
		omitted = tot.files - k;
		om.cached = tot.pages.cached - listed.cached;
		om.dirty = tot.pages.dirty - listed.dirty;
		om.writeback = tot.pages.writeback - listed.writeback;
		om.evicted = tot.pages.evicted - listed.evicted;
		om.recently_evicted = tot.pages.recently_evicted - listed.recently_evicted;
	}
	if (whole_system) {
		json_buf_put(&b, ", \"files_omitted\": {\"files\": %" PRIu64 ", \"pages\": ", omitted);
		put_pages(&b, &om);
		json_buf_put(&b, "}");
	}
	if (engine_files_stats(e))
		put_stats(&b, engine_files_stats(e));
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*out = b.p;
	return 0;
}
