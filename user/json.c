// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "stacks/stacks.h"

/* A growing buffer, so a snapshot reaches stdout in one write. */
struct buf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += n;
			return;
		}
		size_t cap = (b->cap ? b->cap : 4096) * 2;

		while (cap - b->len <= (size_t)n)
			cap *= 2;
		char *np = realloc(b->p, cap);

		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
}

static void put_str(struct buf *b, const char *s)
{
	put(b, "\"");
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			put(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			put(b, "\\u%04x", c);
		else
			put(b, "%c", c);
	}
	put(b, "\"");
}

static void put_pages(struct buf *b, const uint64_t c[PS_COUNT], uint64_t mapped)
{
	put(b, "{\"mapped\": %" PRIu64 ", \"resident\": %" PRIu64 ", \"swapped\": %" PRIu64
	    ", \"untracked\": %" PRIu64 "}", mapped, c[PS_RESIDENT], c[PS_SWAPPED],
	    c[PS_UNTRACKED]);
}

struct runs_ctx {
	struct buf *b;
	bool first;
};

static int put_run(uint64_t start, uint64_t end, enum page_state s, void *arg)
{
	struct runs_ctx *c = arg;

	put(c->b, "%s{\"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64 "\", \"state\": \"%s\"}",
	    c->first ? "" : ", ", start << PAGE_SHIFT_4K, end << PAGE_SHIFT_4K,
	    page_state_name(s));
	c->first = false;
	return 0;
}

/* --stacks: the stacks that first touched this mapping's chunks, by resident pages. */
#define FIRST_TOUCH_MAX 16

static void put_frame(struct buf *b, const struct sym_frame *f)
{
	put(b, "{\"ip\": \"0x%" PRIx64 "\", \"name\": ", f->addr);
	put_str(b, f->name);
	if (f->func) {
		put(b, ", \"function\": ");
		put_str(b, f->func);
	}
	if (f->module) {
		put(b, ", \"module\": ");
		put_str(b, f->module);
	}
	if (f->file) {
		put(b, ", \"file\": ");
		put_str(b, f->file);
		put(b, ", \"line\": %d", f->line);
	}
	put(b, "}");
}

static void put_first_touch(struct buf *b, struct stacks *st, const struct proc *p,
			    const struct mapping *m)
{
	struct stack_share *v;
	size_t n, i;
	uint16_t k;

	if (stacks_shares(st, p, mapping_start(m), mapping_end(m), &v, &n)) {
		b->oom = true;
		return;
	}
	put(b, ", \"first_touch\": [");
	for (i = 0; i < n && i < FIRST_TOUCH_MAX; i++) {
		put(b, "%s{\"pages\": %" PRIu64 ", \"tid\": %u, \"monotonic\": %.6f, "
		    "\"unwind\": \"%s\", \"frames\": [", i ? ", " : "", v[i].pages, v[i].tid,
		    v[i].ts / 1e9, v[i].stack->unwind == UNWIND_FP ? "fp" : "ip");
		for (k = 0; k < v[i].stack->nframes; k++) {
			if (k)
				put(b, ", ");
			put_frame(b, &v[i].stack->frames[k]);
		}
		put(b, "]}");
	}
	put(b, "]");
	free(v);
}

static void put_mapping(struct buf *b, const struct proc *p, const struct mapping *m,
			struct stacks *st)
{
	uint64_t s = mapping_start(m), t = mapping_end(m), c[PS_COUNT];
	struct runs_ctx rc = { .b = b, .first = true };
	char perms[5];

	mapping_perms_str(m->perms, perms);
	c[PS_RESIDENT] = model_count(p, PS_RESIDENT, s, t);
	c[PS_SWAPPED] = model_count(p, PS_SWAPPED, s, t);
	c[PS_UNTRACKED] = model_count(p, PS_UNTRACKED, s, t);
	put(b, "{\"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64 "\", \"perms\": \"%s\", "
	    "\"offset\": %" PRIu64 ", \"path\": ", s << PAGE_SHIFT_4K, t << PAGE_SHIFT_4K, perms,
	    m->offset);
	put_str(b, m->path ? m->path : "");
	put(b, ", \"kind\": \"%s\", \"tracker\": \"%s\", \"pages\": ", map_kind_name(m->kind),
	    m->flags & MF_UFFD ? "userfaultfd" : "pagemap");
	put_pages(b, c, t - s);
	put(b, ", \"runs\": [");
	model_runs(p, s, t, put_run, &rc);
	put(b, "]");
	if (st)
		put_first_touch(b, st, p, m);
	put(b, "}");
}

int json_snapshot(FILE *out, struct engine *e, const struct json_opts *o, uint64_t mono_ns,
		  double wall)
{
	const struct engine_stats *st = engine_stats(e);
	struct buf b = { 0 };
	struct proc **procs;
	size_t n, i;
	bool any = false;
	int err = 0;

	procs = engine_procs(e, &n);
	put(&b, "{\"time\": %.6f, \"monotonic\": %.6f, \"mode\": \"%s\", \"interval_ms\": %" PRIu64
	    ", \"stats\": {\"events\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"reconciles\": %" PRIu64
	    ", \"drift_pages\": %" PRIu64 ", \"scans\": %" PRIu64 ", \"scanned_pages\": %" PRIu64
	    ", \"maps_reads\": %" PRIu64 ", \"overflows\": %" PRIu64 ", \"events_per_sec\": %.1f"
	    ", \"engine_bytes\": %zu, \"processes\": %zu, \"cpu_pct\": %.2f"
	    ", \"interval_scale\": %u",
	    wall, mono_ns / 1e9, engine_mode_name(engine_mode(e)),
	    o->interval_ms * (st->interval_scale ? st->interval_scale : 1), st->events,
	    st->lost, st->reconciles, st->drift_pages, st->scans, st->scanned_pages,
	    st->maps_reads, st->overflows, st->events_per_sec, engine_bytes(e), n, st->cpu_pct,
	    st->interval_scale ? st->interval_scale : 1);
	put(&b, ", \"lost_by_kind\": {\"fault\": %" PRIu64 ", \"syscall\": %" PRIu64
	    ", \"fork\": %" PRIu64 ", \"exec\": %" PRIu64 ", \"exit\": %" PRIu64 "}",
	    st->lost_by_kind[EV_FAULT], st->lost_by_kind[EV_SYSCALL], st->lost_by_kind[EV_FORK],
	    st->lost_by_kind[EV_EXEC], st->lost_by_kind[EV_EXIT]);
	if (engine_stacks(e)) {
		const struct stacks_stats *ss = stacks_stats(engine_stacks(e));

		put(&b, ", \"stacks\": {\"samples\": %" PRIu64 ", \"unique\": %" PRIu64
		    ", \"ip_only\": %" PRIu64 ", \"dropped\": %" PRIu64 ", \"lost\": %" PRIu64
		    ", \"interval_ms\": %" PRIu64 ", \"sample_period\": %" PRIu64
		    ", \"attribution\": \"%sthe first stack sampled in each mapping's part of a "
		    "2 MiB chunk\"}", ss->samples, ss->unique, ss->ip_only, ss->dropped,
		    st->lost_by_kind[EV_STACK], ss->interval_ms, ss->sample_period,
		    ss->sample_period ? "statistical (one page fault in sample_period): " : "");
	}
	if (engine_hooks(e)->json_stats) {
		char extra[8192];
		size_t len = engine_hooks(e)->json_stats(engine_hooks(e)->ctx, extra, sizeof(extra));

		if (len && len < sizeof(extra))
			put(&b, ", %s", extra);
	}
	put(&b, "}, \"processes\": [");
	for (i = 0; i < n; i++) {
		const struct proc *p = procs[i];
		uint64_t c[PS_COUNT];
		const struct mapping *m;
		bool first = true;

		if (!p->ready)
			continue;
		model_totals(p, c);
		put(&b, "%s{\"pid\": %d, \"comm\": ", any ? ", " : "", p->pid);
		any = true;
		put_str(&b, p->comm);
		put(&b, ", \"state\": \"%s\", \"faults\": %" PRIu64 ", \"fault_rate\": %.1f, "
		    "\"model_bytes\": %zu, \"pages\": ", p->exited ? "exited" : "running", p->faults,
		    p->fault_rate, engine_proc_bytes(p));
		put_pages(&b, c, p->mapped_pages);
		if (o->maps) {
			put(&b, ", \"mappings\": [");
			for (m = model_first(p); m; m = model_next(m)) {
				if (!first)
					put(&b, ", ");
				put_mapping(&b, p, m, engine_stacks(e));
				first = false;
			}
			put(&b, "]");
		}
		put(&b, "}");
	}
	put(&b, "]}\n");
	if (b.oom) {
		err = -ENOMEM;
	} else if (fwrite(b.p, 1, b.len, out) != b.len || fflush(out)) {
		err = -errno;
	}
	free(b.p);
	return err;
}
