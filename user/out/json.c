// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "out/json.h"
#include "out/json_buf.h"
#include "out/json_files.h"
#include "out/json_share.h"
#include "lib/utf8.h"
#include "stacks/stacks.h"
#include "lib/array.h"

/* A process's and a mapping's "pages"; no printf (a row per process per snapshot). */
static void put_pages(struct buf *b, const uint64_t c[PS_COUNT], uint64_t mapped)
{
	json_buf_lit(b, "{\"mapped\": ");
	json_buf_u64(b, mapped);
	json_buf_lit(b, ", \"resident\": ");
	json_buf_u64(b, c[PS_RESIDENT]);
	json_buf_lit(b, ", \"swapped\": ");
	json_buf_u64(b, c[PS_SWAPPED]);
	json_buf_lit(b, ", \"untracked\": ");
	json_buf_u64(b, c[PS_UNTRACKED]);
	json_buf_lit(b, "}");
}

/* "fault_rate" as %.1f prints it: an idle process's 0.0 without printf. */
static void put_rate(struct buf *b, double rate)
{
	if (rate == 0 && !signbit(rate))
		json_buf_lit(b, "0.0");
	else
		json_buf_put(b, "%.1f", rate);
}

struct runs_ctx {
	struct buf *b;
	bool first;
};

static int put_run(uint64_t start, uint64_t end, enum page_state s, void *arg)
{
	struct runs_ctx *c = arg;

	json_buf_put(c->b, "%s{\"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64 "\", \"state\": \"%s\"}",
	    c->first ? "" : ", ", start << PAGE_SHIFT_4K, end << PAGE_SHIFT_4K,
	    model_page_state_name(s));
	c->first = false;
	return 0;
}

/* --stacks: the stacks that first touched this mapping's chunks, by resident pages. */
#define FIRST_TOUCH_MAX 16

static void put_frame(struct buf *b, const struct sym_frame *f)
{
	json_buf_put(b, "{\"ip\": \"0x%" PRIx64 "\", \"name\": ", f->addr);
	json_buf_str(b, f->name);
	if (f->func) {
		json_buf_put(b, ", \"function\": ");
		json_buf_str(b, f->func);
	}
	if (f->module) {
		json_buf_put(b, ", \"module\": ");
		json_buf_str(b, f->module);
	}
	if (f->file) {
		json_buf_put(b, ", \"file\": ");
		json_buf_str(b, f->file);
		json_buf_put(b, ", \"line\": %d", f->line);
	}
	json_buf_put(b, "}");
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
	json_buf_put(b, ", \"first_touch\": [");
	for (i = 0; i < n && i < FIRST_TOUCH_MAX; i++) {
		json_buf_put(b, "%s{\"pages\": %" PRIu64 ", \"tid\": %u, \"monotonic\": %.6f, "
		    "\"unwind\": \"%s\", \"frames\": [", i ? ", " : "", v[i].pages, v[i].tid,
		    v[i].ts / 1e9, v[i].stack->unwind == UNWIND_FP ? "fp" : "ip");
		for (k = 0; k < v[i].stack->nframes; k++) {
			if (k)
				json_buf_put(b, ", ");
			put_frame(b, &v[i].stack->frames[k]);
		}
		json_buf_put(b, "]}");
	}
	json_buf_put(b, "]");
	free(v);
}

static void put_mapping(struct buf *b, const struct proc *p, const struct mapping *m,
			struct stacks *st, float heat)
{
	uint64_t s = mapping_start(m), t = mapping_end(m), c[PS_COUNT];
	struct runs_ctx rc = { .b = b, .first = true };
	char perms[5];

	mapping_perms_str(m->perms, perms);
	c[PS_RESIDENT] = model_count(p, PS_RESIDENT, s, t);
	c[PS_SWAPPED] = model_count(p, PS_SWAPPED, s, t);
	c[PS_UNTRACKED] = model_count(p, PS_UNTRACKED, s, t);
	json_buf_put(b, "{\"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64 "\", \"perms\": \"%s\", "
	    "\"offset\": %" PRIu64 ", \"path\": ", s << PAGE_SHIFT_4K, t << PAGE_SHIFT_4K, perms,
	    m->offset);
	json_buf_str(b, m->path ? m->path : "");
	json_buf_put(b, ", \"kind\": \"%s\", \"tracker\": \"%s\", \"pages\": ", map_kind_name(m->kind),
	    m->flags & MF_UFFD ? "userfaultfd" : "pagemap");
	put_pages(b, c, t - s);
	json_share_mapping(b, p, m);
	json_buf_put(b, ", \"heat\": %.3f, \"runs\": [", heat);
	model_runs(p, s, t, put_run, &rc);
	json_buf_put(b, "]");
	if (st)
		put_first_touch(b, st, p, m);
	json_buf_put(b, "}");
}

void json_put_touch(struct buf *b, const struct first_touch *t, bool comma)
{
	json_buf_put(b, "%s[%d, %u, \"0x%" PRIx64 "\", \"%s\", %.6f]", comma ? ", " : "", t->pid, t->tid,
	    t->addr, t->write ? "w" : "r", t->ts_ns / 1e9);
}

/* --stacks: its counters, a member of "stats" (kept in the frame's extra members, so
 * recordings carry them too). */
static void put_stacks_stats(struct buf *b, bool comma, const struct stacks_stats *ss,
			     const struct engine_stats *st)
{
	json_buf_put(b, "%s\"stacks\": {\"samples\": %" PRIu64 ", \"unique\": %" PRIu64
	    ", \"ip_only\": %" PRIu64 ", \"dropped\": %" PRIu64 ", \"lost\": %" PRIu64
	    ", \"interval_ms\": %" PRIu64 ", \"sample_period\": %" PRIu64
	    ", \"first_touches\": %" PRIu64 ", \"joined\": %" PRIu64
	    ", \"duty_on_ms\": %" PRIu64 ", \"duty_every_ms\": %" PRIu64
	    ", \"windows\": %" PRIu64 ", \"window_open\": %s"
	    ", \"window_faults\": %" PRIu64
	    ", \"attribution\": \"%s\"}", comma ? ", " : "",
	    ss->samples, ss->unique, ss->ip_only, ss->dropped,
	    st->lost_by_kind[EV_STACK], ss->interval_ms, ss->sample_period,
	    ss->first_touches, ss->joined, ss->duty_on_ms, ss->duty_every_ms,
	    ss->sampler.windows, ss->sampler.open ? "true" : "false",
	    ss->sampler.faults,
	    ss->exact ? "exact: each page's first touch (userfaultfd), with the stack "
			"of its fault" :
	    ss->sample_period ? "statistical (one page fault in sample_period while "
				"the perf events are open, duty_on_ms of every "
				"duty_every_ms): the first stack sampled in each "
				"mapping's part of a 2 MiB chunk" :
	    "the first stack sampled in each mapping's part of a 2 MiB chunk");
}

/* The frame's extra "stats" members: the mode's (exact), --stacks'.  0 or -ENOMEM. */
static int put_extra_stats(struct json_frame *f, struct engine *e, const struct engine_stats *st)
{
	const struct engine_hooks *h = engine_hooks(e);
	struct buf b = { 0 };

	if (h->stats_json) {
		char *t = h->stats_json(h->ctx);

		if (t)
			json_buf_put(&b, "%s", t);
		else
			b.oom = true;
		free(t);
	}
	if (f->stacks)
		put_stacks_stats(&b, b.len > 0, stacks_stats(f->stacks), st);
	if (engine_share_stats(e))
		json_share_stats(&b, b.len > 0, engine_share_stats(e));
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	f->extra_stats = b.p;
	return 0;
}

int json_frame_from_engine(struct json_frame *f, struct engine *e, const struct json_opts *o,
			   uint64_t mono_ns, double wall)
{
	const struct engine_stats *st = engine_stats(e);
	size_t i;

	memset(f, 0, sizeof(*f));
	f->mono_ns = mono_ns;
	f->wall = wall;
	f->mode = engine_mode_name(engine_mode(e));
	f->stats = *st;
	f->stats.layout_hooked = engine_features(e)->hook[HOOK_LAYOUT] != AT_NONE;
	f->stats.fault_rings = engine_features(e)->fault_rings;
	if (!f->stats.interval_scale)
		f->stats.interval_scale = 1;
	f->interval_ms = o->interval_ms * f->stats.interval_scale;
	f->engine_bytes = engine_bytes(e);
	f->procs = engine_procs(e, &f->n);
	f->nprocs = f->n;
	f->proc_bytes = calloc(f->n ? f->n : 1, sizeof(*f->proc_bytes));
	if (!f->proc_bytes)
		return -ENOMEM;
	for (i = 0; i < f->n; i++)
		f->proc_bytes[i] = engine_proc_bytes(f->procs[i]);
	f->stacks = engine_stacks(e);
	if (o->touches && engine_hooks(e)->touches) {
		f->has_touches = true;
		f->ntouches = engine_hooks(e)->touches(engine_hooks(e)->ctx, &f->touches,
						       &f->touches_dropped);
	}
	if ((engine_hooks(e)->stats_json || f->stacks || engine_share_stats(e)) &&
	    put_extra_stats(f, e, st)) {
		json_frame_release(f);
		return -ENOMEM;
	}
	if (json_files_text(e, o->files_top, o->whole_system, &f->files_text)) {
		json_frame_release(f);
		return -ENOMEM;
	}
	return 0;
}

void json_frame_release(struct json_frame *f)
{
	free(f->proc_bytes);
	free(f->extra_stats);
	free(f->files_text);
	f->proc_bytes = NULL;
	f->extra_stats = NULL;
	f->files_text = NULL;
}

/*
 * The line in one write where the pipe takes it.  A reader that stopped reading must not
 * hold a stop signal up: write() returns early when one arrives (EINTR, or the part
 * written), and stdio would only write again and block; a quit ends it here.
 */
static int write_all(FILE *out, const char *p, size_t len)
{
	int fd = fileno(out);

	if (fd < 0)	/* a stream with no file under it (open_memstream): stdio's own */
		return fwrite(p, 1, len, out) == len ? 0 : -EIO;
	if (fflush(out))
		return -errno;
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0) {
			p += n;
			len -= (size_t)n;
		}
		if (len && engine_quitting())
			return -EINTR;
	}
	return 0;
}

int json_frame_write(FILE *out, const struct json_frame *f, const struct json_opts *o)
{
	const struct engine_stats *st = &f->stats;
	struct buf b = { 0 };
	size_t i;
	bool any = false;
	int err = 0;

	json_buf_put(&b, "{\"time\": %.6f, \"monotonic\": %.6f, \"mode\": \"%s\", \"interval_ms\": %" PRIu64
	    ", \"stats\": {\"events\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"reconciles\": %" PRIu64
	    ", \"drift_pages\": %" PRIu64 ", \"scans\": %" PRIu64 ", \"scanned_pages\": %" PRIu64
	    ", \"maps_reads\": %" PRIu64 ", \"overflows\": %" PRIu64 ", \"retired\": %" PRIu64
	    ", \"events_per_sec\": %.1f"
	    ", \"engine_bytes\": %zu, \"processes\": %zu, \"cpu_pct\": %.2f"
	    ", \"interval_scale\": %u",
	    f->wall, f->mono_ns / 1e9, f->mode, f->interval_ms, st->events,
	    st->lost, st->reconciles, st->drift_pages, st->scans, st->scanned_pages,
	    st->maps_reads, st->overflows, st->retired, st->events_per_sec, f->engine_bytes,
	    f->nprocs, st->cpu_pct, st->interval_scale ? st->interval_scale : 1);
	json_buf_put(&b, ", \"maps_reads_per_sec\": %.1f, \"layout_changes\": %" PRIu64
	    ", \"layout_unowned\": %" PRIu64 ", \"layout_source\": \"%s\""
	    ", \"fault_rings\": %s",
	    st->maps_reads_per_sec, st->layout_changes, st->layout_unowned,
	    st->layout_hooked ? "mmap_lock" : "syscalls", st->fault_rings ? "true" : "false");
	json_buf_put(&b, ", \"lost_by_kind\": {\"fault\": %" PRIu64 ", \"syscall\": %" PRIu64
	    ", \"fork\": %" PRIu64 ", \"exec\": %" PRIu64 ", \"exit\": %" PRIu64 "}",
	    st->lost_by_kind[EV_FAULT], st->lost_by_kind[EV_SYSCALL], st->lost_by_kind[EV_FORK],
	    st->lost_by_kind[EV_EXEC], st->lost_by_kind[EV_EXIT]);
	if (f->extra_stats && *f->extra_stats)
		json_buf_put(&b, ", %s", f->extra_stats);
	json_buf_put(&b, "}, \"processes\": [");
	for (i = 0; i < f->n; i++) {
		const struct proc *p = f->procs[i];
		uint64_t c[PS_COUNT];
		const struct mapping *m;
		bool first = true;

		if (!p->ready)
			continue;
		model_totals(p, c);
		json_buf_lit(&b, any ? ", {\"pid\": " : "{\"pid\": ");
		json_buf_i64(&b, p->pid);
		json_buf_lit(&b, ", \"ppid\": ");
		json_buf_i64(&b, p->ppid);
		json_buf_lit(&b, ", \"comm\": ");
		any = true;
		json_buf_str(&b, p->comm);
		json_buf_lit(&b, p->exited ? ", \"state\": \"exited\", \"faults\": " :
					     ", \"state\": \"running\", \"faults\": ");
		json_buf_u64(&b, p->faults);
		json_buf_lit(&b, ", \"fault_rate\": ");
		put_rate(&b, p->fault_rate);
		json_buf_lit(&b, ", \"model_bytes\": ");
		json_buf_u64(&b, f->proc_bytes[i]);
		json_buf_lit(&b, ", \"pages\": ");
		put_pages(&b, c, p->mapped_pages);
		json_share_proc(&b, p);
		if (o->maps) {
			size_t nmaps = model_count_maps(p), k = 0;
			float *heat = calloc(nmaps ? nmaps : 1, sizeof(*heat));

			if (!heat || model_heat_per_mapping(p, f->mono_ns, heat, nmaps))
				b.oom = true;
			json_buf_put(&b, ", \"mappings\": [");
			for (m = model_first(p); m && heat; m = model_next(m), k++) {
				if (!first)
					json_buf_put(&b, ", ");
				put_mapping(&b, p, m, f->stacks, heat[k]);
				first = false;
			}
			json_buf_put(&b, "]");
			free(heat);
		}
		json_buf_lit(&b, "}");
	}
	json_buf_put(&b, "]");
	if (f->files_text)
		json_buf_put(&b, ", %s", f->files_text);
	if (f->has_touches) {
		json_buf_put(&b, ", \"recorded_touches\": [");
		for (i = 0; i < f->ntouches; i++)
			json_put_touch(&b, &f->touches[i], i > 0);
		json_buf_put(&b, "], \"recorded_touches_dropped\": %" PRIu64, f->touches_dropped);
	}
	json_buf_put(&b, "}\n");
	if (b.oom) {
		err = -ENOMEM;
	} else {
		err = write_all(out, b.p, b.len);
	}
	free(b.p);
	return err;
}

int json_snapshot(FILE *out, struct engine *e, const struct json_opts *o, uint64_t mono_ns,
		  double wall)
{
	struct json_frame f;
	int err = json_frame_from_engine(&f, e, o, mono_ns, wall);

	if (!err)
		err = json_frame_write(out, &f, o);
	json_frame_release(&f);
	return err;
}
