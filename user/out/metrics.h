/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The metrics endpoint's data: a copy of what the exposition needs, taken from the model
 * under the engine lock (numbers and a few names, no formatting), then turned into text
 * after the lock is released.  doc/metrics.md lists every metric and its labels.
 *
 * Cardinality is bounded: processes that exited are left out (their series end with the
 * process), at most `procs` processes are exported (the largest by resident bytes; the
 * rest are counted in mevitop_metrics_processes_omitted), kinds a process has no mapping
 * of are left out, and at most `top` mappings per process get a series of their own.
 */
#ifndef MEVITOP_OUT_METRICS_H
#define MEVITOP_OUT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "engine/engine.h"
#include "model/model.h"

#define METRICS_TOP_DEFAULT 5		/* --metrics-top: mappings per process */
#define METRICS_TOP_MAX 1000
#define METRICS_PROCS_DEFAULT 500	/* --metrics-procs: processes per scrape */
#define METRICS_PROCS_MAX 100000

#define METRICS_FILES_DEFAULT 20	/* --metrics-files: the largest cached files */
#define METRICS_FILES_MAX 1000
struct metrics_opts {
	uint32_t top;
	uint32_t procs;
	uint32_t files;			/* --metrics-files */
	uint64_t interval_ms;		/* --interval */
};

struct metrics_map {
	uint64_t start;			/* bytes */
	uint64_t resident;		/* pages */
	enum map_kind kind;
	const char *name;		/* path, [heap], [stack], or NULL (anonymous): a
					 * reference of lib/strpool.h's (the model's path) */
};

struct metrics_proc {
	pid_t pid;
	char comm[16];
	const char *cgroup;		/* "/system.slice/x.service"; "" when unknown; owned
					 * by the scrape's memo of paths, valid until the next
					 * metrics_finish() */
	uint64_t serial;		/* struct proc's: a reused pid is another process */
	uint64_t cgroup_id;		/* the engine's pass's, 0 unknown (engine_proc_cgroup) */
	uint64_t faults;
	bool sharing;			/* a --sharing pass has read it: uss, pss, shared */
	uint64_t uss, pss, shared;	/* bytes */
	uint64_t pages[MK_COUNT][PS_COUNT];	/* [kind][PS_NOT_RESIDENT] holds mapped */
	uint64_t resident;		/* pages, all kinds: --metrics-procs keeps the largest */
	struct metrics_map *top;	/* the largest resident mappings, largest first
					 * (in metrics_snap.maps) */
	size_t ntop;
};

/* One of the --metrics-files largest cached files. */
struct metrics_file {
	char *path;
	char dev[24];			/* "major:minor" */
	uint64_t ino;
	uint64_t cached, dirty;		/* pages */
};

struct metrics_snap {
	const char *mode;		/* engine_mode_name(): static */
	const char *version;
	struct engine_stats st;
	size_t model_bytes;
	uint64_t interval_ms;		/* as --max-cpu stretches it */
	size_t running;			/* processes watched, exited ones excluded */
	size_t omitted;			/* running processes beyond opts.procs */
	double cpu_seconds;		/* mevitop's user + system time */
	double age_seconds;		/* how old the model copy is when served */
	double lock_hold_seconds;	/* how long the copy held the engine lock */
	uint64_t taken_ns;		/* CLOCK_MONOTONIC when copied */
	bool exact;			/* exact mode: the counters below are its */
	uint64_t exact_touches;		/* first touches seen so far */
	struct metrics_proc *procs;
	size_t nprocs;
	struct metrics_map *maps;	/* every process's top, one block */
	size_t nmaps;
	struct mem_summary mem;		/* the machine's memory (bytes) */
	bool have_files;		/* the file table is kept (not --no-files) */
	uint64_t files;			/* files with cached pages */
	uint64_t files_omitted;		/* beyond opts.files */
	struct metrics_file *top_files;	/* the largest by cached pages, largest first */
	size_t ntop_files;
};

/* Copies the model; the caller holds the engine lock.  0 or -ENOMEM. */
int metrics_collect(struct engine *e, const struct metrics_opts *o, struct metrics_snap *s);
/* The part that reads /proc (cgroup paths) and trims to opts.procs: after the lock. */
void metrics_finish(struct metrics_snap *s, const struct metrics_opts *o);
void metrics_snap_free(struct metrics_snap *s);

enum metrics_format {
	METRICS_TEXT,			/* Prometheus text exposition 0.0.4 */
	METRICS_OPENMETRICS,		/* OpenMetrics 1.0.0 */
};

/* What an Accept header asks for, as the Prometheus client libraries decide it: media
 * ranges by quality (q=0: refused), the first openmetrics-text (version 1.0.0, 0.0.1 or
 * none) or text/plain (0.0.4 or none) wins; anything else means the text format. */
enum metrics_format metrics_negotiate(const char *accept);
const char *metrics_content_type(enum metrics_format f);
/* Does an Accept-Encoding header take gzip (and not with q=0)? */
bool metrics_accepts_gzip(const char *accept_encoding);

/* Each process's lines of the last scrape, kept while what they show is the same (a
 * steady process costs a copy, not ~25 samples written).  One per scraping thread. */
struct metrics_memo;
struct metrics_memo *metrics_memo_new(void);
void metrics_memo_free(struct metrics_memo *m);

/* The exposition text, malloc'ed; memo may be NULL (every line written).  0 or -ENOMEM. */
int metrics_format(const struct metrics_snap *s, enum metrics_format f,
		   struct metrics_memo *memo, char **out, size_t *len);

#endif
