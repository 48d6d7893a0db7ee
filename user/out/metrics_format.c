// SPDX-License-Identifier: GPL-2.0
/*
 * The exposition text: Prometheus text format 0.0.4 and OpenMetrics 1.0.0 from one table of
 * metric families.  The two differ only in the metadata lines: OpenMetrics names a counter
 * family without its "_total" and an info family without its "_info", writes TYPE before
 * HELP, adds UNIT, and ends with "# EOF".  No I/O: the text goes to a memory stream.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/utf8.h"
#include "out/json_buf.h"
#include "out/metrics.h"

enum fam_type { FT_GAUGE, FT_COUNTER, FT_INFO };

struct family {
	const char *name;		/* the family name, as OpenMetrics writes it */
	enum fam_type type;
	const char *unit;		/* OpenMetrics UNIT (the name ends with it), or NULL */
	const char *help;
};

enum fam_id {
	F_BUILD, F_MODE, F_INTERVAL, F_PROCESSES, F_OMITTED, F_AGE, F_LOCK_HOLD, F_EVENTS, F_LOST,
	F_RECONCILES, F_DRIFT, F_SCANS, F_OVERFLOWS, F_CPU, F_MODEL,
	F_P_RESIDENT, F_P_SWAPPED, F_P_MAPPED, F_P_UNTRACKED, F_P_FAULTS, F_M_RESIDENT,
	F_P_USS, F_P_PSS, F_P_SHARED,
	F_X_TOUCHES,
	F_MEMORY, F_FILES, F_FILES_OMITTED, F_FILE_CACHED, F_FILE_DIRTY,
	F_COUNT,
};

static const struct family families[F_COUNT] = {
	[F_BUILD] = { "mevitop_build", FT_INFO, NULL, "mevitop's version." },
	[F_MODE] = { "mevitop_mode", FT_GAUGE, NULL,
		     "The tracking mode in use (sample, chunk, trace or exact): 1 for it." },
	[F_INTERVAL] = { "mevitop_interval_seconds", FT_GAUGE, "seconds",
			 "Refresh interval, stretched by --max-cpu when it applies." },
	[F_PROCESSES] = { "mevitop_processes", FT_GAUGE, NULL,
			  "Processes watched and running." },
	[F_OMITTED] = { "mevitop_metrics_processes_omitted", FT_GAUGE, NULL,
			"Running processes left out of this output by --metrics-procs "
			"(the smallest by resident bytes)." },
	[F_AGE] = { "mevitop_snapshot_age_seconds", FT_GAUGE, "seconds",
		    "Age of the model copy this output shows (above 0 when the engine was "
		    "busy and an earlier copy was served)." },
	[F_LOCK_HOLD] = { "mevitop_scrape_lock_hold_seconds", FT_GAUGE, "seconds",
			  "How long the copy for this output held the engine lock." },
	[F_EVENTS] = { "mevitop_events", FT_COUNTER, NULL,
		       "Kernel records applied to the model, by kind." },
	[F_LOST] = { "mevitop_lost_events", FT_COUNTER, NULL,
		     "Kernel records the ring buffer could not queue, by kind (each heals by "
		     "a rescan)." },
	[F_RECONCILES] = { "mevitop_reconciles", FT_COUNTER, NULL,
			   "Processes rescanned to check the model against pagemap." },
	[F_DRIFT] = { "mevitop_drift_bytes", FT_COUNTER, "bytes",
		      "Memory whose state those rescans corrected." },
	[F_SCANS] = { "mevitop_scans", FT_COUNTER, NULL, "Event-driven pagemap scans." },
	[F_OVERFLOWS] = { "mevitop_overflows", FT_COUNTER, NULL,
			  "BPF map bounds hit (each heals by a rescan)." },
	[F_CPU] = { "mevitop_cpu_seconds", FT_COUNTER, "seconds",
		    "CPU time mevitop used, user and system." },
	[F_MODEL] = { "mevitop_model_bytes", FT_GAUGE, "bytes",
		      "Heap memory of mevitop's page model." },
	[F_P_RESIDENT] = { "mevitop_process_resident_bytes", FT_GAUGE, "bytes",
			   "Memory of a process in RAM, by kind of mapping (pagemap present)." },
	[F_P_SWAPPED] = { "mevitop_process_swapped_bytes", FT_GAUGE, "bytes",
			  "Memory of a process in swap, by kind of mapping." },
	[F_P_MAPPED] = { "mevitop_process_mapped_bytes", FT_GAUGE, "bytes",
			 "Address space a process has mapped, by kind of mapping." },
	[F_P_UNTRACKED] = { "mevitop_process_untracked_bytes", FT_GAUGE, "bytes",
			    "Mapped memory whose state mevitop does not know yet, by kind." },
	[F_P_FAULTS] = { "mevitop_process_faults", FT_COUNTER, NULL,
			 "Page faults of a process since mevitop started watching it." },
	[F_M_RESIDENT] = { "mevitop_mapping_resident_bytes", FT_GAUGE, "bytes",
			   "Memory in RAM of one of the --metrics-top largest resident "
			   "mappings of a process." },
	[F_P_USS] = { "mevitop_process_uss_bytes", FT_GAUGE, "bytes",
		      "--sharing: memory mapped by this process alone (what its exit frees)." },
	[F_P_PSS] = { "mevitop_process_pss_bytes", FT_GAUGE, "bytes",
		      "--sharing: each resident page's size divided by its map count." },
	[F_P_SHARED] = { "mevitop_process_shared_bytes", FT_GAUGE, "bytes",
			 "--sharing: resident memory other mappings map too." },
	[F_X_TOUCHES] = { "mevitop_exact_first_touches", FT_COUNTER, NULL,
			  "Exact mode: first touches of private anonymous pages seen through "
			  "userfaultfd (stats.exact.touches in JSON)." },
	[F_MEMORY] = { "mevitop_memory_bytes", FT_GAUGE, "bytes",
		       "The machine's memory by kind (/proc/meminfo; accounted: what mevitop "
		       "attributes to processes' anonymous pages plus cached files)." },
	[F_FILES] = { "mevitop_files", FT_GAUGE, NULL,
		      "Files with pages in the page cache." },
	[F_FILES_OMITTED] = { "mevitop_metrics_files_omitted", FT_GAUGE, NULL,
			      "Cached files left out of this output by --metrics-files." },
	[F_FILE_CACHED] = { "mevitop_file_cached_bytes", FT_GAUGE, "bytes",
			    "Page cache of one of the --metrics-files largest cached files." },
	[F_FILE_DIRTY] = { "mevitop_file_dirty_bytes", FT_GAUGE, "bytes",
			   "Dirty page cache of one of the --metrics-files largest cached "
			   "files." },
};

static const char *const fam_type_name[] = {
	[FT_GAUGE] = "gauge", [FT_COUNTER] = "counter", [FT_INFO] = "info",
};

/* The kinds of kernel record, as mevitop_events_total{kind} names them (bpf/events.h). */
static const char *const event_kind_name[EV_KIND_MAX] = {
	[EV_FAULT] = "fault", [EV_SYSCALL] = "syscall", [EV_FORK] = "fork",
	[EV_EXEC] = "exec", [EV_EXIT] = "exit",
};

/* Written into a struct buf without stdio: a scrape of a few hundred processes is
 * ~12,000 lines, and stdio's locking and printf's parsing were a third of serve's CPU. */
struct out {
	struct buf b;
	enum metrics_format fmt;
	bool labels;			/* the current sample has a '{' open */
	/* Each process's labels as sample_start writes them, made once per scrape (a
	 * process has ~25 samples); NULL: written each time. */
	const struct metrics_proc *procs;
	char **plabels;
};

static const char *suffix(const struct family *fam)
{
	return fam->type == FT_COUNTER ? "_total" : fam->type == FT_INFO ? "_info" : "";
}

/* HELP text: both formats escape backslash and newline; OpenMetrics also the quote. */
static void put_help(struct out *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			json_buf_lit(&o->b, "\\\\");
		else if (*s == '\n')
			json_buf_lit(&o->b, "\\n");
		else if (*s == '"' && o->fmt == METRICS_OPENMETRICS)
			json_buf_lit(&o->b, "\\\"");
		else
			json_buf_lit(&o->b, (char[2]){ *s, '\0' });
	}
}

static void family_header(struct out *o, enum fam_id id)
{
	const struct family *fam = &families[id];

	if (o->fmt == METRICS_OPENMETRICS) {
		json_buf_put(&o->b, "# TYPE %s %s\n", fam->name, fam_type_name[fam->type]);
		if (fam->unit)
			json_buf_put(&o->b, "# UNIT %s %s\n", fam->name, fam->unit);
		json_buf_put(&o->b, "# HELP %s ", fam->name);
	} else {
		json_buf_put(&o->b, "# HELP %s%s ", fam->name, suffix(fam));
	}
	put_help(o, fam->help);
	json_buf_lit(&o->b, "\n");
	if (o->fmt == METRICS_TEXT)	/* 0.0.4 has no info type: a gauge of 1 */
		json_buf_put(&o->b, "# TYPE %s%s %s\n", fam->name, suffix(fam),
			fam->type == FT_COUNTER ? "counter" : "gauge");
}

/* The n bytes of one character at s, as a string. */
static const char *utf8_char(char c[8], const unsigned char *s, size_t n)
{
	memcpy(c, s, n);
	c[n] = '\0';
	return c;
}

/*
 * A label value: backslash, double quote and newline escaped (the only escapes either
 * format defines).  Both formats require UTF-8 and a comm or a path is just bytes (a comm
 * is cut at 15 bytes, maybe inside a character): invalid bytes become U+FFFD.
 */
static void put_value(struct out *o, const char *v)
{
	const unsigned char *s = (const unsigned char *)(v ? v : "");
	char c[8];

	while (*s) {
		size_t n = utf8_len(s);

		if (*s == '\\')
			json_buf_lit(&o->b, "\\\\");
		else if (*s == '"')
			json_buf_lit(&o->b, "\\\"");
		else if (*s == '\n')
			json_buf_lit(&o->b, "\\n");
		else if (!n)
			json_buf_lit(&o->b, "\xef\xbf\xbd");
		else
			json_buf_lit(&o->b, utf8_char(c, s, n));
		s += n ? n : 1;
	}
}

static void label(struct out *o, const char *name, const char *value)
{
	json_buf_lit(&o->b, o->labels ? "," : "{");
	json_buf_lit(&o->b, name);
	json_buf_lit(&o->b, "=\"");
	o->labels = true;
	put_value(o, value);
	json_buf_lit(&o->b, "\"");
}

/* Starts a sample: its name, and for a process the pid, comm and cgroup labels. */
static void proc_labels(struct out *o, const struct metrics_proc *p)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", (int)p->pid);
	label(o, "pid", pid);
	label(o, "comm", p->comm);
	label(o, "cgroup", p->cgroup);
}

static void sample_start(struct out *o, enum fam_id id, const struct metrics_proc *p)
{
	json_buf_lit(&o->b, families[id].name);
	json_buf_lit(&o->b, suffix(&families[id]));
	o->labels = false;
	if (p && o->plabels && o->plabels[p - o->procs]) {
		json_buf_lit(&o->b, o->plabels[p - o->procs]);
		o->labels = true;
	} else if (p) {
		proc_labels(o, p);
	}
}

/* o->plabels for s's processes; without memory, sample_start writes them each time. */
static void make_plabels(struct out *o, const struct metrics_snap *s)
{
	size_t i;

	o->procs = s->procs;
	o->plabels = calloc(s->nprocs ? s->nprocs : 1, sizeof(*o->plabels));
	for (i = 0; o->plabels && i < s->nprocs; i++) {
		struct out w = { .fmt = o->fmt };

		proc_labels(&w, &s->procs[i]);
		if (w.b.oom || !w.b.p) {
			free(w.b.p);
			continue;	/* written each time instead */
		}
		o->plabels[i] = w.b.p;
	}
}

static void free_plabels(struct out *o, size_t n)
{
	for (size_t i = 0; o->plabels && i < n; i++)
		free(o->plabels[i]);
	free(o->plabels);
	o->plabels = NULL;
}

static void sample_end_u64(struct out *o, uint64_t v)
{
	json_buf_lit(&o->b, o->labels ? "} " : " ");
	json_buf_u64(&o->b, v);
	json_buf_lit(&o->b, "\n");
}

static void sample_end_double(struct out *o, double v)
{
	json_buf_put(&o->b, "%s %.6f\n", o->labels ? "}" : "", v);
}

/* A family with one unlabelled sample. */
static void scalar_u64(struct out *o, enum fam_id id, uint64_t v)
{
	family_header(o, id);
	sample_start(o, id, NULL);
	sample_end_u64(o, v);
}

static void scalar_double(struct out *o, enum fam_id id, double v)
{
	family_header(o, id);
	sample_start(o, id, NULL);
	sample_end_double(o, v);
}

static void by_event_kind(struct out *o, enum fam_id id, const uint64_t *counts)
{
	int k;

	family_header(o, id);
	for (k = 0; k < EV_KIND_MAX; k++) {
		if (!event_kind_name[k])
			continue;
		sample_start(o, id, NULL);
		label(o, "kind", event_kind_name[k]);
		sample_end_u64(o, counts[k]);
	}
}

static void health(struct out *o, const struct metrics_snap *s)
{
	family_header(o, F_BUILD);
	sample_start(o, F_BUILD, NULL);
	label(o, "version", s->version);
	sample_end_u64(o, 1);
	family_header(o, F_MODE);
	sample_start(o, F_MODE, NULL);
	label(o, "mode", s->mode);
	sample_end_u64(o, 1);
	scalar_double(o, F_INTERVAL, s->interval_ms / 1000.0);
	scalar_u64(o, F_PROCESSES, s->running);
	scalar_u64(o, F_OMITTED, s->omitted);
	scalar_double(o, F_AGE, s->age_seconds);
	scalar_double(o, F_LOCK_HOLD, s->lock_hold_seconds);
	by_event_kind(o, F_EVENTS, s->st.events_by_kind);
	by_event_kind(o, F_LOST, s->st.lost_by_kind);
	scalar_u64(o, F_RECONCILES, s->st.reconciles);
	scalar_u64(o, F_DRIFT, s->st.drift_pages * PAGE_SIZE_4K);
	scalar_u64(o, F_SCANS, s->st.scans);
	scalar_u64(o, F_OVERFLOWS, s->st.overflows);
	scalar_double(o, F_CPU, s->cpu_seconds);
	scalar_u64(o, F_MODEL, s->model_bytes);
	if (s->exact)
		scalar_u64(o, F_X_TOUCHES, s->exact_touches);
}

/* One family per page state, one sample per (process, kind it has mapped). */
static void per_kind(struct out *o, const struct metrics_snap *s, enum fam_id id,
		     enum page_state st)
{
	size_t i;
	int k;

	family_header(o, id);
	for (i = 0; i < s->nprocs; i++) {
		const struct metrics_proc *p = &s->procs[i];

		for (k = 0; k < MK_COUNT; k++) {
			if (!p->pages[k][PS_NOT_RESIDENT])
				continue;
			sample_start(o, id, p);
			label(o, "kind", map_kind_name(k));
			sample_end_u64(o, p->pages[k][st] * PAGE_SIZE_4K);
		}
	}
}

/* --sharing's figures, for the processes a pass has read (no family without one). */
static void sharing(struct out *o, const struct metrics_snap *s)
{
	static const enum fam_id ids[] = { F_P_USS, F_P_PSS, F_P_SHARED };
	size_t i, k;

	for (i = 0; i < s->nprocs && !s->procs[i].sharing; i++)
		;
	if (i == s->nprocs)
		return;
	for (k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
		family_header(o, ids[k]);
		for (i = 0; i < s->nprocs; i++) {
			const struct metrics_proc *p = &s->procs[i];

			if (!p->sharing)
				continue;
			sample_start(o, ids[k], p);
			sample_end_u64(o, ids[k] == F_P_USS ? p->uss :
					  ids[k] == F_P_PSS ? p->pss : p->shared);
		}
	}
}

static void per_process(struct out *o, const struct metrics_snap *s)
{
	size_t i, j;

	per_kind(o, s, F_P_RESIDENT, PS_RESIDENT);
	per_kind(o, s, F_P_SWAPPED, PS_SWAPPED);
	per_kind(o, s, F_P_MAPPED, PS_NOT_RESIDENT);	/* that slot holds mapped */
	per_kind(o, s, F_P_UNTRACKED, PS_UNTRACKED);
	family_header(o, F_P_FAULTS);
	for (i = 0; i < s->nprocs; i++) {
		sample_start(o, F_P_FAULTS, &s->procs[i]);
		sample_end_u64(o, s->procs[i].faults);
	}
	family_header(o, F_M_RESIDENT);
	for (i = 0; i < s->nprocs; i++) {
		const struct metrics_proc *p = &s->procs[i];

		for (j = 0; j < p->ntop; j++) {
			const struct metrics_map *m = &p->top[j];
			char start[24];

			snprintf(start, sizeof(start), "0x%" PRIx64, m->start);
			sample_start(o, F_M_RESIDENT, p);
			label(o, "kind", map_kind_name(m->kind));
			label(o, "mapping", m->name ? m->name : "[anon]");
			label(o, "start", start);
			sample_end_u64(o, m->resident * PAGE_SIZE_4K);
		}
	}
	sharing(o, s);
}

/* The memory summary and the largest cached files (doc/pagecache.md). */
static void memory(struct out *o, const struct metrics_snap *s)
{
	const struct mem_summary *m = &s->mem;
	const struct {
		const char *kind;
		uint64_t v;
	} kinds[] = {
		{ "total", m->total }, { "free", m->free }, { "available", m->available },
		{ "anon", m->anon }, { "file", m->file }, { "shmem", m->shmem },
		{ "kernel", m->kernel }, { "swap_total", m->swap_total },
		{ "swap_used", m->swap_used }, { "accounted", m->accounted },
	};
	size_t i;
	int k;

	family_header(o, F_MEMORY);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		sample_start(o, F_MEMORY, NULL);
		label(o, "kind", kinds[i].kind);
		sample_end_u64(o, kinds[i].v);
	}
	if (!s->have_files)
		return;
	scalar_u64(o, F_FILES, s->files);
	scalar_u64(o, F_FILES_OMITTED, s->files_omitted);
	for (k = 0; k < 2; k++) {
		enum fam_id id = k ? F_FILE_DIRTY : F_FILE_CACHED;

		family_header(o, id);
		for (i = 0; i < s->ntop_files; i++) {
			const struct metrics_file *f = &s->top_files[i];
			char ino[24];

			snprintf(ino, sizeof(ino), "%" PRIu64, f->ino);
			sample_start(o, id, NULL);
			label(o, "path", f->path);
			label(o, "dev", f->dev);
			label(o, "ino", ino);
			sample_end_u64(o, (k ? f->dirty : f->cached) * PAGE_SIZE_4K);
		}
	}
}

int metrics_format(const struct metrics_snap *s, enum metrics_format fmt, char **text,
		   size_t *len)
{
	struct out o = { .fmt = fmt };

	*text = NULL;
	*len = 0;
	health(&o, s);
	make_plabels(&o, s);
	per_process(&o, s);
	free_plabels(&o, s->nprocs);
	memory(&o, s);
	if (fmt == METRICS_OPENMETRICS)
		json_buf_lit(&o.b, "# EOF\n");
	if (o.b.oom || !o.b.p) {
		free(o.b.p);
		return -ENOMEM;
	}
	*text = o.b.p;
	*len = o.b.len;
	return 0;
}
