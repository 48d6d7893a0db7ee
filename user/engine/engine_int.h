/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine's insides, shared by the files of user/engine/ only:
 *
 *   engine_core.c  engine.h's calls under the table: clock, readers' lock, quit flag, find
 *   table.c   the process table: lookups, creation, the batch-end work list, the lock
 *   rules.c   the rules that turn kernel records into model edits (and scans to queue)
 *   scan.c    the batch end: layouts from /proc/PID/maps, pages from pagemap
 *   source.c  the kernel behind struct engine_source (/proc, pagemap, BPF targets)
 *   pass.c    the per-refresh pass of the task iterator: counters, ghosts, missed processes
 *   engine.c  lifecycle, the ring buffer, tick policy (counters, reconcile, --max-cpu)
 *
 * Calls go down that list, never back up.  rules.c, table.c and scan.c reach the system
 * only through struct engine_source, so tests/unit/test_rules.c runs them against a
 * scripted address space, without a kernel.
 */
#ifndef MEVITOP_ENGINE_INT_H
#define MEVITOP_ENGINE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "engine/engine.h"
#include "model/fcache.h"
#include "kernel/pagemap.h"
#include "kernel/procfs.h"
#include "kernel/taskiter.h"

struct stacks;

/* What the engine's rules and scans ask of the system.  ctx is engine.src_ctx. */
struct engine_source {
	/* The BPF target set of a filtered session (-p, -u, --comm, --cgroup). */
	bool (*is_target)(void *ctx, pid_t tgid);
	int (*add_target)(void *ctx, pid_t tgid);
	void (*del_target)(void *ctx, pid_t tgid);
	/* Does pid pass -u/--comm/--cgroup?  comm may be NULL (read it). */
	bool (*passes)(void *ctx, pid_t pid, const char *comm);
	/* pid exited, was replaced (exec) or dropped: forget what other tables keep (stacks). */
	void (*forget)(void *ctx, pid_t pid);
	/* p's layout was (re)read: what other tables held back for it may be placed (stacks
	 * taken before the layout was known); may be NULL. */
	void (*layout_known)(void *ctx, struct proc *p);
	int (*read_tgid)(void *ctx, pid_t tid, pid_t *tgid);
	int (*pidfd_target)(void *ctx, pid_t pid, int fd, pid_t *target);
	int (*live_thread)(void *ctx, pid_t pid, pid_t *tid);
	/* The layout, in address order (procfs_read_maps' contract); counts e->st.maps_reads
	 * in the caller. */
	int (*read_layout)(void *ctx, pid_t pid, maps_cb cb, void *arg);
	int (*read_vmflags)(void *ctx, pid_t pid, vmflags_cb cb, void *arg);
	int (*read_start_brk)(void *ctx, pid_t pid, uint64_t *start_brk);
	int (*read_comm)(void *ctx, pid_t pid, char *comm, size_t len);
	int (*read_uid)(void *ctx, pid_t pid, uid_t *uid);
	int (*read_counters)(void *ctx, pid_t pid, struct proc_counters *c);
	int (*read_rss)(void *ctx, pid_t pid, uint64_t *rss);
	/* Pages: a handle (>= 0) or -errno; runs as pagemap_scan() reports them. */
	int (*open_pages)(void *ctx, pid_t pid);
	int (*scan_pages)(void *ctx, int fd, uint64_t start, uint64_t end, pagemap_run_cb cb,
			  void *arg);
	void (*close_pages)(void *ctx, int fd);
};

/* The kernel's source (source.c); its ctx is the engine. */
extern const struct engine_source engine_kernel_source;

#define PMD_PAGES	512ULL		/* 2 MiB of 4 KiB pages */

/* struct pstate.pending */
#define PEND_RELOAD	(1u << 0)	/* re-read maps and scan everything (new, exec) */
#define PEND_MAPS	(1u << 1)	/* re-read maps: names, layout the events could not say */
#define PEND_SCAN	(1u << 2)	/* scan the queued ranges */
#define PEND_RECONCILE	(1u << 3)	/* full rescan, corrections counted as drift */
#define PEND_RESCAN	(1u << 4)	/* sample mode: full rescan of a process that changed */
#define PEND_VERIFY	(1u << 5)	/* full rescan: a check the counters could not decide
					 * (counted as a reconcile, its corrections not as drift) */

struct range {
	uint64_t start, end;	/* pages */
};

/* A fault whose outcome spans a window (THP, fault-around) is checked after the window's
 * scan: the record is written at fault entry, so the scan may run while the fault is still
 * allocating, zeroing or compacting.  If the faulting page is not yet present, the window
 * is scanned again at the next batch. */
struct fault_check {
	uint64_t page;
	struct range window;
	uint32_t tries;
};

#define FAULT_CHECK_TRIES 200	/* ~2 s of batches; then the rss check takes over */

/* One per process, 5,000 on a big host: ordered without holes to speak of, the sharing
 * state apart (192 bytes, was 320). */
struct pstate {
	int pagemap_fd;
	pid_t io_pid;			/* whose /proc entries to read: the pid, or a live thread
					 * once the main thread has exited (procfs_live_thread) */
	struct range *scan;
	size_t nscan, capscan;
	struct fault_check *checks;
	size_t nchecks, capchecks;
	uint64_t events_tick;		/* events applied since the last tick */
	uint64_t rss_updates;		/* trace: rss_stat hits at the last tick */
	struct proc_counters c;		/* /proc/PID/stat counters at the last tick or full scan */
	uint64_t c_ns;			/* when they were read, or later (CLOCK_MONOTONIC) */
	int64_t rss_gap;		/* model's resident pages - kernel rss, at the last full
					 * scan (scan_rss_gap_check) */
	uint64_t born;			/* start time (/proc/PID/stat's clock ticks), to tell a
					 * reused pid */
	uint64_t last_full_ns;		/* last full scan */
	uint64_t cgroup_id;		/* the last pass's (0: no pass) */
	int load_err;			/* why the last reload failed (-errno), 0 if it did not */
	bool counters_seen;
	bool rss_gap_seen;
	bool rss_gap_dirty;		/* events or an rss change since the last check */
	bool target;			/* named with -p */
	bool locked_future;		/* mlockall(MCL_FUTURE) */
	bool scan_failed;		/* a scan failed (not for a vanished process): rescan
					 * it whole at the next tick */
	struct pshare *sharing;		/* --sharing's state (share.c), NULL without it */
};

/* A process's sharing state (share.c, --sharing): allocated only in sessions that pass. */
struct pshare {
	struct share_build *build;	/* a sharing pass in progress, or NULL */
	uint64_t done_ns;		/* when the last complete pass began, 0: none */
	uint64_t faults;		/* p->faults then */
	uint64_t world[2];		/* the sharing world's movers then (share.c) */
	uint64_t sens[2];		/* how far each mover can move its figures, and */
	uint64_t pss;			/* the PSS of what the pass read (bytes << 12) */
	uint64_t ksm_merged;		/* its ksm_merging_pages when ksm_check last read it */
	struct share_sig {		/* what share.c saw of it at the last tick */
		uint64_t faults, file, anon;	/* resident pages, file-backed and anonymous */
		bool seen, gone;
	} sig;
	bool anon;			/* anonymous pages may be shared (history unknown, a
					 * fork, KSM): read their PFNs too */
	bool due;			/* a fork or an exec: pass again at the next tick */
	bool kin;			/* its parent or a child faulted (share.c) */
};

/* A sharing pass of one process, carried over ticks while the budget runs out. */
struct share_build {
	struct share *s;		/* being filled; replaces proc.share when complete */
	uint64_t cursor;		/* the next page to read */
	uint64_t start_ns, faults;	/* when it began, p->faults then */
	uint64_t world[2];		/* the sharing world's movers then (share.c) */
	uint64_t sens[2];		/* share.c's sensitivity, summed over the pages read */
	bool anon;			/* it reads anonymous mappings */
	bool anon_shared;		/* it found an anonymous page mapped more than once */
	bool forked;			/* a fork since it began: anon stays "may be shared" */
};

struct alias {
	pid_t child, parent;		/* a vfork/CLONE_VM child sharing the parent's mm */
};

/* Faults at consecutive pages of one process with the same flags, not applied yet. */
struct fault_run {
	uint32_t tgid;
	uint8_t flags;			/* enum ev_fault_flags */
	uint64_t start, end;		/* pages; start == end: none */
};

#define NBUCKETS 4096
#define GHOST_TICKS 5	/* ticks to look for processes after exit records were lost */
#define VERIFY_MIN_NS 5000000000ULL	/* rss gap undecided: rescan at most this often */
#define RETRY_MAX 256

struct engine {
	struct engine_opts o;
	struct features f;
	struct tracer *tracer;
	const struct engine_source *src;	/* every read of the system the rules make */
	void *src_ctx;
	pthread_mutex_t lock;
	/* Held by whichever thread steps or ticks the engine (exact mode has two: the view's
	 * and the pump), for the whole step: table_yield() lets readers in mid-step, never
	 * another writer, which would change the model under the step's iterators. */
	pthread_mutex_t step_lock;
	struct proc *buckets[NBUCKETS];
	size_t nprocs;
	uint64_t serials;		/* the last struct proc serial given (table_add) */
	struct proc **sorted;
	size_t nsorted, capsorted;
	bool sorted_dirty;
	struct proc *pending;		/* batch-end work list */
	struct alias *aliases;
	size_t naliases, capaliases;
	struct engine_stats st;
	uint64_t last_tick_ns, events_at_tick, maps_reads_at_tick;
	uint64_t ticks;			/* engine_tick calls: engine_ticks */
	uint64_t now_ns;		/* of the batch being applied */
	bool use_scan;			/* PAGEMAP_SCAN, else pread */
	bool use_procmap;		/* PROCMAP_QUERY, else the text of /proc/PID/maps */
	bool use_maps_text;		/* with it, the text first (procmap_read_layout()) */
	bool smaps;			/* read VmFlags where THP eligibility matters */
	size_t reconcile_cursor;
	struct scan_run *runs;
	size_t nruns, capruns;
	bool runs_lost;			/* the run buffer could not grow: this pass is unusable */
	int test_fail_runs;		/* MEVITOP_TEST_FAIL_ALLOC=scan-runs: growths to fail */
	struct proc *retry[RETRY_MAX];	/* processes with faults still in flight */
	size_t nretry;
	struct engine_hooks hooks;
	void (*on_tick)(void *arg);	/* engine_on_tick: called by drive.c */
	void *on_tick_arg;
	atomic_int waiting;		/* readers waiting in engine_lock(_timed) */
	bool heat_scan;			/* scans record newly resident pages as heat */
	uint64_t locked_at;		/* when the engine thread took the lock */
	uint64_t drain_from;		/* when this drain of the ring buffer began */
	uint64_t drained;		/* records applied in it */
	struct fault_run run;		/* faults not applied yet (rules.c) */
	bool drain_paused;		/* it ran out of budget: the next step must not wait */
	uint64_t cpu_at_tick;		/* process CPU time at the last tick */
	uint32_t scale;			/* --max-cpu interval multiplier */
	struct proc **exits;		/* exited since engine_take_exits */
	uint64_t lost_exits;		/* lost exit records at the last tick */
	uint32_t ghost_ticks;		/* ticks left to look for processes those were about */
	size_t nexits, capexits;
	struct stacks *stacks;		/* --stacks, or NULL */
	/* The task iterator's pass (pass.c): NULL tasks means /proc per process. */
	struct taskiter *tasks;
	const struct task_rec *recs;	/* the last pass, sorted by tgid */
	size_t nrecs;
	bool pass_ok;			/* recs is this refresh's */
	uint64_t pass_ns;		/* when that pass ended (CLOCK_MONOTONIC) */
	bool pass_reads;		/* the source's reads may take a record of recs (the
					 * initial scans: the pass was taken just before) */
	pid_t *nomm;			/* without a pass: listed pids with no address space
					 * (kernel threads), sorted; not retried (pass.c) */
	size_t nnomm, capnomm;
	struct mem_summary mem;		/* /proc/meminfo at the last tick (files.c) */
	struct fcache *fc;		/* the page cache's files (files.c) */
	struct files *files;		/* how they are read (files.h), NULL: files off */
	struct anon_acct *anon;		/* the summary's anonymous pages, once (mem_anon.h) */
	bool anon_meminfo;		/* ... from AnonPages (mem_anon_from_meminfo()) */
	struct sharing *sharing;	/* share.c's state, NULL: --sharing off */
	struct start_ahead *ahead;	/* the start's other thread (start_ahead.h), or NULL */
};

/* share.c: USS, PSS and map-count classes (model/share.h), a pass per process within a
 * page budget per tick.  engine_share_init fails (-errno, why filled) when the kernel
 * hides PFNs or map counts. */
int engine_share_init(struct engine *e, char *why, size_t whylen);
/* procs: engine_procs()'s, n of them. */
void engine_share_tick(struct engine *e, struct proc **procs, size_t n);
void engine_share_fini(struct engine *e);
/* n looked-up map counts of pfns (ascending) less mevitop's own mappings of each. */
void engine_share_discount_self(struct engine *e, const uint64_t *pfns, uint64_t *counts,
				size_t n);

/* files.c: the memory summary and the file table, refreshed at each tick. */
int engine_files_init(struct engine *e);
/* The first complete table (after the initial scans); --file's bad paths fail here. */
int engine_files_start(struct engine *e, char *why, size_t whylen);
void engine_files_refresh(struct engine *e);
void engine_files_fini(struct engine *e);


#define HOOK(e, name, ...) do {						\
	if ((e)->hooks.name)							\
		(e)->hooks.name((e)->hooks.ctx, ##__VA_ARGS__);			\
} while (0)

/* Sample and exact mode: no record of each fault; a process's faults show only in its
 * counters (poll_counters), chunk mode's in counts, trace mode's in records. */
static inline bool faults_by_counters(const struct engine *e)
{
	return e->o.mode != MODE_CHUNK && e->o.mode != MODE_TRACE;
}

static inline struct pstate *ps(const struct proc *p)
{
	return p->engine;
}

/* Forgets p's sharing pass in progress (the process is gone, or has a new mm). */
static inline void share_build_drop(struct pstate *s)
{
	struct pshare *sh = s->sharing;

	if (!sh)
		return;
	if (sh->build)
		share_free(sh->build->s);
	free(sh->build);
	sh->build = NULL;
}

/* Whose /proc entries to read: the pid, or a live thread once the main thread exited. */
static inline pid_t io(const struct proc *p)
{
	return ps(p)->io_pid ? ps(p)->io_pid : p->pid;
}

/* --- table.c --- */

/* The pid table's own chains, not lib/hashtab.h: intrusive (proc->hnext), so adding a process
 * allocates nothing and cannot fail (table_add has no error path), engine_find on every event
 * is one modulo and a short walk with no indirect call, and the readers that walk every
 * process (engine.c, files.c) go bucket by bucket. */
static inline struct proc **table_bucket(struct engine *e, pid_t pid)
{
	return &e->buckets[(uint32_t)pid % NBUCKETS];
}

/* Sets up what table.c, rules.c and scan.c use (engine_new calls it; so do the unit
 * tests, with their own source).  0 or -errno. */
int table_init(struct engine *e, const struct engine_opts *o, const struct features *f,
	       const struct engine_source *src, void *src_ctx);
/* Frees what table_init and the table allocated (not e itself). */
void table_fini(struct engine *e);
void table_lock(struct engine *e);
void table_unlock(struct engine *e);
void table_yield(struct engine *e);
int table_choose_io(struct engine *e, struct proc *p);
void table_close_pages(struct engine *e, struct proc *p);
/* Gives p its engine state (frees p and returns NULL when that fails). */
struct proc *table_attach_pstate(struct engine *e, struct proc *p);
void table_add(struct engine *e, struct proc *p);
struct proc *table_new_proc(struct engine *e, pid_t pid, bool target);
void table_del(struct engine *e, struct proc *p);
void table_pend(struct engine *e, struct proc *p, uint32_t what);
void table_queue_scan(struct engine *e, struct proc *p, uint64_t start, uint64_t end);
pid_t table_alias_parent(struct engine *e, pid_t tgid);
void table_alias_del(struct engine *e, pid_t child);
void table_alias_add(struct engine *e, pid_t child, pid_t parent);
bool table_filtered(const struct engine *e);
struct proc *table_proc_for(struct engine *e, pid_t tgid);
struct proc *table_watch_new(struct engine *e, pid_t tgid, const char *comm);
void table_unwatch(struct engine *e, struct proc *p);
void table_mark_exited(struct engine *e, struct proc *p);
/* pid turned out to have no address space (a kernel thread): the fallback's listing
 * (pass.c) does not model it again while /proc lists it. */
void table_set_no_mm(struct engine *e, pid_t pid);
bool table_no_mm(const struct engine *e, pid_t pid);

/* --- pass.c --- */

/* Takes this refresh's pass (before the drain: a process in it has had its fork record
 * written, one missing from it has ended).  Sets e->pass_ok. */
void pass_take(struct engine *e);
/* pid's record in the last pass, or NULL. */
const struct task_rec *pass_find(const struct engine *e, pid_t pid);
/* After the drain: processes the pass has that the table lacks (fork records lost), or
 * has under a listed pid with another start time (reused unseen), are modelled, the
 * latter in a new row.  Without a pass, whole-system sessions model the pids /proc lists
 * that the table lacks. */
void pass_add_missed(struct engine *e);
/* Is p still the process the pass has under its pid?  false: ended (gone, or the pid
 * reused by another start time). */
bool pass_alive(const struct engine *e, const struct proc *p, const struct task_rec **r);

/* --- rules.c --- */

/* Applies one ring-buffer record (struct ev_* of events.h, size bytes) to the model. */
void engine_apply_record(struct engine *e, const void *data, size_t size);
/* The faults engine_apply_record holds back as one run (rules.c), applied: at the end of a
 * drain, before anything reads the model. */
void engine_faults_flush(struct engine *e);

/* --- scan.c --- */

/* The batch end: everything the records asked for, in one pass per process. */
void scan_flush_pending(struct engine *e);
/* At a tick: does the rss gap say a change no event explained? (trace and chunk mode) */
void scan_rss_gap_check(struct engine *e, struct proc *p);

#endif
