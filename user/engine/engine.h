/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine: keeps the page model of every watched process current.
 *
 *   BPF records ──► apply (in ring order) ──► batch end: targeted pagemap scans, /proc/PID/maps
 *                                               re-reads, new processes' initial scans
 *   every interval ──► reconcile: lost events, rss counters no event explains, periodic
 *
 * Events are applied in the order the kernel reserved them.  Whatever an event cannot say
 * exactly (a THP fault, fault-around, MAP_POPULATE, MADV_PAGEOUT, a forked child's file
 * pages) becomes a scan of exactly the affected range at the end of the batch, which reads
 * the truth after every event of the batch; later events replay on top of it, so the model
 * converges on pagemap whatever the interleaving.
 */
#ifndef MEVITOP_ENGINE_H
#define MEVITOP_ENGINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "events.h"
#include "kernel/kfeatures.h"
#include "kernel/filter.h"
#include "model/model.h"
#include "model/fcache.h"

enum engine_mode {
	MODE_TRACE,	/* every fault and mm syscall streamed, applied in order */
	MODE_SAMPLE,	/* no fault hook: processes whose fault or rss counters moved since the
			 * last refresh are rescanned (the default: nothing runs per fault) */
	MODE_CHUNK,	/* faults counted per (process, 2 MiB chunk) in the kernel; the chunks
			 * that changed are rescanned */
	MODE_EXACT,	/* sample mode plus a userfaultfd per process (exact/exact.h) */
};

struct engine_opts {
	enum engine_mode mode;
	const pid_t *pids;		/* NULL/0: the whole system */
	size_t npids;
	bool follow_children;		/* watch children of watched processes */
	bool reconcile;			/* periodic rescans (--no-reconcile turns them off) */
	uint64_t reconcile_period_ms;	/* each process at most this often */
	uint64_t reconcile_budget_pages; /* pages rescanned per tick at most */
	size_t ringbuf_bytes;
	size_t chunk_map_entries;	/* sample mode's (process, chunk) map; 0: default */
	uint64_t tombstone_ms;		/* how long an exited process stays visible */
	struct filter *filter;		/* -u, --comm, --cgroup (whole-system mode), or NULL */
	bool files;			/* the page cache's files (model/fcache.h, files.c) */
	const char *const *file_paths;	/* --file PATH ...: watched page by page */
	size_t nfile_paths;
	uint32_t files_top;		/* rows whose counts are refreshed exactly (cachestat)
					 * each interval, largest first; 0: every row */
	uint32_t files_first_listed;	/* the first snapshot shows the largest this many
					 * rows only (--json --files-top N): the others are named
					 * at the next refreshes; 0: every row named first */
	uint32_t max_cpu_pct;		/* --max-cpu: widen the interval past this; 0: off */
	bool rss_hook;			/* --rss-hook: kmem:rss_stat counters in a BPF map */
	bool stacks;			/* --stacks: first-touch stacks (user/stacks/) */
	uint64_t stack_interval_ms;	/* one stack per 2 MiB chunk this often */
	uint64_t stack_sample_period;	/* sample mode: one page fault in this many */
	uint64_t stack_duty_on_ms;	/* ... while the perf events are open, this long */
	uint64_t stack_duty_every_ms;	/* of every this long */
	bool sharing;			/* --sharing: USS, PSS, map counts (model/share.h) */
	uint64_t share_budget_pages;	/* PFNs read per tick at most; 0: the default */
	uint64_t share_period_ms;	/* a process that moved is read again this often (one
					 * that did not, 10x less often); 0: the default */
};

struct engine_stats {
	uint64_t events;
	uint64_t events_by_kind[EV_KIND_MAX];
	uint64_t lost;
	uint64_t lost_by_kind[EV_KIND_MAX];
	uint64_t reconciles;		/* processes rescanned to check the model */
	uint64_t drift_pages;		/* pages those rescans corrected */
	uint64_t scans;			/* targeted scans (event driven) */
	uint64_t scanned_pages;
	uint64_t maps_reads;
	double maps_reads_per_sec;	/* layout reads over the last interval */
	uint64_t layout_changes;	/* processes the layout hook marked (one read each) */
	uint64_t layout_unowned;	/* write-lock releases no process could be named for */
	uint64_t overflows;
	uint64_t retired;		/* processes found gone whose exit record was lost */
	uint64_t missed;		/* processes found by the pass whose fork record was lost */
	uint64_t layout_hooked;		/* 1: layouts from mmap_lock_released (JSON
					 * layout_source), 0: from syscall records */
	bool fault_rings;		/* trace mode's faults from the per-CPU rings */
	double events_per_sec;
	double interval_s;
	double cpu_pct;			/* mevitop's CPU over the last interval, % of one core */
	uint32_t interval_scale;	/* >1 while --max-cpu stretches the interval */
};

struct engine;

/* A whole-system start's second thread, started before the feature probe (its rollups need
 * only pids: start_ahead.c); engine_start() takes it over.  Nothing for -p or a filter.
 * disabled: the --disable switches (DIS_*), known before the probe. */
void engine_prelaunch(const struct engine_opts *o, uint32_t disabled);
int engine_new(const struct engine_opts *o, const struct features *f, struct engine **out,
	       char *why, size_t whylen);
/* Attaches the hooks, then models the watched processes (initial scans).  Events that
 * happen meanwhile are buffered and applied after. */
int engine_start(struct engine *e, char *why, size_t whylen);
/* How often to drain: trace mode streams every fault (10 ms keeps the ring buffer short);
 * the other modes stream only mapping changes (rare) and drain the fault counts at ticks;
 * sample mode with only process records, whose records wake it, once a second. */
int engine_poll_ms(const struct engine *e);
/* Waits up to timeout_ms for events, applies them and does the batch-end work. */
int engine_step(struct engine *e, int timeout_ms);
/*
 * The user asked to quit (q, a signal): every engine, and exact mode's hooks, stop
 * starting work that may wait on a target (a scan or registration waits for its mmap lock,
 * which a target that maps flat out keeps busy), so the quit is answered at once.  Sets
 * an atomic flag: async-signal-safe.  engine_step() then returns without draining and
 * batch ends skip their scans; false again (run: CMD exited, one last snapshot follows)
 * restores both.
 */
void engine_set_quitting(bool on);
bool engine_quitting(void);
/* Once per interval: reconcile, rates, tombstones. */
void engine_tick(struct engine *e);
void engine_free(struct engine *e);

/* Readers (JSON, UI) hold the lock while they look at the model. */
void engine_lock(struct engine *e);
/* The same, giving up after timeout_ms >= 0: 0 with the lock held, or -ETIMEDOUT.  For a
 * reader that must not stop while the engine applies a long batch (the UI reads keys and
 * draws older data; a scrape serves its previous copy). */
int engine_lock_timed(struct engine *e, int timeout_ms);
void engine_unlock(struct engine *e);

/* Ticks so far (under the lock): tells one tick's model from the next, so readers that
 * share a copy per tick (the web view's answers) know when to take a new one. */
uint64_t engine_ticks(const struct engine *e);
/* Processes sorted by pid; the array is the engine's, valid until the next step/tick. */
struct proc **engine_procs(struct engine *e, size_t *n);
struct proc *engine_find(struct engine *e, pid_t pid);
const struct engine_stats *engine_stats(struct engine *e);
const struct features *engine_features(struct engine *e);
enum engine_mode engine_mode(const struct engine *e);
const char *engine_mode_name(enum engine_mode m);
/* Processes the user asked for that are still alive (for -p: exit when 0). */
size_t engine_alive_targets(struct engine *e);
/* Calls fn for each process that exited since the last call (to report it once). */
void engine_take_exits(struct engine *e, void (*fn)(void *ctx, const struct proc *p), void *ctx);
/*
 * Extension points (exact mode, user/exact/).  Every hook runs in the engine's thread with
 * the engine lock held, so it may change the model; it must not block on the target.
 */
/* A first touch seen by exact mode: which page, which thread, when. */
struct first_touch {
	int32_t pid;
	uint32_t tid;			/* 0: not known (fast variant: seen by a scan) */
	uint64_t addr;			/* the faulting address (fast: the page's) */
	uint64_t ts_ns;			/* CLOCK_MONOTONIC */
	bool write;			/* false: a read, mapping the zero page */
};

struct engine_hooks {
	void *ctx;
	/* p's layout was built from /proc/PID/maps and scanned (new process, exec, heal). */
	void (*reloaded)(void *ctx, struct proc *p);
	/* [start, end) (pages) became mapped by an event: mmap, brk growth, mremap target. */
	void (*mapped)(void *ctx, struct proc *p, uint64_t start, uint64_t end);
	/* [start, end) (pages) lost its pages: unmapped (@unmapped: munmap, brk shrink, mremap
	 * shrink) or zapped (MADV_DONTNEED/REMOVE), once the syscall returned. */
	void (*zapped)(void *ctx, struct proc *p, uint64_t start, uint64_t end, bool unmapped);
	/* mremap moved @len pages from @old to @new (before `mapped` for the result). */
	void (*moved)(void *ctx, struct proc *p, uint64_t old, uint64_t new, uint64_t len);
	/* p's address space was replaced (exec) or p exited. */
	void (*exec)(void *ctx, struct proc *p);
	void (*exited)(void *ctx, struct proc *p);
	/* After each batch of events (engine_step) and at each tick, before reconciling. */
	void (*step)(void *ctx);
	void (*tick)(void *ctx);
	/* A mode's own counters (exact mode's: exact/exact_stats.h), carried, not read: its
	 * members of the JSON "stats" object as text ("exact": {...}), malloc'ed, NULL if out
	 * of memory; and its first touches so far, for the metrics.  Reading changes nothing:
	 * the tick is where an interval ends, so a JSON line, a frame and a scrape of one
	 * interval agree.  The text's log is the interval that ended at the last tick. */
	char *(*stats_json)(void *ctx);
	uint64_t (*first_touches)(void *ctx);
	/* Every first touch of the interval that ended at the last tick (kept only when
	 * recording: a recorder asks each frame), valid until the next tick; *dropped: how
	 * many did not fit (FIRST_TOUCHES_MAX a frame).  Returns the count. */
	size_t (*touches)(void *ctx, const struct first_touch **v, uint64_t *dropped);
};
#define FIRST_TOUCHES_MAX	(1u << 20)	/* 24 MiB between two frames */
void engine_set_hooks(struct engine *e, const struct engine_hooks *h);
const struct engine_hooks *engine_hooks(struct engine *e);
/* Apart from the hooks (a mode's): fn(arg) after each tick of engine_drive, its frame
 * written and the lock released, in the driving thread, so a reader waiting for a new
 * snapshot (the web view's streams) hears of it without polling.  fn must not block.  Set
 * before the engine is driven and cleared (NULL) after. */
void engine_on_tick(struct engine *e, void (*fn)(void *arg), void *arg);
/* For hooks: scan [start, end) (pages, clipped to mappings) of p at the end of this batch. */
void engine_queue_scan(struct engine *e, struct proc *p, uint64_t start, uint64_t end);

/* The interval multiplier --max-cpu asks for (1 when within budget). */
uint32_t engine_interval_scale(struct engine *e);

/* The cgroup (v2 id) the last task-iterator pass saw p in; 0 when unknown (no pass). */
uint64_t engine_proc_cgroup(struct engine *e, const struct proc *p);

/* Heap bytes used by the models. */
size_t engine_bytes(struct engine *e);
/* ... of which this process's model. */
size_t engine_proc_bytes(const struct proc *p);
uint64_t engine_now_ns(void);
/* The machine's memory summary as of the last tick (never NULL; ts_ns 0 before the first),
 * and the page cache's files (model/fcache.h; NULL when files are not watched).  Read
 * under the engine lock; valid until it is released. */
const struct mem_summary *engine_memory(struct engine *e);
struct fcache *engine_fcache(struct engine *e);
/* The table's totals, its k largest rows (fcache_top_cached's answer) and its watched rows
 * (--file's, then those a view asked pages for), kept as rows change: no pass over the table
 * (engine/files_top.c).  Under the engine lock; nothing (0) when files are off. */
void engine_files_totals(struct engine *e, struct fc_totals *out);
size_t engine_files_top(struct engine *e, struct fc_file **out, size_t k);
int engine_files_each_watched(struct engine *e, int (*fn)(struct fc_file *f, void *arg),
			      void *arg);
/* How the file table is made (JSON "stats.files"), NULL when files are off. */
struct files_stats {
	const char *source;		/* "bpf-walk" or "proc" */
	uint64_t full_walks, full_walk_ns, full_walk_steps;	/* the complete walk at start */
	uint64_t walk_ns, walk_steps;	/* the last walk (each tick: shmem superblocks only) */
	uint64_t walk_cuts, walk_errors;
	uint64_t opens, opened;		/* open_by_handle_at tried, succeeded */
	uint64_t cachestats;		/* cachestat(2) calls */
	uint64_t proc_scans;		/* /proc/PID/fd walks (names of memfds, deleted files) */
	uint64_t tree_walks;		/* tmpfs mount trees walked for names */
	uint64_t queued;		/* rows waiting for a name (the largest go first) */
	uint64_t refresh_ns;		/* the last refresh's wall time, of which */
	uint64_t mapped_ns, proc_ns;	/* mapped_by from the model, names from /proc */
	uint64_t kinfo, kinfo_ns;	/* rows the kernel was asked about; the last tick's time */
	uint64_t rewalks;		/* full walks after the delta table dropped counts */
};
const struct files_stats *engine_files_stats(struct engine *e);
/* What the sharing passes cost (JSON "stats.sharing"); NULL when --sharing is off. */
struct share_stats {
	uint64_t passes;		/* processes' passes completed */
	uint64_t pages_read;		/* pagemap entries read */
	uint64_t lookups;		/* PFNs looked up in kpagecount/kpageflags */
	uint64_t cached;		/* PFNs this tick had looked up already */
	uint64_t preads;		/* reads of kpagecount and kpageflags */
	uint64_t tick_ns, tick_pages;	/* the last tick's time and entries */
	uint64_t total_ns;		/* every tick's time */
	uint64_t anon_verified;		/* processes found to share no anonymous page */
	uint64_t self_pages;		/* PFNs mevitop maps itself, at the last read */
	uint64_t self_entries;		/* its own pagemap entries read for them, in all */
	uint64_t self_ns;		/* and the time those reads took, in all */
};
const struct share_stats *engine_share_stats(struct engine *e);
/* --sharing, the cursor line: which other watched processes map, now, the physical page
 * pid's page `page` maps (share_who.c says where it looks).  Under the engine lock; a few
 * pagemap reads at most, the answer kept for the rest of the tick. */
#define SHARE_WHO_MAX	6		/* pids named */
struct share_who {
	bool known;			/* the page is present: its PFN was read */
	bool cut;			/* the read budget ran out: more may map it */
	uint32_t n;			/* other processes found mapping it */
	pid_t pids[SHARE_WHO_MAX];	/* the first of them, by pid */
	char comm[16];			/* pids[0]'s */
};
/* 0 (out filled), -ENOENT (no such watched process, or --sharing off), or -errno. */
int engine_share_who(struct engine *e, pid_t pid, uint64_t page, struct share_who *out);
/* --stacks' first-touch table (read under the engine lock), or NULL. */
struct stacks *engine_stacks(struct engine *e);

#endif
