/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exact mode's insides, shared by exact.c (processes: attach, spawn, exec, detach; threads)
 * and exact_track.c (the model side: records, registration, scans, JSON stats).
 *
 * Threads and who owns what:
 *   servers  (exact.c) run the uffd fault servers (one per CPU in ordered mode on small
 *            machines, else one): resolve a fault first, then push one record per first
 *            touch or event into `q`, a ring (a spin lock held for a copy when there are
 *            several).  They never take a lock the engine holds: a target never waits on
 *            mevitop's locks.
 *   engine   (the caller of engine_step/engine_tick: main's loop, the UI's engine thread,
 *            our pump) runs the hooks with the engine lock held; it alone touches struct
 *            xproc, struct xfd and the model.
 *   control  (exact.c) seizes and injects: the -p processes at start (from the main
 *            thread), execed and (fast) forked processes later, which the engine side
 *            queues in `jobs` (exact/jobq.h).  It hands each new userfaultfd to the engine
 *            side through `adopts` (under `lock`).
 *   runner   (exact.c, run only) follows CMD with ptrace (inj_follow_exec) until it exits.
 *
 * Calls go one way: exact.c calls exact_track.c (xt_*), never the reverse; what the
 * engine side asks of the control thread goes through the job queue.
 *
 * A userfaultfd is known by an id, never by its number: the server may close its copy and
 * the number be reused at any time.  The engine side keeps its own dup for registering.
 */
#ifndef MEVITOP_EXACT_INT_H
#define MEVITOP_EXACT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "engine/engine.h"
#include "exact/exact_opts.h"
#include "exact/exact_stats.h"
#include "exact/jobq.h"
#include "lib/pageset.h"
#include "exact/uffd.h"
#include "exact/xtab.h"

enum xrec_kind {
	XR_TOUCH = 1,		/* a first touch (ordered): a = address */
	XR_FORK,		/* id forked: tid = the child's uffd id, fd = our copy of it */
	XR_REMAP,		/* a = from, b = to, c = length (bytes) */
	XR_REMOVE,		/* [a, b) zapped (MADV_DONTNEED/REMOVE) */
	XR_UNMAP,		/* [a, b) unmapped */
	XR_GONE,		/* the mm behind id is gone */
};

#define XT_WRITE	(1u << 0)

struct xrec {
	uint64_t ts_ns;		/* CLOCK_MONOTONIC when the server read the message */
	uint64_t a, b, c;
	uint32_t id;		/* the userfaultfd it came from */
	uint32_t tid;		/* XR_TOUCH: the faulting thread; XR_FORK: the child's id */
	uint32_t lat_ns;	/* XR_TOUCH: from reading the message to the fault resolved */
	uint16_t kind;		/* enum xrec_kind */
	uint16_t flags;		/* XT_* */
	int32_t fd;		/* XR_FORK: our copy of the child's userfaultfd */
	uint32_t _pad;
};

#define XQ_SIZE		16384u	/* records; a power of two */
#define XQ_EVENT_RESERVE 64u	/* slots only events may use (a lost fork is a lost fd) */
#define FD_TABLE	65536	/* server fd number -> id */
/* First touches listed per interval in stats.exact.first_touches (the rest are counted in
 * first_touches_unlisted): a JSON line stays a few KiB whatever the target does; every
 * one of them is in a recording (struct exact's `all`). */
#define LOG_MAX		100

struct span {
	uint64_t start, end;	/* pages */
};

struct young {
	uint64_t start, end;	/* pages */
	uint64_t born_ns;
};

/* One userfaultfd, i.e. one address space (engine side). */
struct xfd {
	uint32_t id;
	int fd;			/* our copy: registration; its number stays ours */
	pid_t pid;		/* whose mm; 0 = a forked child not identified yet */
	pid_t parent;		/* forked children: the parent's pid */
	struct pageset *inherit;	/* fast, forked children: the parent's pages at fork */
	uint64_t born_ns;
};

/* A watched process (engine side). */
struct xproc {
	pid_t pid;
	struct xfd *xf;		/* its current userfaultfd, or NULL */
	int pagemap_fd;		/* fast: the scanner's */
	struct pageset *seen;	/* fast: pages present at the last scan */
	bool seeded;		/* fast: seen holds a first scan */
	bool awaiting;		/* execed, or forked (fast): a userfaultfd comes from an injection */
	struct pageset *inherit;	/* fast, forked: the parent's pages at the fork */
	struct span *fresh;	/* fast: ranges zapped since the last scan */
	size_t nfresh, capfresh;
	struct young *young;	/* fast: mappings registered lately, scanned at each drain */
	size_t nyoung, capyoung;
	struct young *pend;	/* new mappings to register (born_ns: when mapped) */
	size_t npend, cappend;
};

/* A userfaultfd handed over by the control or runner thread. */
struct adopt {
	pid_t pid;
	uint32_t id;
	int fd;			/* our copy */
	struct adopt *next;
};

struct exact;

struct srv_arg {
	struct exact *x;
	int i;
};

/*
 * Divided by the thread that owns each part (the threads: top of this file).  The top-level
 * fields are setup's: written by exact_setup before any thread starts, read by all after.
 */
struct exact {
	struct exact_opts o;		/* a copy; o.pids is not kept (only setup reads it) */
	struct engine *e;
	enum exact_variant variant;	/* EXACT_FAST or EXACT_ORDERED */
	uint64_t reg_mode;		/* UFFDIO_REGISTER_MODE_* */
	uint64_t features;		/* UFFDIO_API features asked for */
	bool use_scan;			/* PAGEMAP_SCAN, else pread of pagemap */
	bool follow_children;
	pid_t run_pid;			/* run: CMD, else 0 */
	char suspend_why[128];		/* why seccomp filters are not suspended */

	/* The fault servers: one per CPU (ordered, few CPUs) or one; see exact.c.  Setup
	 * writes the handles; fd_id and next_id are written by the servers (fork events) and
	 * by whoever hands a userfaultfd over (control, runner), read by the servers; adds is
	 * bumped at each hand-over and read by an idle server. */
	struct {
#define MAX_SRV 64
		struct uffd_server *servers[MAX_SRV];
		pthread_t threads[MAX_SRV];
		struct srv_arg args[MAX_SRV];
		int cpu[MAX_SRV];
		int n;
		int started;		/* threads running */
		_Atomic uint32_t fd_id[FD_TABLE];
		_Atomic uint32_t next_id;
		_Atomic uint64_t adds;	/* fds handed to the server (wakes an idle one) */
		/* Which servers wait on the userfaultfds (bit i: server i); the others are
		 * parked (exact_server.c, "steering").  Under park_lock when set, so that a
		 * parked server waiting on park_cond misses no wake-up. */
		_Atomic uint64_t active;
		pthread_mutex_t park_lock;
		pthread_cond_t park_cond;
		_Atomic uint64_t steer_faults, looks, seen;	/* steering's state */
		_Atomic uint64_t steered, parked;	/* counters: activations, parkings */
	} srv;

	/* The ring from the servers to the engine side: the servers write head, dropped and
	 * overflow (under lock when there are several), the engine side reads them and
	 * writes tail. */
	struct {
		pthread_spinlock_t lock;	/* when several servers push */
		struct xrec *recs;
		_Atomic uint32_t head;		/* written by the server */
		_Atomic uint32_t tail;		/* written by the engine side */
		_Atomic uint64_t dropped;	/* touches not queued (ring full) */
		_Atomic bool overflow;		/* something was dropped: rescan */
	} ring;

	/* The control thread: seizes and injects.  Under lock: adopts (control and runner
	 * write, the engine side takes), stopping (teardown writes, all read), jobs (the
	 * engine side queues, control takes).  last_attach_ms: control writes, the engine
	 * side reads. */
	struct {
		pthread_mutex_t lock;
		pthread_cond_t cond;
		struct adopt *adopts;
		bool stopping;
		struct jobq jobs;		/* pids to seize and inject (execed, forked) */
		pthread_t thread;
		bool started;
		_Atomic uint64_t last_attach_ms;
	} ctl;

	/* The runner thread (run only): follows CMD; it writes child_status, then child_done,
	 * which teardown reads. */
	struct {
		struct inj *inj;
		pthread_t thread;
		bool started;
		_Atomic bool child_done;
		int child_status;
	} run;

	/* The pump thread: drains the ring buffer between the view's drains (setup writes,
	 * the pump reads). */
	struct {
		pthread_t thread;
		bool started;
		unsigned us;
	} pump;

	/* The engine side: the hooks, in whichever thread holds the engine lock; nothing else
	 * reads or writes these. */
	struct {
		struct xrec *stage;	/* drained from the ring, not applied yet (by read time) */
		size_t nstage, capstage;
		struct xtab fds;	/* struct xfd, by id */
		struct xtab procs;	/* struct xproc, by pid */
		uint64_t bound_ns;	/* records read before this are safe to apply */
		struct {
			uint64_t touches, touches_interval, prereg_pages, prereg_max, stale;
			uint64_t behind; /* new mappings left to pagemap tracking: no time */
			uint64_t fork, remap, remove, unmap, gone;
			uint64_t attaches, attach_failures, attach_ms_max;
			uint64_t hist[EXACT_HIST_BUCKETS];
			uint64_t lat_max_ns;
			uint64_t logged_dropped;
		} st;
		/* This interval's first touches: the first LOG_MAX for JSON, and when recording
		 * (keep_all) every one of them, up to FIRST_TOUCHES_MAX. */
		struct first_touch log[LOG_MAX];
		size_t nlog;
		struct first_touch *all;
		size_t nall, capall;
		uint64_t all_dropped;
		bool keep_all;
		/* The interval that ended at the last tick (publish() in exact_track.c): what
		 * every reader sees until the next tick, however many read it. */
		struct {
			uint64_t touches, unlisted;
			struct first_touch log[LOG_MAX];
			size_t nlog;
			struct first_touch *all;
			size_t nall, capall;
			uint64_t all_dropped;
		} last;
	} eng;
};

/* exact_server.c: the fault servers (exact.c starts them). */
/* Creates the servers (one per CPU in ordered mode on small machines, else one). */
int server_make(struct exact *x);
/* A server thread's body (arg: its struct srv_arg). */
void *server_main(void *arg);
/* Every parked server waits on the userfaultfds again (before stopping them). */
void server_unpark_all(struct exact *x);
/* How many servers wait on the userfaultfds (are not parked). */
int server_waiting(struct exact *x);
/* Hands a fresh userfaultfd of @pid to the servers (a copy each) and to the engine side,
 * which owns @fd from now on, whatever happens.  Call before the process resumes. */
int server_hand_over(struct exact *x, pid_t pid, int fd);

/* exact_track.c: the engine hooks. */
void exact_track_install(struct exact *x);
/* Tears down the engine side (closes our copies); call with the engine stopped. */
void exact_track_free(struct exact *x);

/* exact_mappings.c: which mappings (engine thread, engine lock held). */
struct proc;
/* Every page there is: the end of a lookup over a whole address space. */
#define ALL_PAGES	(UINT64_MAX >> PAGE_SHIFT_4K)
/* Is a private anonymous mapping of this kind one userfaultfd can cover? */
bool mappings_eligible_entry(const char *path, uint32_t perms);
/* xp's /proc/PID/pagemap, opened at the first use; or -errno. */
int mappings_pagemap_fd(struct xproc *xp);
/* Pieces of [start, end) covered by registered mappings (@uffd_only) or by eligible ones not
 * registered yet, adjacent pieces merged, into *out (*nout of them).  Collected first:
 * changing flags splits mappings under an iteration.  0, or -ENOMEM with nothing. */
int mappings_collect(const struct proc *p, uint64_t start, uint64_t end, bool uffd_only,
		     struct span **out, size_t *nout);

/* exact_fast.c: the fast variant's scans, called by exact_track.c's hooks (engine thread,
 * engine lock held). */
/* Scans p's registered mappings; count: what is new counts as first touches (else it only
 * takes the picture). */
void fast_scan(struct exact *x, struct xproc *xp, struct proc *p, bool count);
/* Scans the mappings registered in the last 500 ms (at each drain). */
void fast_scan_young(struct exact *x, struct xproc *xp, struct proc *p);
/* [s, t) (pages) was zapped: its pages present at the next scan are first touches again. */
void fast_add_fresh(struct exact *x, struct xproc *xp, uint64_t s, uint64_t t);
/* [s, t) was registered now: scanned at each drain for a while. */
void fast_add_young(struct exact *x, struct xproc *xp, uint64_t s, uint64_t t);

/* exact_touchlog.c: records one first touch in the interval's log (and, recording, in all). */
void touchlog_add(struct exact *x, pid_t pid, uint32_t tid, uint64_t addr, uint64_t ts,
		  bool write);

#endif
