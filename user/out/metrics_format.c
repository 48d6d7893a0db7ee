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
	/* The current process's labels as sample_start writes them, made once per process
	 * (a process has ~25 samples); NULL: written each time. */
	const char *plab;
	size_t plab_len;
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
			json_buf_mem(&o->b, s, 1);
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

/*
 * A label value: backslash, double quote and newline escaped (the only escapes either
 * format defines).  Both formats require UTF-8 and a comm or a path is just bytes (a comm
 * is cut at 15 bytes, maybe inside a character): invalid bytes become U+FFFD.  A run of
 * bytes that need nothing goes in one copy (paths and cgroups are most of the text).
 */
static void put_value(struct out *o, const char *v)
{
	const unsigned char *s = (const unsigned char *)(v ? v : "");

	while (*s) {
		size_t run = 0, n;

		while (s[run] && s[run] < 0x80 && s[run] != '\\' && s[run] != '"' &&
		       s[run] != '\n')
			run++;
		if (run) {
			json_buf_mem(&o->b, (const char *)s, run);
			s += run;
			continue;
		}
		n = utf8_len(s);
		if (*s == '\\')
			json_buf_lit(&o->b, "\\\\");
		else if (*s == '"')
			json_buf_lit(&o->b, "\\\"");
		else if (*s == '\n')
			json_buf_lit(&o->b, "\\n");
		else if (!n)
			json_buf_lit(&o->b, "\xef\xbf\xbd");
		else
			json_buf_mem(&o->b, (const char *)s, n);
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
	if (p && o->plab) {
		json_buf_mem(&o->b, o->plab, o->plab_len);
		o->labels = true;
	} else if (p) {
		proc_labels(o, p);
	}
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

/*
 * The per-process families.  Each process's lines are made once and kept while what they
 * show stays the same (struct metrics_memo): on an idle box nearly every process is the
 * same from one scrape to the next, and a scrape then copies its lines instead of writing
 * ~25 samples a process again.  The lines are the same in both formats (only metadata
 * lines differ), so one memo serves both.
 */
enum chunk {
	C_RESIDENT, C_SWAPPED, C_MAPPED, C_UNTRACKED,	/* by kind: chunk_state's slot */
	C_FAULTS, C_MAPPING,
	C_USS, C_PSS, C_SHARED,				/* --sharing's */
	C_COUNT,
};

static const enum fam_id chunk_fam[C_COUNT] = {
	F_P_RESIDENT, F_P_SWAPPED, F_P_MAPPED, F_P_UNTRACKED, F_P_FAULTS, F_M_RESIDENT,
	F_P_USS, F_P_PSS, F_P_SHARED,
};

/* The page-state slot each by-kind family shows (PS_NOT_RESIDENT's holds mapped). */
static const enum page_state chunk_state[C_FAULTS] = {
	PS_RESIDENT, PS_SWAPPED, PS_NOT_RESIDENT, PS_UNTRACKED,
};

struct proc_text {
	pid_t pid;
	char *key;			/* what the lines were made from (proc_key) */
	size_t keylen;
	char *text;			/* every chunk's lines, one after another */
	size_t off[C_COUNT + 1];	/* chunk c is text[off[c], off[c + 1]) */
};

struct metrics_memo {
	struct proc_text *v;		/* the last scrape's processes, by pid */
	size_t n;
};

/* One process's samples of one family. */
static void chunk(struct out *o, const struct metrics_proc *p, enum chunk c)
{
	size_t j;
	int k;

	switch (c) {
	case C_RESIDENT: case C_SWAPPED: case C_MAPPED: case C_UNTRACKED:
		/* One sample per kind the process has mapped. */
		for (k = 0; k < MK_COUNT; k++) {
			if (!p->pages[k][PS_NOT_RESIDENT])
				continue;
			sample_start(o, chunk_fam[c], p);
			label(o, "kind", map_kind_name(k));
			sample_end_u64(o, p->pages[k][chunk_state[c]] * PAGE_SIZE_4K);
		}
		break;
	case C_FAULTS:
		sample_start(o, F_P_FAULTS, p);
		sample_end_u64(o, p->faults);
		break;
	case C_MAPPING:
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
		break;
	default:	/* --sharing's, for the processes a pass has read */
		if (!p->sharing)
			break;
		sample_start(o, chunk_fam[c], p);
		sample_end_u64(o, c == C_USS ? p->uss : c == C_PSS ? p->pss : p->shared);
		break;
	}
}

static void key_str(struct buf *k, const char *s)
{
	json_buf_mem(k, s ? "\1" : "\0", 1);	/* NULL and "" render differently */
	if (s)
		json_buf_mem(k, s, strlen(s) + 1);
}

/* Everything chunk() reads of p, as bytes: equal keys make equal lines. */
static void proc_key(const struct metrics_proc *p, struct buf *k)
{
	size_t j;

	k->len = 0;
	json_buf_mem(k, (const char *)&p->pid, sizeof(p->pid));
	json_buf_mem(k, p->comm, sizeof(p->comm));
	json_buf_mem(k, (const char *)&p->faults, sizeof(p->faults));
	json_buf_mem(k, (const char *)&p->sharing, sizeof(p->sharing));
	json_buf_mem(k, (const char *)&p->uss, sizeof(p->uss));
	json_buf_mem(k, (const char *)&p->pss, sizeof(p->pss));
	json_buf_mem(k, (const char *)&p->shared, sizeof(p->shared));
	json_buf_mem(k, (const char *)p->pages, sizeof(p->pages));
	key_str(k, p->cgroup);
	json_buf_mem(k, (const char *)&p->ntop, sizeof(p->ntop));
	for (j = 0; j < p->ntop; j++) {
		const struct metrics_map *m = &p->top[j];

		json_buf_mem(k, (const char *)&m->start, sizeof(m->start));
		json_buf_mem(k, (const char *)&m->resident, sizeof(m->resident));
		json_buf_mem(k, (const char *)&m->kind, sizeof(m->kind));
		key_str(k, m->name);
	}
}

/* p's lines, every chunk, into t (t->key from key).  0 or -ENOMEM. */
static int render(const struct metrics_proc *p, enum metrics_format fmt,
		  const struct buf *key, struct proc_text *t)
{
	struct out lab = { .fmt = fmt }, w = { .fmt = fmt };
	int c;

	proc_labels(&lab, p);
	if (!lab.b.oom && lab.b.p) {
		w.plab = lab.b.p;
		w.plab_len = lab.b.len;
	}
	for (c = 0; c < C_COUNT; c++) {
		t->off[c] = w.b.len;
		chunk(&w, p, c);
	}
	t->off[C_COUNT] = w.b.len;
	free(lab.b.p);
	t->pid = p->pid;
	t->text = w.b.p;
	t->keylen = key->len;
	t->key = key->len ? malloc(key->len) : NULL;
	if (t->key)
		memcpy(t->key, key->p, key->len);
	return w.b.oom || !t->key ? -ENOMEM : 0;
}

static void texts_free(struct proc_text *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].key);
		free(v[i].text);
	}
	free(v);
}

struct metrics_memo *metrics_memo_new(void)
{
	return calloc(1, sizeof(struct metrics_memo));
}

void metrics_memo_free(struct metrics_memo *m)
{
	if (!m)
		return;
	texts_free(m->v, m->n);
	free(m);
}

/* A process of the last scrape, by pid, whose lines came from the same key: taken out of m. */
static bool memo_take(struct metrics_memo *m, size_t *j, const struct buf *key, pid_t pid,
		      struct proc_text *t)
{
	if (!m)
		return false;
	while (*j < m->n && m->v[*j].pid < pid)
		(*j)++;
	if (*j == m->n || m->v[*j].pid != pid || !m->v[*j].text || m->v[*j].keylen != key->len ||
	    memcmp(m->v[*j].key, key->p, key->len))
		return false;
	*t = m->v[*j];
	m->v[*j] = (struct proc_text){ .pid = pid };
	return true;
}

static int per_process(struct out *o, const struct metrics_snap *s, struct metrics_memo *memo)
{
	struct proc_text *t = calloc(s->nprocs ? s->nprocs : 1, sizeof(*t));
	struct buf key = { 0 };
	bool sharing = false;
	size_t i, j = 0;
	int c, err = 0;

	if (!t)
		return -ENOMEM;
	for (i = 0; i < s->nprocs && !err; i++) {
		const struct metrics_proc *p = &s->procs[i];

		sharing |= p->sharing;
		proc_key(p, &key);
		if (key.oom)
			err = -ENOMEM;
		else if (!memo_take(memo, &j, &key, p->pid, &t[i]))
			err = render(p, o->fmt, &key, &t[i]);
	}
	/* No --sharing family without a process a pass has read. */
	for (c = 0; c < (sharing ? C_COUNT : C_USS) && !err; c++) {
		family_header(o, chunk_fam[c]);
		for (i = 0; i < s->nprocs; i++)
			json_buf_mem(&o->b, t[i].text + t[i].off[c], t[i].off[c + 1] - t[i].off[c]);
	}
	free(key.p);
	if (memo && !err) {
		texts_free(memo->v, memo->n);
		memo->v = t;
		memo->n = s->nprocs;
	} else {
		texts_free(t, s->nprocs);
	}
	return err;
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

int metrics_format(const struct metrics_snap *s, enum metrics_format fmt,
		   struct metrics_memo *memo, char **text, size_t *len)
{
	struct out o = { .fmt = fmt };
	int err;

	*text = NULL;
	*len = 0;
	health(&o, s);
	err = per_process(&o, s, memo);
	memory(&o, s);
	if (fmt == METRICS_OPENMETRICS)
		json_buf_lit(&o.b, "# EOF\n");
	if (err || o.b.oom || !o.b.p) {
		free(o.b.p);
		return -ENOMEM;
	}
	*text = o.b.p;
	*len = o.b.len;
	return 0;
}
