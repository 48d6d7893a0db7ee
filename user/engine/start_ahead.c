// SPDX-License-Identifier: GPL-2.0
/*
 * The first snapshot's work that needs no process model, done on another CPU while the
 * initial scans read every process's layout (issue 24: the first complete snapshot with
 * 5,000 processes within 0.3 s).  Measured here at 5,084 processes, one after the other:
 * the scans take ~140 ms, then loading the page cache's BPF programs ~40 ms (most of it
 * the verifier) and reading every smaps_rollup for the anonymous memory summary ~70 ms
 * (~14 µs each; the kernel walks the page tables).  Neither needs the scans' results:
 * the BPF programs only need to be attached before the page cache walk (files.c), and
 * a rollup only the pid.  So a thread started as soon as the pids are listed does both,
 * and the first tick takes what it made.
 *
 * The scans were still the longer half (2026-12-04, 5,000 sleepers: ~350 ms against the
 * thread's ~230 ms), and 60% of a scan is reading the layout (open /proc/PID/maps, one
 * PROCMAP_QUERY a mapping) and opening /proc/PID/pagemap, which need no model either.
 * So the thread also reads those for the next few processes the scans will reach (a window
 * of AHEAD_WINDOW, so what waits is a few KiB, not a copy of every layout), and the scans
 * replay what it read (start_ahead_layout(), start_ahead_pages()).  A process is read by
 * one of the two, whichever claims it first (slot states below).  When the window is full
 * the thread reads rollups meanwhile, and after the scans it goes on with them while the
 * main thread makes the page cache's rows (which need only its BPF programs: no join);
 * the rollups it has not read by then the main thread reads from the other end.  A layout read ahead is read after the hooks were
 * attached, as the scan's own read would be: what changes after it is recorded the same way.
 *
 * Before all that, while the main thread loads the main skeleton (~30-60 ms of one CPU in
 * the verifier, and nothing for the other), the thread lists /proc itself and reads rollups
 * (start_ahead_early()): at 5,000 sleepers ~1,000-1,500 of them, which shortened the first
 * snapshot by ~16 ms (0.358 -> 0.342 s, 8 interleaved runs).
 *
 * With the summary's anonymous memory from AnonPages (mem_anon.h: the whole system, by
 * default) there are no rollups: the early thread loads the page cache's skeleton beside
 * the main one instead, and the thread's part of the scans is the layouts alone.
 *
 * Those layouts come from one VMA pass (kernel/vmaiter.h, a skeleton of its own that the
 * thread loads after the page cache's; not with --disable vma_pass): every process's
 * mappings in one read() loop, in pid order, so the scans go up in pid order too (engine.c
 * queues the newest first).  The thread names each process of the pass and hands it over
 * as a layout read ahead, at most PASS_AHEAD ahead of the scans; a process it cannot name
 * is left to the window's reads (next_slot()) or to the scans.  At
 * 5,000 sleepers it names ~4,900 of 5,008 (the scans read the first few themselves while
 * the pass begins), and the start's CPU fell from ~0.47 to ~0.33 s.
 *
 * Only the whole-system start uses it (a few -p processes have nothing to hide), and only
 * once: what the thread read is the first snapshot's, later refreshes read their own.
 * Without a thread (pthread_create failed) everything happens as before, inline.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "engine/engine_int.h"
#include "engine/start_ahead.h"
#include "kernel/fcache_bpf.h"
#include "kernel/kbtf.h"
#include "kernel/pagemap.h"
#include "kernel/procmap.h"
#include "kernel/vmaiter.h"
#include "lib/log.h"

#define AHEAD_WINDOW	16	/* layouts read ahead of the scans, at most */

#define AHEAD_WAIT_NS	200000	/* the scans wait this long for a slot being read (~40 µs) */

/* Layouts the VMA pass names ahead of the scans, at most (~3 ms of scans, ~200 KiB): 128
 * and 512 started as fast at 5,000 sleepers (0.256 against 0.263 s, 6 interleaved runs),
 * with VmHWM 27.0 against 27.7 MiB. */
#define PASS_AHEAD	128
#define PASS_NAP_NS	100000	/* its nap when that far ahead */

/* SLOT_GONE: the scans stopped waiting for the thread's read and read it live; the thread
 * throws its read away. */
enum { SLOT_FREE, SLOT_AHEAD, SLOT_READY, SLOT_MAIN, SLOT_GONE };

struct ahead_rollup {
	pid_t pid;
	int err;
	atomic_bool taken;
	struct rollup r;
};

struct lay_ent {
	struct maps_entry m;
	size_t name;		/* offset in names */
};

/* One process's layout: claimed by the thread (SLOT_AHEAD, then SLOT_READY) or by the
 * scans (SLOT_MAIN: read live, or replayed). */
struct ahead_layout {
	atomic_int state;
	pid_t pid;
	pid_t io;		/* the thread the scans read it through (the pass's io_tid) */
	int err;		/* procmap_read_layout()'s */
	int fd;			/* /proc/IO/pagemap, or -1 */
	struct lay_ent *v;
	size_t n, cap;
	char *names;
	size_t nnames, capnames;
};

struct start_ahead {
	pthread_t th;
	bool joined;
	bool bpf_wanted;
	unsigned int bpf_hooks;		/* fcache_bpf_open's */
	/* Started before the main skeleton's load (start_ahead_early()): the thread lists
	 * /proc itself (v, n: then listed) and reads rollups until begun (under lock), which
	 * start_ahead_begin() sets once the layouts' slots are made, or joined() (aborted: no
	 * begin came). */
	bool early, listed, begun, aborted;
	bool rollups;			/* the summary wants them (not mem_anon_from_meminfo()) */
	/* bpf_wanted and bpf_hooks were handed over before the main skeleton's load
	 * (start_ahead_early(), under lock): the early thread loads the page cache's
	 * skeleton meanwhile (bpf_done: loaded, bpf_ready said; the thread's own), and the
	 * VMA pass's, beside the main one's verification */
	bool bpf_handed, bpf_done;
	/* bpf, bpf_err and bpf_why are written: the page cache walk may start (it need not
	 * wait for the rollups) */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool bpf_ready;
	/* written by the thread, read after the join */
	struct fcbpf *bpf;
	int bpf_err;
	char bpf_why[256];
	struct ahead_rollup *v;		/* sorted by pid (the listing's order) */
	size_t n;
	struct ahead_layout *lay;	/* sorted by io; the scans go up from the bottom */
	size_t nlay;
	size_t *by_pid;			/* lay's indices, sorted by pid (the VMA pass's order) */
	bool vmas_wanted;		/* load the VMA pass (handed over with bpf_wanted) */
	uint32_t anon_off;		/* its vma_anon_name_off */
	struct vmaiter *vmas;		/* the start's VMA pass, or NULL */
	int pass_err;			/* vmaiter_pass()'s */
	size_t passed;			/* layouts the pass handed over */
	atomic_long main_at;		/* the slot the scans are on */
	atomic_bool scans_done;
	atomic_bool begun_flag;		/* begun, for the early rollups' loop to look at */
	size_t replayed;		/* layouts the scans took from the thread */
	size_t early_rollups;		/* rollups read before start_ahead_begin() */
	size_t gave_up;			/* slots the scans stopped waiting for (SLOT_GONE) */
};

static int keep_entry(const struct maps_entry *m, void *arg)
{
	struct ahead_layout *s = arg;
	size_t len = strlen(m->path) + 1;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct lay_ent *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	if (s->nnames + len > s->capnames) {
		size_t cap = s->capnames ? s->capnames * 2 : 1024;
		char *nv;

		while (cap < s->nnames + len)
			cap *= 2;
		nv = realloc(s->names, cap);
		if (!nv)
			return -ENOMEM;
		s->names = nv;
		s->capnames = cap;
	}
	memcpy(s->names + s->nnames, m->path, len);
	s->v[s->n].m = *m;
	s->v[s->n++].name = s->nnames;
	s->nnames += len;
	return 0;
}

static void drop_layout(struct ahead_layout *s)
{
	free(s->v);
	free(s->names);
	s->v = NULL;
	s->names = NULL;
	s->n = s->cap = s->nnames = s->capnames = 0;
}

/* MEVITOP_TEST_AHEAD_STALL_US=N: the thread sleeps N µs before it hands each layout over,
 * as if it had lost its CPU (tests: the scans stop waiting and read it themselves). */
static unsigned int stall_us;
static bool maps_text;		/* the engine's use_maps_text, for the thread */

static bool claim(struct ahead_layout *s)
{
	int free_ = SLOT_FREE;

	return atomic_compare_exchange_strong(&s->state, &free_, SLOT_AHEAD);
}

/* A claimed slot's layout is in (or s->err): its pagemap opened, it goes to the scans;
 * false if the scans stopped waiting for it (SLOT_GONE: they read it themselves). */
static bool hand(struct ahead_layout *s)
{
	int ahead = SLOT_AHEAD, fd;

	if (s->err)
		drop_layout(s);	/* the scan reads it again, and sees the error itself */
	fd = s->err ? -1 : pagemap_open(s->io);
	s->fd = fd >= 0 ? fd : -1;
	if (stall_us)
		usleep(stall_us);
	if (atomic_compare_exchange_strong_explicit(&s->state, &ahead, SLOT_READY,
						    memory_order_release, memory_order_relaxed))
		return true;
	drop_layout(s);		/* SLOT_GONE: the scan read it itself */
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	return false;
}

/* The thread's read of a slot, unless the scans claimed it. */
static void read_ahead(struct ahead_layout *s)
{
	if (!claim(s))
		return;
	s->err = procmap_read_layout(s->io, maps_text, keep_entry, s);
	hand(s);
}

/* The slot of a pid the start listed (by_pid), or NULL. */
static struct ahead_layout *slot_by_pid(struct start_ahead *a, pid_t pid)
{
	size_t lo = 0, hi = a->nlay;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		pid_t p = a->lay[a->by_pid[mid]].pid;

		if (p == pid)
			return &a->lay[a->by_pid[mid]];
		if (p < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * One process of the VMA pass: named and handed over as a layout read ahead, unless the
 * scans are on it or past it (they read it themselves), or a name cannot be had (left
 * free: the window's reads or the scans read it from /proc).  The pass naps when it is
 * PASS_AHEAD slots ahead of the scans, so what waits stays ~200 KiB.
 */
static int pass_proc(void *arg, pid_t tgid, const struct vma_rec *r, size_t n)
{
	struct start_ahead *a = arg;
	struct ahead_layout *s = slot_by_pid(a, tgid);
	long i, m;

	if (atomic_load_explicit(&a->scans_done, memory_order_relaxed))
		return 1;
	if (!s)
		return 0;	/* new since the listing, or ourselves */
	i = s - a->lay;
	while ((m = atomic_load_explicit(&a->main_at, memory_order_acquire)) + PASS_AHEAD < i) {
		struct timespec nap = { .tv_nsec = PASS_NAP_NS };

		if (atomic_load_explicit(&a->scans_done, memory_order_relaxed))
			return 1;
		nanosleep(&nap, NULL);
	}
	if (i <= m || atomic_load_explicit(&s->state, memory_order_relaxed) != SLOT_FREE ||
	    vmaiter_name(a->vmas, r, n) || !claim(s))
		return 0;
	s->err = vmaiter_emit(a->vmas, r, n, keep_entry, s);
	if (hand(s) && !s->err)
		a->passed++;
	return 0;
}

/* The next rollup from the bottom, unless the main thread (from the top) has it. */
static bool rollup_next(struct start_ahead *a, size_t *i)
{
	while (*i < a->n) {
		struct ahead_rollup *x = &a->v[(*i)++];

		if (atomic_exchange(&x->taken, true))
			return false;	/* met the main thread */
		x->err = rollup_read(x->pid, &x->r);
		return true;
	}
	return false;
}

/*
 * The slot to read next: the free one farthest ahead of the scans within the window.  Read
 * next to the scans' slot, the scans (faster with a layout read for them) caught up with
 * the slot being read and waited at each one (~70 ms of sched_yield at 5,000 processes);
 * from the window's far end there are READY slots between the two.  -1: none free now;
 * *over: none is left above the scans either.
 */
static long next_slot(struct start_ahead *a, bool *over)
{
	long m = atomic_load_explicit(&a->main_at, memory_order_acquire);
	long top = (long)a->nlay - 1, i = m + AHEAD_WINDOW < top ? m + AHEAD_WINDOW : top;

	for (; i > m; i--)
		if (atomic_load_explicit(&a->lay[i].state, memory_order_relaxed) == SLOT_FREE)
			return i;
	*over = m + AHEAD_WINDOW >= top;
	return -1;
}

/* The page cache's programs are loaded (or failed to): its walk may start.  Said as soon as
 * they are, before the VMA pass's load (~10 ms), which the walk does not need. */
static void fcache_ready(struct start_ahead *a)
{
	a->bpf_done = true;
	pthread_mutex_lock(&a->lock);
	a->bpf_ready = true;
	pthread_cond_signal(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

/* The VMA pass's skeleton, once; without it the layouts are read from /proc as before. */
static void load_vmas(struct start_ahead *a)
{
	int err;

	if (a->vmas_wanted && !a->vmas && (err = vmaiter_load(a->anon_off, &a->vmas))) {
		log_info("start: no VMA pass (%s): every layout is read from /proc",
			 strerror(-err));
		a->vmas = NULL;
	}
	a->vmas_wanted = false;
}

/* The early part: while the main thread loads the main skeleton (~30-60 ms, one CPU in
 * the verifier) the other CPU has nothing else to do, and a rollup needs only a pid: the
 * pids of /proc, read until start_ahead_begin() (a pid the pass lists and /proc did not is
 * read when asked for: start_ahead_rollup()). */
static void early(struct start_ahead *a, size_t *r)
{
	pid_t *pids = NULL;
	size_t n = 0, i;

	if (a->rollups && !procfs_list_pids(&pids, &n)) {
		a->v = calloc(n ? n : 1, sizeof(*a->v));
		for (i = 0; a->v && i < n; i++)
			if (pids[i] != getpid())	/* not asked for; our own mmap lock */
				a->v[a->n++].pid = pids[i];
		free(pids);
	}
	pthread_mutex_lock(&a->lock);
	a->listed = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	while (!atomic_load_explicit(&a->begun_flag, memory_order_relaxed) && rollup_next(a, r))
		a->early_rollups++;
	pthread_mutex_lock(&a->lock);
	while (!a->begun && !a->bpf_handed)
		pthread_cond_wait(&a->cond, &a->lock);
	if (!a->begun && (a->bpf_wanted || a->vmas_wanted)) {
		/* The main skeleton is loading: load ours now. */
		pthread_mutex_unlock(&a->lock);
		if (a->bpf_wanted) {
			a->bpf_err = fcache_bpf_open(a->bpf_hooks, &a->bpf, a->bpf_why,
						     sizeof(a->bpf_why));
			fcache_ready(a);
		}
		load_vmas(a);
		pthread_mutex_lock(&a->lock);
	}
	while (!a->begun)
		pthread_cond_wait(&a->cond, &a->lock);
	pthread_mutex_unlock(&a->lock);
}

static void *run(void *arg)
{
	struct start_ahead *a = arg;
	bool over;
	size_t r = 0;

	if (a->early)
		early(a, &r);
	over = !a->nlay;
	/* The BPF programs first: the page cache walk waits for them, the rollups only
	 * for the end of the scans' whole.  (bpf_done: loaded early, and said so; main may
	 * have taken them since.) */
	if (!a->bpf_done) {
		if (a->bpf_wanted)
			a->bpf_err = fcache_bpf_open(a->bpf_hooks, &a->bpf, a->bpf_why,
						     sizeof(a->bpf_why));
		fcache_ready(a);
	}
	if (!a->aborted)
		load_vmas(a);
	/* That was the start's last BPF object (the main skeleton loaded before the pids
	 * were listed): the kernel's BTF parse (~5.5 MiB at 6.18) goes now, not after the
	 * scans, whose model would otherwise pile up on top of it (VmHWM). */
	if (!a->aborted)
		kbtf_release();
	if (a->vmas && a->by_pid && !a->aborted)
		a->pass_err = vmaiter_pass(a->vmas, pass_proc, a);
	while (!over && !atomic_load(&a->scans_done)) {
		long c = next_slot(a, &over);

		if (c >= 0)
			read_ahead(&a->lay[c]);
		else if (!over && !rollup_next(a, &r))
			sched_yield();	/* the window is full and no rollup is left */
	}
	while (!a->aborted && rollup_next(a, &r))	/* a failed start wants none */
		;
	return NULL;
}

static int by_pid(const void *x, const void *y)
{
	pid_t a = ((const struct ahead_rollup *)x)->pid, b = ((const struct ahead_rollup *)y)->pid;

	return (a > b) - (a < b);
}

static int by_io(const void *x, const void *y)
{
	pid_t a = ((const struct ahead_layout *)x)->io, b = ((const struct ahead_layout *)y)->io;

	return (a > b) - (a < b);
}

static int by_slot_pid(const void *x, const void *y, void *lay)
{
	const struct ahead_layout *l = lay;
	pid_t a = l[*(const size_t *)x].pid, b = l[*(const size_t *)y].pid;

	return (a > b) - (a < b);
}

/* Layouts are read ahead through PROCMAP_QUERY only, and only for the processes the pass
 * names a thread for (the scans' io: k_live_thread()). */
static void lay_init(struct engine *e, struct start_ahead *a, const pid_t *pids, size_t n)
{
	size_t i;

	atomic_init(&a->main_at, 0);
	if (!e->use_procmap || !e->pass_ok || !n)
		return;
	maps_text = e->use_maps_text;
	if (getenv("MEVITOP_TEST_AHEAD_STALL_US"))
		stall_us = (unsigned int)atoi(getenv("MEVITOP_TEST_AHEAD_STALL_US"));
	a->lay = calloc(n, sizeof(*a->lay));
	if (!a->lay)
		return;
	procmap_prepare();
	for (i = 0; i < n; i++) {
		const struct task_rec *r = pass_find(e, pids[i]);
		struct ahead_layout *s = &a->lay[a->nlay];

		if (!r || !r->io_tid || pids[i] == getpid())
			continue;
		atomic_init(&s->state, SLOT_FREE);
		s->pid = pids[i];
		s->io = (pid_t)r->io_tid;
		s->fd = -1;
		a->nlay++;
	}
	qsort(a->lay, a->nlay, sizeof(*a->lay), by_io);
	atomic_init(&a->main_at, -1L);
	/* The VMA pass goes by pid, the slots by io (the same but where a main thread has
	 * exited): an index to find them by. */
	a->by_pid = calloc(a->nlay ? a->nlay : 1, sizeof(*a->by_pid));
	if (!a->by_pid)
		return;
	for (i = 0; i < a->nlay; i++)
		a->by_pid[i] = i;
	qsort_r(a->by_pid, a->nlay, sizeof(*a->by_pid), by_slot_pid, a->lay);
}

static void lay_free(struct start_ahead *a)
{
	for (size_t i = 0; i < a->nlay; i++) {
		drop_layout(&a->lay[i]);
		if (a->lay[i].fd >= 0)
			close(a->lay[i].fd);
	}
	free(a->lay);
	free(a->by_pid);
	a->lay = NULL;
	a->by_pid = NULL;
	a->nlay = 0;
}

static bool spawn(struct start_ahead *a)
{
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	if (!pthread_create(&a->th, NULL, run, a))
		return true;
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->cond);
	return false;
}

static struct start_ahead *prelaunched;	/* started before the engine was made */

static struct start_ahead *early_new(bool rollups)
{
	struct start_ahead *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->early = true;
	a->rollups = rollups;
	atomic_init(&a->main_at, 0);
	if (!spawn(a)) {
		free(a);
		return NULL;
	}
	return a;
}

void start_ahead_prelaunch(bool rollups)
{
	if (!prelaunched)
		prelaunched = early_new(rollups);
}

/* What the page cache's skeleton needs (the features): known before the main skeleton's
 * load, so an early thread with no rollups to read loads it beside that load (~25 ms of
 * the other CPU, which was idle then, and off the thread's part of the scans). */
static void hand_bpf(struct engine *e, struct start_ahead *a)
{
	a->bpf_wanted = e->files && e->f.fcache_walk && e->f.filemap_tp;
	a->bpf_hooks = fcache_bpf_hooks(&e->f);
	/* Its names come from PROCMAP_QUERY. */
	a->vmas_wanted = e->f.vma_iter && e->use_procmap;
	a->anon_off = e->f.vma_anon_name_off;
}

void start_ahead_early(struct engine *e)
{
	struct start_ahead *a = prelaunched ? prelaunched : early_new(!e->anon_meminfo);

	prelaunched = NULL;
	e->ahead = a;
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	hand_bpf(e, a);
	a->bpf_handed = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

/* The thread started early: the layouts' slots, and the BPF load, are handed to it. */
static void begin_early(struct engine *e, struct start_ahead *a, const pid_t *pids,
			size_t n)
{
	pthread_mutex_lock(&a->lock);
	while (!a->listed)	/* a few ms into the skeleton's load of tens: never waits */
		pthread_cond_wait(&a->cond, &a->lock);
	lay_init(e, a, pids, n);
	a->begun = true;
	atomic_store(&a->begun_flag, true);
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

void start_ahead_begin(struct engine *e, const pid_t *pids, size_t n)
{
	struct start_ahead *a;

	if (e->ahead && e->ahead->early) {
		begin_early(e, e->ahead, pids, n);
		return;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return;
	hand_bpf(e, a);
	a->rollups = !e->anon_meminfo;
	a->n = a->rollups ? n : 0;	/* the pids whose rollups are read */
	a->v = calloc(a->n ? a->n : 1, sizeof(*a->v));
	if (!a->v) {
		free(a);
		return;
	}
	for (size_t i = 0; i < a->n; i++)
		a->v[i].pid = pids[i];
	qsort(a->v, a->n, sizeof(*a->v), by_pid);
	lay_init(e, a, pids, n);
	if (!spawn(a)) {
		lay_free(a);
		free(a->v);
		free(a);
		return;
	}
	e->ahead = a;
}

static struct ahead_layout *slot_of(struct engine *e, pid_t io)
{
	struct start_ahead *a = e->ahead;
	struct ahead_layout key = { .io = io };

	if (!a || a->joined || !a->nlay)
		return NULL;
	return bsearch(&key, a->lay, a->nlay, sizeof(key), by_io);
}

bool start_ahead_layout(struct engine *e, pid_t io, maps_cb cb, void *arg, int *err)
{
	struct ahead_layout *s = slot_of(e, io);
	int st = SLOT_FREE, ret = 0;

	if (!s)
		return false;
	atomic_store_explicit(&e->ahead->main_at, s - e->ahead->lay, memory_order_release);
	if (atomic_compare_exchange_strong(&s->state, &st, SLOT_MAIN))
		return false;	/* the thread has not come to it: read it here */
	/* Being read: a few tens of µs, unless the thread lost its CPU (waits of 6 ms were
	 * seen on a shared box, the main thread yielding all along): past AHEAD_WAIT_NS the
	 * scan reads it itself (a failed exchange means it is READY now). */
	for (uint64_t until = engine_now_ns() + AHEAD_WAIT_NS; st == SLOT_AHEAD;) {
		if (engine_now_ns() > until &&
		    atomic_compare_exchange_strong(&s->state, &st, SLOT_GONE)) {
			e->ahead->gave_up++;
			return false;
		}
		sched_yield();
		st = atomic_load_explicit(&s->state, memory_order_acquire);
	}
	if (st != SLOT_READY)
		return false;	/* taken already: a second read reads live */
	atomic_store(&s->state, SLOT_MAIN);
	if (s->err)
		return false;	/* gone, or refused (the fallback to the text is the caller's) */
	for (size_t i = 0; i < s->n && !ret; i++) {
		struct maps_entry m = s->v[i].m;

		m.path = s->names + s->v[i].name;
		ret = cb(&m, arg);
	}
	drop_layout(s);
	e->ahead->replayed++;
	*err = ret;
	return true;
}

int start_ahead_pages(struct engine *e, pid_t io)
{
	struct ahead_layout *s = slot_of(e, io);
	int fd;

	/* Only once the scans took its layout: then the thread is done with the slot. */
	if (!s || atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_MAIN)
		return -1;
	fd = s->fd;
	s->fd = -1;
	return fd;
}

void start_ahead_scans_done(struct engine *e)
{
	struct start_ahead *a = e->ahead;

	if (!a || a->joined)
		return;
	atomic_store(&a->scans_done, true);
}

/* Waits for the thread (once), having read the rollups it has not come to, from the top
 * down (it reads them from the bottom up); NULL when there is none. */
static struct start_ahead *joined(struct engine *e)
{
	struct start_ahead *a = e->ahead;

	if (a && !a->joined) {
		if (a->early) {
			pthread_mutex_lock(&a->lock);
			while (!a->listed)
				pthread_cond_wait(&a->cond, &a->lock);
			if (!a->begun) {	/* the start failed before the listing */
				a->begun = a->aborted = true;
				atomic_store(&a->begun_flag, true);
				pthread_cond_broadcast(&a->cond);
			}
			pthread_mutex_unlock(&a->lock);
		}
		for (size_t i = a->n; i-- > 0 && !engine_quitting() && !a->aborted;) {
			struct ahead_rollup *x = &a->v[i];

			if (atomic_exchange(&x->taken, true))
				break;
			x->err = rollup_read(x->pid, &x->r);
		}
		pthread_join(a->th, NULL);	/* from here on the fields are this thread's */
		a->joined = true;
	}
	return a;
}

/* The page cache's BPF programs, without waiting for the thread's rollups: the page cache
 * rows are made while it reads them. */
int start_ahead_fcache(struct engine *e, struct fcbpf **bpf, char *why, size_t whylen)
{
	struct start_ahead *a = e->ahead;

	if (!a || !a->bpf_wanted)
		return fcache_bpf_open(fcache_bpf_hooks(&e->f), bpf, why, whylen);
	pthread_mutex_lock(&a->lock);
	while (!a->joined && !a->bpf_ready)
		pthread_cond_wait(&a->cond, &a->lock);
	pthread_mutex_unlock(&a->lock);
	*bpf = a->bpf;
	a->bpf = NULL;
	a->bpf_wanted = false;	/* taken */
	if (a->bpf_err)
		snprintf(why, whylen, "%s", a->bpf_why);
	return a->bpf_err;
}

int start_ahead_rollup(struct engine *e, pid_t pid, struct rollup *r, bool *ahead)
{
	struct start_ahead *a = joined(e);
	struct ahead_rollup key = { .pid = pid }, *x;

	*ahead = false;
	if (!a)
		return rollup_read(pid, r);
	x = bsearch(&key, a->v, a->n, sizeof(*a->v), by_pid);
	if (!x)
		return rollup_read(pid, r);
	*r = x->r;
	*ahead = true;
	return x->err;
}

void start_ahead_end(struct engine *e)
{
	struct start_ahead *a = joined(e);

	if (!a)
		return;
	if (a->bpf)
		fcache_bpf_close(a->bpf);
	if (a->nlay)
		log_info("start: %zu of %zu layouts were read ahead of the scans (%zu not waited "
			 "for)", a->replayed, a->nlay, a->gave_up);
	if (a->vmas) {
		struct vmaiter_stats st;

		vmaiter_stats(a->vmas, &st);
		log_info("start: the VMA pass named %zu layouts (%zu names, %zu left to /proc)%s%s",
			 a->passed, st.keys, st.refused, a->pass_err < 0 ? ": " : "",
			 a->pass_err < 0 ? strerror(-a->pass_err) : "");
		vmaiter_close(a->vmas);
	}
	if (a->early && !a->aborted && a->rollups)	/* a failed start says only why */
		log_info("start: %zu of %zu rollups were read before the listing",
			 a->early_rollups, a->n);
	lay_free(a);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->cond);
	free(a->v);
	free(a);
	e->ahead = NULL;
}
