// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include "array.h"
#include "engine.h"
#include "log.h"
#include "pagemap.h"
#include "procfs.h"
#include "procmap.h"
#include "stacks/stacks.h"
#include "syscalls.h"
#include "tracer.h"

/* Kernel ABI values the engine decodes (x86_64 uapi; stable). */
#define K_MAP_SHARED		0x01
#define K_MAP_SHARED_VALIDATE	0x03
#define K_MAP_FIXED		0x10
#define K_MAP_ANONYMOUS		0x20
#define K_MAP_GROWSDOWN		0x0100
#define K_MAP_LOCKED		0x2000
#define K_MAP_POPULATE		0x8000
#define K_MAP_HUGETLB		0x40000
#define K_PROT_READ		0x1
#define K_PROT_WRITE		0x2
#define K_PROT_EXEC		0x4
#define K_MREMAP_MAYMOVE	1
#define K_MREMAP_FIXED		2
#define K_MREMAP_DONTUNMAP	4
#define K_MCL_CURRENT		1
#define K_MCL_FUTURE		2

#define K_MADV_NORMAL		0
#define K_MADV_RANDOM		1
#define K_MADV_SEQUENTIAL	2
#define K_MADV_WILLNEED		3
#define K_MADV_DONTNEED		4
#define K_MADV_FREE		8
#define K_MADV_REMOVE		9
#define K_MADV_DONTFORK		10
#define K_MADV_DOFORK		11
#define K_MADV_MERGEABLE	12
#define K_MADV_UNMERGEABLE	13
#define K_MADV_HUGEPAGE		14
#define K_MADV_NOHUGEPAGE	15
#define K_MADV_DONTDUMP		16
#define K_MADV_DODUMP		17
#define K_MADV_WIPEONFORK	18
#define K_MADV_KEEPONFORK	19
#define K_MADV_COLD		20
#define K_MADV_PAGEOUT		21
#define K_MADV_POPULATE_READ	22
#define K_MADV_POPULATE_WRITE	23
#define K_MADV_DONTNEED_LOCKED	24
#define K_MADV_COLLAPSE		25
#define K_MADV_GUARD_INSTALL	102
#define K_MADV_GUARD_REMOVE	103

#define PMD_PAGES	512ULL		/* 2 MiB of 4 KiB pages */
#define SCAN_CHUNK	16384ULL	/* pages per pagemap pass: at most 8192 runs buffered */
#define PREAD_MAX_PAGES	(16ULL << 20)	/* 64 GiB: the largest mapping read entry by entry */
#define MAX_ERRNO	4095

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

struct pstate {
	int pagemap_fd;
	struct range *scan;
	size_t nscan, capscan;
	struct fault_check *checks;
	size_t nchecks, capchecks;
	uint64_t events_tick;		/* events applied since the last tick */
	uint64_t rss_updates;		/* trace: rss_stat hits at the last tick */
	struct proc_counters c;		/* /proc/PID/stat counters at the last tick or full scan */
	bool counters_seen;
	int64_t rss_gap;		/* model's resident pages - kernel rss, at the last full
					 * scan (rss_gap_check) */
	bool rss_gap_seen;
	bool rss_gap_dirty;		/* events or an rss change since the last check */
	uint64_t born;			/* start time (/proc/PID/stat), to tell a reused pid */
	pid_t io_pid;			/* whose /proc entries to read: the pid, or a live thread
					 * once the main thread has exited (procfs_live_thread) */
	uint64_t last_full_ns;		/* last full scan */
	bool target;			/* named with -p */
	int load_err;			/* why the last reload failed (-errno), 0 if it did not */
	bool locked_future;		/* mlockall(MCL_FUTURE) */
	bool scan_failed;		/* a scan failed (not for a vanished process): rescan
					 * it whole at the next tick */
};

struct alias {
	pid_t child, parent;		/* a vfork/CLONE_VM child sharing the parent's mm */
};

#define NBUCKETS 4096
#define GHOST_TICKS 5	/* ticks to look for processes after exit records were lost */
#define VERIFY_MIN_NS 5000000000ULL	/* rss gap undecided: rescan at most this often */
#define RETRY_MAX 256

struct engine {
	struct engine_opts o;
	struct features f;
	struct tracer *tracer;
	pthread_mutex_t lock;
	/* Held by whichever thread steps or ticks the engine (exact mode has two: the view's
	 * and the pump), for the whole step: yield_lock() lets readers in mid-step, never
	 * another writer, which would change the model under the step's iterators. */
	pthread_mutex_t step_lock;
	struct proc *buckets[NBUCKETS];
	size_t nprocs;
	struct proc **sorted;
	size_t nsorted, capsorted;
	bool sorted_dirty;
	struct proc *pending;		/* batch-end work list */
	struct alias *aliases;
	size_t naliases, capaliases;
	struct engine_stats st;
	uint64_t last_tick_ns, events_at_tick, maps_reads_at_tick;
	uint64_t now_ns;		/* of the batch being applied */
	bool use_scan;			/* PAGEMAP_SCAN, else pread */
	bool use_procmap;		/* PROCMAP_QUERY, else the text of /proc/PID/maps */
	bool smaps;			/* read VmFlags where THP eligibility matters */
	size_t reconcile_cursor;
	struct scan_run *runs;
	size_t nruns, capruns;
	bool runs_lost;			/* the run buffer could not grow: this pass is unusable */
	int test_fail_runs;		/* MEVITOP_TEST_FAIL_ALLOC=scan-runs: growths to fail */
	struct proc *retry[RETRY_MAX];	/* processes with faults still in flight */
	size_t nretry;
	struct engine_hooks hooks;
	atomic_int waiting;		/* readers blocked in engine_lock() */
	bool heat_scan;			/* scans record newly resident pages as heat */
	uint64_t locked_at;		/* when the engine thread took the lock */
	uint64_t drain_from;		/* when this drain of the ring buffer began */
	uint64_t drained;		/* records applied in it */
	bool drain_paused;		/* it ran out of budget: the next step must not wait */
	uint64_t cpu_at_tick;		/* process CPU time at the last tick */
	uint32_t scale;			/* --max-cpu interval multiplier */
	struct proc **exits;		/* exited since engine_take_exits */
	uint64_t lost_exits;		/* lost exit records at the last tick */
	uint32_t ghost_ticks;		/* ticks left to look for processes those were about */
	size_t nexits, capexits;
	struct stacks *stacks;		/* --stacks, or NULL */
};

#define HOOK(e, name, ...) do {						\
	if ((e)->hooks.name)							\
		(e)->hooks.name((e)->hooks.ctx, ##__VA_ARGS__);			\
} while (0)

struct stacks *engine_stacks(struct engine *e)
{
	return e->stacks;
}

uint64_t engine_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

const char *engine_mode_name(enum engine_mode m)
{
	switch (m) {
	case MODE_TRACE: return "trace";
	case MODE_SAMPLE: return "sample";
	case MODE_CHUNK: return "chunk";
	case MODE_EXACT: return "exact";
	}
	return "?";
}

/* The engine thread's own lock/unlock: records when it took the lock, so long batch ends
 * can hand it to a waiting reader (the UI) between processes and between scan chunks. */
static void elock(struct engine *e)
{
	pthread_mutex_lock(&e->step_lock);
	pthread_mutex_lock(&e->lock);
	e->locked_at = engine_now_ns();
}

static void eunlock(struct engine *e)
{
	pthread_mutex_unlock(&e->lock);
	pthread_mutex_unlock(&e->step_lock);
}

#define YIELD_AFTER_NS 2000000ULL	/* 2 ms */

/* Called at points where the model is consistent: if a reader waits and the lock has been
 * held long, let it in.  The reader sees each process either before or after its work. */
static void yield_lock(struct engine *e)
{
	int i;

	if (!atomic_load(&e->waiting) || engine_now_ns() - e->locked_at < YIELD_AFTER_NS)
		return;
	pthread_mutex_unlock(&e->lock);
	/* A waiter decrements `waiting` once it holds the lock: wait for that (bounded). */
	for (i = 0; i < 1000 && atomic_load(&e->waiting); i++)
		sched_yield();
	pthread_mutex_lock(&e->lock);	/* step_lock stays ours */
	e->locked_at = engine_now_ns();
}

static struct pstate *ps(const struct proc *p)
{
	return p->engine;
}

/* --- process table --- */

static pid_t io(const struct proc *p)
{
	return ps(p)->io_pid ? ps(p)->io_pid : p->pid;
}

/* Picks the thread to read p through (procfs_live_thread); a new one needs a new pagemap
 * fd, since the old one may be the exited main thread's. */
static int choose_io_pid(struct proc *p)
{
	struct pstate *s = ps(p);
	pid_t tid;
	int err = procfs_live_thread(p->pid, &tid);

	if (err)
		return err;
	if (tid != io(p) && s->pagemap_fd >= 0) {
		close(s->pagemap_fd);
		s->pagemap_fd = -1;
	}
	s->io_pid = tid;
	return 0;
}

static struct proc **bucket(struct engine *e, pid_t pid)
{
	return &e->buckets[(uint32_t)pid % NBUCKETS];
}

struct proc *engine_find(struct engine *e, pid_t pid)
{
	struct proc *p;

	for (p = *bucket(e, pid); p; p = p->hnext)
		if (p->pid == pid)
			return p;
	return NULL;
}

static struct proc *attach_pstate(struct proc *p)
{
	struct pstate *s = calloc(1, sizeof(*s));

	if (!s) {
		proc_free(p);
		return NULL;
	}
	s->pagemap_fd = -1;
	p->engine = s;
	return p;
}

static void table_add(struct engine *e, struct proc *p)
{
	struct proc **b = bucket(e, p->pid);

	p->hnext = *b;
	*b = p;
	e->nprocs++;
	e->sorted_dirty = true;
}

static void pstate_free(struct pstate *s)
{
	if (!s)
		return;
	if (s->pagemap_fd >= 0)
		close(s->pagemap_fd);
	free(s->scan);
	free(s->checks);
	free(s);
}

static void pending_remove(struct engine *e, struct proc *p)
{
	struct proc **pp;

	if (!p->pending)
		return;
	for (pp = &e->pending; *pp; pp = &(*pp)->pending_next) {
		if (*pp == p) {
			*pp = p->pending_next;
			break;
		}
	}
	p->pending = 0;
	p->pending_next = NULL;
}

static void table_del(struct engine *e, struct proc *p)
{
	struct proc **pp;
	size_t i;

	for (pp = bucket(e, p->pid); *pp; pp = &(*pp)->hnext) {
		if (*pp == p) {
			*pp = p->hnext;
			break;
		}
	}
	pending_remove(e, p);
	for (i = 0; i < e->nexits; i++)
		if (e->exits[i] == p)
			e->exits[i] = e->exits[--e->nexits];
	e->nprocs--;
	e->sorted_dirty = true;
	stacks_forget(e->stacks, p->pid);
	pstate_free(ps(p));
	proc_free(p);
}

static void mark(struct engine *e, struct proc *p, uint32_t what)
{
	if (!p->pending) {
		p->pending_next = e->pending;
		e->pending = p;
	}
	p->pending |= what;
}

static void queue_scan(struct engine *e, struct proc *p, uint64_t start, uint64_t end)
{
	struct pstate *s = ps(p);

	if (start >= end)
		return;
	if (s->nscan && s->scan[s->nscan - 1].end == start) {
		s->scan[s->nscan - 1].end = end;	/* the common sequential case */
	} else if (s->nscan && s->scan[s->nscan - 1].start <= start &&
		   s->scan[s->nscan - 1].end >= end) {
		/* already queued */
	} else {
		if (array_reserve(s->scan, s->nscan, s->capscan, 16)) {
			mark(e, p, PEND_RECONCILE);
			return;
		}
		s->scan[s->nscan++] = (struct range){ start, end };
	}
	mark(e, p, PEND_SCAN);
}

static struct proc *new_proc(struct engine *e, pid_t pid, bool target)
{
	struct proc *p = proc_new(pid);

	if (!p || !attach_pstate(p))
		return NULL;
	ps(p)->target = target;
	table_add(e, p);
	mark(e, p, PEND_RELOAD);
	return p;
}

static pid_t alias_parent(struct engine *e, pid_t tgid)
{
	size_t i;

	for (i = 0; i < e->naliases; i++)
		if (e->aliases[i].child == tgid)
			return e->aliases[i].parent;
	return 0;
}

static void alias_del(struct engine *e, pid_t child)
{
	size_t i;

	for (i = 0; i < e->naliases; i++)
		if (e->aliases[i].child == child)
			e->aliases[i] = e->aliases[--e->naliases];
}

static void alias_add(struct engine *e, pid_t child, pid_t parent)
{
	if (array_reserve(e->aliases, e->naliases, e->capaliases, 8))
		return;
	e->aliases[e->naliases++] = (struct alias){ child, parent };
}

/* The process whose model an event of `tgid` changes, creating it in whole-system mode. */
/* Only some processes are watched: -p, or a filter. */
static bool filtered(const struct engine *e)
{
	return e->o.npids || filter_active(e->o.filter);
}

static struct proc *proc_for(struct engine *e, pid_t tgid)
{
	struct proc *p = engine_find(e, tgid);
	pid_t parent;

	if (p && !p->exited)
		return p;
	if (p) {
		/* Records of a process come before its exit record: this is a new process that
		 * reused the pid while the old one was still shown as exited. */
		table_del(e, p);
	}
	parent = e->naliases ? alias_parent(e, tgid) : 0;
	if (parent)
		return engine_find(e, parent);
	/* A process we have not seen (started before the hooks, or its fork record was lost):
	 * model it from /proc at the end of the batch, if it is one we watch. */
	if (!filtered(e) || tracer_is_target(e->tracer, tgid))
		return new_proc(e, tgid, false);
	return NULL;
}

/* Starts watching a process that passed the filter. */
static struct proc *watch_new(struct engine *e, pid_t tgid, const char *comm)
{
	struct proc *p;

	if (tracer_add_target(e->tracer, tgid))
		return NULL;
	p = new_proc(e, tgid, false);
	if (p && comm)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
	return p;
}

/* Stops watching a process that no longer passes the filter (exec, left the cgroup). */
static void unwatch(struct engine *e, struct proc *p)
{
	tracer_del_target(e->tracer, p->pid);
	table_del(e, p);
}

/* --- THP, fault-around: how many pages one fault may map --- */

static bool thp_possible(const struct engine *e, const struct mapping *m)
{
	if (m->perms & MP_SHARED)
		return false;
	if (m->kind != MK_ANON && m->kind != MK_HEAP && m->kind != MK_STACK)
		return false;
	if (m->flags & MF_NOHUGEPAGE)
		return false;
	/* f.thp is the strongest setting over every THP size, multi-size THP included. */
	if (e->f.thp == THP_ALWAYS)
		return true;
	return e->f.thp == THP_MADVISE && (m->flags & MF_HUGEPAGE);
}

static void add_check(struct proc *p, uint64_t page, uint64_t ws, uint64_t we)
{
	struct pstate *s = ps(p);

	if (s->nchecks && s->checks[s->nchecks - 1].window.start == ws &&
	    s->checks[s->nchecks - 1].window.end == we) {
		s->checks[s->nchecks - 1].page = page;	/* the latest fault of the window */
		return;
	}
	if (array_reserve(s->checks, s->nchecks, s->capchecks, 8))
		return;
	s->checks[s->nchecks++] = (struct fault_check){ page, { ws, we }, 0 };
}

static void queue_window(struct engine *e, struct proc *p, const struct mapping *m,
			 uint64_t page, uint64_t window_pages)
{
	uint64_t pmd_s = page & ~(PMD_PAGES - 1), pmd_e = pmd_s + PMD_PAGES;
	uint64_t ws = page & ~(window_pages - 1), we;

	/* As do_fault_around() computes it: the aligned window's start, moved up to the
	 * mapping's start if it begins later (the window then extends past the aligned end),
	 * never across the PMD nor the mapping. */
	if (ws < mapping_start(m))
		ws = mapping_start(m);
	if (ws < pmd_s)
		ws = pmd_s;
	we = ws + window_pages;
	if (we > pmd_e)
		we = pmd_e;
	if (we > mapping_end(m))
		we = mapping_end(m);
	queue_scan(e, p, ws, we);
	add_check(p, page, ws, we);
}

/* A range the kernel populates page by page (MADV_POPULATE_*, WILLNEED, mlock, mprotect
 * of a locked range, COLLAPSE): each page is populated as a fault would be, so a large
 * folio (THP, multi-size THP, a large page-cache folio) maps past the range's ends, though
 * never past the PMDs it touches.  Scanned up to those bounds (clipped to the mappings). */
static void queue_scan_populated(struct engine *e, struct proc *p, uint64_t start, uint64_t end)
{
	queue_scan(e, p, start & ~(PMD_PAGES - 1), (end + PMD_PAGES - 1) & ~(PMD_PAGES - 1));
}

/* --- applying events --- */

static void apply_fault(struct engine *e, const struct ev_fault *ev)
{
	struct proc *p = proc_for(e, ev->tgid);
	uint64_t page = ev->addr >> PAGE_SHIFT_4K;
	struct mapping *m;

	if (!p)
		return;
	p->faults++;
	ps(p)->events_tick++;
	heat_add(&p->heat, page, 1.0f, e->now_ns);
	if (p->pending & PEND_RELOAD)
		return;		/* the reload reads the truth after this fault */
	m = model_find(p, page);
	if (!m) {
		struct mapping *above = model_find_ge(p, page);

		if (above && (above->flags & MF_GROWSDOWN) && !(ev->flags & EVF_KERNEL)) {
			/* The stack grows down to the faulting page (expand_stack). */
			model_grow_down(p, above, page);
			m = above;
		} else {
			/* An address our layout does not know: re-read it, then look. */
			mark(e, p, PEND_MAPS);
			queue_scan(e, p, page, page + 1);
			return;
		}
	}
	if (m->flags & MF_PFNMAP)
		return;		/* raw PFNs ([vvar]): the page walk skips them, so does pagemap */
	if (ev->flags & EVF_PRESENT) {
		/* A protection fault (COW, write to a read-only PTE): the page was present. */
		model_set_page(p, page, PS_RESIDENT);
		return;
	}
	if (!(m->perms & (MP_READ | MP_WRITE | MP_EXEC)))
		return;		/* PROT_NONE: SIGSEGV, nothing mapped */

	if ((ev->flags & EVF_WRITE) && !(m->perms & MP_WRITE))
		return;		/* write to a read-only mapping: SIGSEGV or EFAULT */
	model_set_page(p, page, PS_RESIDENT);

	if (m->flags & MF_HUGETLB) {
		queue_window(e, p, m, page, PMD_PAGES);
	} else if (m->kind == MK_FILE || m->kind == MK_SHMEM || m->kind == MK_VDSO ||
		   m->kind == MK_OTHER) {
		/* Read faults map the cached neighbours too (do_fault_around).  And where the
		 * page cache holds large folios (shmem; ext4/xfs/btrfs files written with large
		 * writes), 6.18's read and shared-write faults map the whole folio, as far as
		 * it lies in the VMA and in the faulting page's PMD: beyond the fault-around
		 * window, possibly the whole 2 MiB.  So the window scanned is that PMD (a few
		 * microseconds with PAGEMAP_SCAN).  A private write fault copies one page. */
		if (!(ev->flags & EVF_WRITE) || (m->perms & MP_SHARED))
			queue_window(e, p, m, page, PMD_PAGES);
	} else if (thp_possible(e, m)) {
		queue_window(e, p, m, page, PMD_PAGES);
	}
}

static uint64_t pages_up(uint64_t bytes)
{
	return (bytes + PAGE_SIZE_4K - 1) >> PAGE_SHIFT_4K;
}

static uint32_t prot_perms(uint64_t prot, uint64_t flags)
{
	uint32_t perms = 0;

	if (prot & K_PROT_READ)
		perms |= MP_READ;
	if (prot & K_PROT_WRITE)
		perms |= MP_WRITE;
	if (prot & K_PROT_EXEC)
		perms |= MP_EXEC;
	if ((flags & K_MAP_SHARED_VALIDATE) == K_MAP_SHARED ||
	    (flags & K_MAP_SHARED_VALIDATE) == K_MAP_SHARED_VALIDATE)
		perms |= MP_SHARED;
	return perms;
}

static bool is_err(int64_t ret)
{
	return ret < 0 && ret >= -MAX_ERRNO;
}

static void apply_mmap(struct engine *e, struct proc *p, const struct ev_syscall *ev)
{
	uint64_t addr = ev->ret, len = ev->args[1], prot = ev->args[2], flags = ev->args[3];
	uint64_t start = addr >> PAGE_SHIFT_4K, end = start + pages_up(len);
	struct mapping_attrs a = { .perms = prot_perms(prot, flags) };
	bool anon = flags & K_MAP_ANONYMOUS;

	if (is_err(ev->ret) || !len)
		return;
	a.kind = anon ? ((a.perms & MP_SHARED) ? MK_SHMEM : MK_ANON) : MK_FILE;
	if (!anon) {
		a.offset = ev->args[5];
		a.flags |= MF_NEEDS_NAME;	/* the path comes from /proc/PID/maps */
	}
	if (flags & K_MAP_GROWSDOWN)
		a.flags |= MF_GROWSDOWN;
	if (flags & K_MAP_HUGETLB)
		a.flags |= MF_HUGETLB;
	if ((flags & K_MAP_LOCKED) || ps(p)->locked_future)
		a.flags |= MF_LOCKED;
	if (model_map(p, start, end, &a)) {
		mark(e, p, PEND_MAPS);
		return;
	}
	HOOK(e, mapped, p, start, end);
	if (!anon || (flags & K_MAP_HUGETLB))
		mark(e, p, PEND_MAPS);		/* names, shmem vs file, hugetlb details */
	if (flags & (K_MAP_POPULATE | K_MAP_LOCKED) || ps(p)->locked_future)
		queue_scan_populated(e, p, start, end);	/* populated without faults */
}

static void apply_munmap(struct engine *e, struct proc *p, const struct ev_syscall *ev)
{
	uint64_t start = ev->args[0] >> PAGE_SHIFT_4K;

	if (ev->ret != 0)
		return;
	model_unmap(p, start, start + pages_up(ev->args[1]));
	HOOK(e, zapped, p, start, start + pages_up(ev->args[1]), true);
}

static void apply_mremap(struct engine *e, struct proc *p, const struct ev_syscall *ev)
{
	uint64_t old = ev->args[0] >> PAGE_SHIFT_4K, old_len = pages_up(ev->args[1]);
	uint64_t new_len = pages_up(ev->args[2]), flags = ev->args[3];
	uint64_t new = (uint64_t)ev->ret >> PAGE_SHIFT_4K;

	if (is_err(ev->ret))
		return;
	if (old_len == 0) {
		/* Duplicating a shared mapping: attributes from /proc, pages from a scan. */
		mark(e, p, PEND_MAPS);
		queue_scan(e, p, new, new + new_len);
		return;
	}
	if (model_remap(p, old, old_len, new, new_len, flags & K_MREMAP_DONTUNMAP))
		mark(e, p, PEND_MAPS);
	if (new != old)
		HOOK(e, moved, p, old, new, old_len < new_len ? old_len : new_len);
	else if (new_len < old_len)
		HOOK(e, zapped, p, old + new_len, old + old_len, true);
	HOOK(e, mapped, p, new, new + new_len);
	/* The moved pages are exact; a scan of the result costs little and absorbs any
	 * race with a fault that was still in flight when the mapping moved. */
	queue_scan(e, p, new, new + new_len);
	if (flags & K_MREMAP_DONTUNMAP)
		queue_scan(e, p, old, old + old_len);
}

static void apply_brk(struct engine *e, struct proc *p, const struct ev_syscall *ev)
{
	uint64_t end = pages_up(ev->ret), start;
	struct mapping *heap = model_heap(p);

	if (heap) {
		uint64_t hs = mapping_start(heap), he = mapping_end(heap);

		if (end == he)
			return;
		start = he;
		if (end <= hs)
			model_unmap(p, hs, he);	/* shrunk to nothing: the heap is gone */
		else
			model_set_end(p, heap, end);
		if (end < he)
			HOOK(e, zapped, p, end > hs ? end : hs, he, true);
	} else {
		struct mapping_attrs a = { .perms = MP_READ | MP_WRITE, .kind = MK_HEAP };

		if (!p->brk_start)
			return;		/* learnt at the next maps read */
		start = pages_up(p->brk_start);
		if (end <= start)
			return;
		model_map(p, start, end, &a);
	}
	if (end > start)
		HOOK(e, mapped, p, start, end);
	if (ps(p)->locked_future && end > start)
		queue_scan_populated(e, p, start, end);
}

static void apply_madvise(struct engine *e, struct proc *p, uint64_t addr, uint64_t len,
			  int advice, int64_t ret)
{
	uint64_t start = addr >> PAGE_SHIFT_4K, end = start + pages_up(len);

	/* -ENOMEM means part of the range was unmapped: the advice applied to the rest. */
	if (ret != 0 && ret != -ENOMEM)
		return;
	switch (advice) {
	case K_MADV_NORMAL:
	case K_MADV_RANDOM:
	case K_MADV_SEQUENTIAL:
	case K_MADV_DONTFORK:
	case K_MADV_DOFORK:
	case K_MADV_DONTDUMP:
	case K_MADV_DODUMP:
	case K_MADV_WIPEONFORK:
	case K_MADV_KEEPONFORK:
	case K_MADV_COLD:
	case K_MADV_MERGEABLE:		/* KSM merges later, unseen: rss reconciliation */
	case K_MADV_UNMERGEABLE:
		return;
	case K_MADV_HUGEPAGE:
		model_set_flags(p, start, end, MF_HUGEPAGE, MF_NOHUGEPAGE);
		return;
	case K_MADV_NOHUGEPAGE:
		model_set_flags(p, start, end, MF_NOHUGEPAGE, MF_HUGEPAGE);
		return;
	case K_MADV_DONTNEED:
	case K_MADV_DONTNEED_LOCKED:
	case K_MADV_REMOVE:
		if (ret == 0) {
			/* zap_page_range: every PTE of the range is gone, whatever backed it. */
			model_set_state(p, start, end, PS_NOT_RESIDENT);
			HOOK(e, zapped, p, start, end, false);
			return;
		}
		break;
	default:
		/* FREE (pages stay until reclaim), PAGEOUT (only what could be reclaimed),
		 * POPULATE_*, WILLNEED, COLLAPSE, GUARD_*: the kernel decides page by page. */
		break;
	}
	queue_scan_populated(e, p, start, end);
}

static void apply_process_madvise(struct engine *e, struct proc *caller,
				  const struct ev_syscall *ev)
{
	pid_t target;
	struct proc *t;

	if (is_err(ev->ret) && ev->ret != -ENOMEM)
		return;
	/* The pidfd may already be closed; then the target's rss counters tell instead. */
	if (procfs_pidfd_target(ev->tgid, ev->args[0], &target))
		return;
	t = engine_find(e, target);
	if (t && !t->exited)
		mark(e, t, PEND_RECONCILE);
}

static void apply_syscall(struct engine *e, const struct ev_syscall *ev)
{
	struct proc *p = proc_for(e, ev->tgid);
	uint64_t start, len;

	if (!p)
		return;
	ps(p)->events_tick++;
	if (p->pending & PEND_RELOAD)
		return;
	switch (ev->nr) {
	case SYS_MMAP:
		apply_mmap(e, p, ev);
		break;
	case SYS_MUNMAP:
		apply_munmap(e, p, ev);
		break;
	case SYS_MREMAP:
		apply_mremap(e, p, ev);
		break;
	case SYS_BRK:
		apply_brk(e, p, ev);
		break;
	case SYS_MADVISE:
		apply_madvise(e, p, ev->args[0], ev->args[1], ev->args[2], ev->ret);
		break;
	case SYS_PROCESS_MADVISE:
		apply_process_madvise(e, p, ev);
		break;
	case SYS_MPROTECT:
	case SYS_PKEY_MPROTECT:
		if (ev->ret != 0)
			break;
		start = ev->args[0] >> PAGE_SHIFT_4K;
		len = pages_up(ev->args[1]);
		model_protect(p, start, start + len, prot_perms(ev->args[2], 0));
		/* Making an mlock'ed range writable populates it. */
		queue_scan_populated(e, p, start, start + len);
		break;
	case SYS_MLOCK:
	case SYS_MLOCK2:
		if (ev->ret != 0)
			break;
		start = ev->args[0] >> PAGE_SHIFT_4K;
		queue_scan_populated(e, p, start,
				     start + pages_up(ev->args[1] + (ev->args[0] & 4095)));
		break;
	case SYS_MLOCKALL:
		if (ev->ret != 0)
			break;
		if (ev->args[0] & K_MCL_FUTURE)
			ps(p)->locked_future = true;
		if (ev->args[0] & K_MCL_CURRENT)
			mark(e, p, PEND_RECONCILE);
		break;
	case SYS_SHMAT:
	case SYS_SHMDT:
	case SYS_REMAP_FILE_PAGES:
		if (is_err(ev->ret))
			break;
		/* Sizes live in the kernel's shm segment: read the layout, scan what changed. */
		mark(e, p, PEND_MAPS);
		break;
	}
}

static void apply_fork(struct engine *e, const struct ev_proc *ev)
{
	struct proc *parent = engine_find(e, ev->ptgid), *c;
	pid_t tgid;

	c = engine_find(e, ev->tgid);
	if (c && !c->exited)
		return;
	if (c)
		table_del(e, c);	/* the pid was reused while its old owner was a tombstone */
	if (ev->flags & EVP_MAYBE_THREAD) {
		/* The classic fork event does not say thread or process. */
		if (procfs_read_tgid(ev->tgid, &tgid) == 0 && tgid != (pid_t)ev->tgid)
			return;
	}
	if (parent && parent->exited)
		parent = NULL;
	if (!parent && !filtered(e))
		parent = proc_for(e, ev->ptgid);	/* whole system: model the parent too */
	if (ev->flags & EVP_SHARED_MM) {
		/* vfork/CLONE_VM: the child's faults change the parent's memory until it execs. */
		if (parent)
			alias_add(e, ev->tgid, parent->pid);
		return;
	}
	if (!parent) {
		/* With a filter every fork is reported: a new process may pass it. */
		if (filter_active(e->o.filter) && filter_match(e->o.filter, ev->tgid, ev->comm))
			watch_new(e, ev->tgid, ev->comm);
		return;
	}
	if (e->o.npids && !e->o.follow_children)
		return;
	/* The child starts with the parent's picture (anonymous pages are shared copy-on-write)
	 * and is rescanned at the end of the batch: file mappings' PTEs are not copied at
	 * fork, and MADV_DONTFORK/WIPEONFORK ranges differ. */
	c = !(parent->pending & PEND_RELOAD) ? proc_clone(parent, ev->tgid) : proc_new(ev->tgid);
	if (!c || !attach_pstate(c))
		return;
	memcpy(c->comm, ev->comm, sizeof(c->comm));
	c->comm[sizeof(c->comm) - 1] = 0;
	c->ppid = parent->pid;
	c->ready = true;
	table_add(e, c);
	mark(e, c, PEND_RELOAD);
}

static void apply_exec(struct engine *e, const struct ev_proc *ev)
{
	struct proc *p;

	stacks_forget(e->stacks, ev->tgid);	/* its code and chunks are gone */

	if (filter_active(e->o.filter)) {
		/* A new image may pass the filter (--comm) or stop passing it. */
		bool match = filter_match(e->o.filter, ev->tgid, ev->comm);

		p = engine_find(e, ev->tgid);
		if (p && !p->exited && !match) {
			unwatch(e, p);
			return;
		}
		if (!p && match) {
			watch_new(e, ev->tgid, ev->comm);
			return;
		}
		if (!p)
			return;
	}

	if (e->naliases && alias_parent(e, ev->tgid)) {
		alias_del(e, ev->tgid);
		p = new_proc(e, ev->tgid, false);
		if (p)
			memcpy(p->comm, ev->comm, sizeof(p->comm));
		return;
	}
	p = proc_for(e, ev->tgid);
	if (!p)
		return;
	/* A new address space: the old pagemap fd points at the old mm. */
	proc_reset(p);
	if (ps(p)->pagemap_fd >= 0) {
		close(ps(p)->pagemap_fd);
		ps(p)->pagemap_fd = -1;
	}
	ps(p)->nscan = 0;
	ps(p)->nchecks = 0;
	ps(p)->locked_future = false;
	HOOK(e, exec, p);
	memcpy(p->comm, ev->comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = 0;
	mark(e, p, PEND_RELOAD);
}

static void note_exit(struct engine *e, struct proc *p)
{
	if (array_reserve(e->exits, e->nexits, e->capexits, 16))
		return;
	e->exits[e->nexits++] = p;
}

static void mark_exited(struct engine *e, struct proc *p)
{
	/* Keep the last picture for a while (a tombstone), as top and htop do. */
	p->exited = true;
	p->exited_ns = e->now_ns;
	pending_remove(e, p);
	if (ps(p)->pagemap_fd >= 0) {
		close(ps(p)->pagemap_fd);
		ps(p)->pagemap_fd = -1;
	}
	note_exit(e, p);
	HOOK(e, exited, p);
}

static void apply_exit(struct engine *e, const struct ev_proc *ev)
{
	struct proc *p = engine_find(e, ev->tgid);

	if (e->naliases)
		alias_del(e, ev->tgid);
	if (!p || p->exited)
		return;
	mark_exited(e, p);
}

/*
 * One drain of the ring buffer applies records for DRAIN_BUDGET_NS at most: libbpf's
 * consume loops as long as the producer keeps up, and a target that maps and unmaps flat
 * out (exact mode's hooks cost a system call per mapping) would otherwise keep the engine
 * lock, and the quit that waits for it, forever.  What is left stays in the ring for the
 * next drain; if the ring overflows meanwhile, the usual loss healing applies.
 */
#define DRAIN_BUDGET_NS		5000000ULL
#define DRAIN_CHECK_EVERY	64	/* records between two looks at the clock */
#define DRAIN_PAUSED		(-EAGAIN)	/* on_event's "stop here" (libbpf keeps the
						 * record consumed and returns it) */

static void drain_begin(struct engine *e)
{
	e->drain_from = engine_now_ns();
	e->drained = 0;
}

static int drain(struct engine *e)
{
	int n;

	drain_begin(e);
	n = tracer_consume(e->tracer);
	e->drain_paused = n == DRAIN_PAUSED;
	return e->drain_paused ? (int)e->drained : n;
}

static int on_event(void *ctx, const void *data, size_t size)
{
	struct engine *e = ctx;
	uint8_t kind = *(const uint8_t *)data;
	int rc = 0;

	if (++e->drained % DRAIN_CHECK_EVERY == 0 &&
	    engine_now_ns() - e->drain_from > DRAIN_BUDGET_NS)
		rc = DRAIN_PAUSED;	/* this record is applied, the next ones wait */

	e->st.events++;
	if (kind < EV_KIND_MAX)
		e->st.events_by_kind[kind]++;
	switch (kind) {
	case EV_FAULT:
		if (size >= sizeof(struct ev_fault))
			apply_fault(e, data);
		break;
	case EV_SYSCALL:
		if (size >= sizeof(struct ev_syscall))
			apply_syscall(e, data);
		break;
	case EV_FORK:
		if (size >= sizeof(struct ev_proc))
			apply_fork(e, data);
		break;
	case EV_EXEC:
		if (size >= sizeof(struct ev_proc))
			apply_exec(e, data);
		break;
	case EV_EXIT:
		if (size >= sizeof(struct ev_proc))
			apply_exit(e, data);
		break;
	case EV_STACK:
		if (e->stacks && size >= sizeof(struct ev_stack))
			stacks_on_event(e->stacks, engine_find(e, ((const struct ev_stack *)data)->tgid),
					data);
		break;
	}
	return rc;
}

/* --- scanning --- */

static int pagemap_fd(struct proc *p)
{
	struct pstate *s = ps(p);

	if (s->pagemap_fd < 0)
		s->pagemap_fd = pagemap_open(io(p));
	return s->pagemap_fd;
}

static void collect_run(uint64_t start, uint64_t end, uint32_t cats, void *arg)
{
	struct engine *e = arg;

	if (e->runs_lost)
		return;
	if (e->nruns == e->capruns) {
		size_t cap = e->capruns ? e->capruns * 2 : 1024;
		struct scan_run *r = NULL;

		if (e->test_fail_runs > 0 && e->capruns)
			e->test_fail_runs--;	/* a growth that fails, for the test */
		else
			r = realloc(e->runs, cap * sizeof(*r));
		if (!r) {
			/* A run left out would read as "not resident": the whole pass is
			 * dropped instead (scan_range fails, the process is rescanned). */
			e->runs_lost = true;
			return;
		}
		e->runs = r;
		e->capruns = cap;
	}
	e->runs[e->nruns++] = (struct scan_run){
		start, end, (cats & PMC_PRESENT) ? PS_RESIDENT : PS_SWAPPED
	};
}

/* Scans [start, end) (which lies within one mapping) and replaces the model's states with
 * the truth, SCAN_CHUNK pages at a time so the run buffer stays small whatever the layout
 * (every other page resident means one run per two pages).  Returns pages corrected, or
 * -errno. */
static int64_t scan_range(struct engine *e, struct proc *p, uint64_t start, uint64_t end)
{
	int fd = pagemap_fd(p), err;
	uint64_t s, t, total = 0;

	if (fd < 0)
		return fd;
	if (!e->use_scan && end - start > PREAD_MAX_PAGES) {
		/* Without PAGEMAP_SCAN every page costs an 8-byte read, holes included: a
		 * sanitizer's 16 TiB shadow reservation would take hours.  Say "unknown". */
		struct scan_run r = { start, end, PS_UNTRACKED };

		return model_apply_scan(p, start, end, &r, 1, 0);
	}
	for (s = start; s < end; s = t) {
		t = (s | (SCAN_CHUNK - 1)) + 1;
		if (t > end)
			t = end;
		e->nruns = 0;
		e->runs_lost = false;
		err = pagemap_scan(fd, s, t, e->use_scan, collect_run, e);
		if (!err && e->runs_lost)
			err = -ENOMEM;
		if (err)
			return err;
		e->st.scanned_pages += t - s;
		total += model_apply_scan(p, s, t, e->runs, e->nruns,
					  e->heat_scan ? e->now_ns : 0);
		yield_lock(e);	/* a big process: let a reader in between chunks */
	}
	return total;
}

/* Scans [start, end) clipped to the mappings it overlaps. */
static int64_t scan_clipped(struct engine *e, struct proc *p, uint64_t start, uint64_t end)
{
	struct mapping *m = model_find(p, start);
	int64_t total = 0, r;

	if (!m)
		m = model_find_ge(p, start);
	for (; m && mapping_start(m) < end; m = model_next(m)) {
		uint64_t s = mapping_start(m) > start ? mapping_start(m) : start;
		uint64_t t = mapping_end(m) < end ? mapping_end(m) : end;

		if (m->kind == MK_VSYSCALL)	/* not part of the mm: pagemap has nothing */
			continue;
		r = scan_range(e, p, s, t);
		if (r < 0)
			return r;
		total += r;
	}
	return total;
}

/* --- healing what no event says: the rss gap (trace and chunk mode) ---
 *
 * Reclaim, swap-out and swap-in, khugepaged, KSM, migration, swapoff, another process's
 * process_madvise: none of them is an event of the target, and in trace and chunk mode its
 * own faults keep its rss moving, so "rss moved without events" hides them.  What does not
 * move while the model follows every event is the gap between the model's resident pages
 * and the kernel's rss (the zero page, vvar and hugetlb pages are resident in pagemap but
 * not in rss: a constant).  It is taken at each full scan, from counters read before the
 * scan, and checked at each tick: a different gap is a change no event explained.  The
 * check runs at ticks only, nothing at faults.
 */
static int64_t model_resident(const struct proc *p)
{
	uint64_t counts[PS_COUNT];

	model_totals(p, counts);
	return (int64_t)counts[PS_RESIDENT];
}

/* After a full scan: the gap that stays while events explain every change. */
static void rss_gap_rebase(struct proc *p)
{
	struct pstate *s = ps(p);

	s->rss_gap_seen = s->counters_seen;
	s->rss_gap = model_resident(p) - (int64_t)s->c.rss;
}

/*
 * At a tick, after the batch-end scans: s->c.rss was read before the tick's drain, rss now
 * after the scans.  If they are equal, nothing moved meanwhile and every fault the kernel
 * counted is in the model (its record or chunk count precedes the counter update), so a
 * different gap is a change no event said: reconcile.  If they differ, the process moved
 * during the check and the gap proves nothing either way: rescan it (PEND_VERIFY, at most
 * every VERIFY_MIN_NS), so a process that never stops is still healed.
 */
static void rss_gap_check(struct engine *e, struct proc *p)
{
	struct pstate *s = ps(p);
	uint64_t rss;

	/* No event and the same rss: the gap cannot have moved (most processes, most ticks). */
	if (!s->rss_gap_dirty && !s->events_tick)
		return;
	if (!s->counters_seen || !s->rss_gap_seen || p->exited || !p->ready || p->pending ||
	    procfs_read_rss(io(p), &rss))
		return;
	s->rss_gap_dirty = false;
	if (rss != s->c.rss) {
		/* A full rescan of a process that keeps moving costs what sample mode pays for
		 * it: at most every VERIFY_MIN_NS, and one that pauses is decided at once. */
		s->rss_gap_dirty = true;
		if (e->now_ns - s->last_full_ns >= VERIFY_MIN_NS)
			mark(e, p, PEND_VERIFY);
	} else if (model_resident(p) - (int64_t)rss != s->rss_gap) {
		mark(e, p, PEND_RECONCILE);
	}
}

static bool rss_gap_mode(const struct engine *e)
{
	return (e->o.mode == MODE_TRACE || e->o.mode == MODE_CHUNK) &&
	       e->f.hook[HOOK_RSS] == AT_NONE;
}

static int64_t scan_all(struct engine *e, struct proc *p)
{
	struct pstate *s = ps(p);
	struct mapping *m;
	int64_t total = 0, r;

	/* The counters the next tick compares with are those from before this scan: a fault
	 * during the scan shows as a change then. */
	if (e->f.hook[HOOK_RSS] == AT_NONE && procfs_read_counters(io(p), &s->c) == 0)
		s->counters_seen = true;

	for (m = model_first(p); m; m = model_next(m)) {
		if (m->kind == MK_VSYSCALL)
			continue;
		r = scan_range(e, p, mapping_start(m), mapping_end(m));
		if (r < 0)
			return r;
		total += r;
	}
	ps(p)->last_full_ns = engine_now_ns();
	rss_gap_rebase(p);
	return total;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

static int scan_queued(struct engine *e, struct proc *p)
{
	struct pstate *s = ps(p);
	size_t i, n = 0;
	int64_t r;

	if (!s->nscan)
		return 0;
	qsort(s->scan, s->nscan, sizeof(*s->scan), cmp_range);
	for (i = 1; i < s->nscan; i++) {
		if (s->scan[i].start <= s->scan[n].end) {
			if (s->scan[i].end > s->scan[n].end)
				s->scan[n].end = s->scan[i].end;
		} else {
			s->scan[++n] = s->scan[i];
		}
	}
	n++;
	for (i = 0; i < n; i++) {
		e->st.scans++;
		r = scan_clipped(e, p, s->scan[i].start, s->scan[i].end);
		if (r < 0) {
			s->nscan = 0;
			return r;
		}
	}
	s->nscan = 0;
	return 0;
}

/* --- reading /proc/PID/maps --- */

struct layout_ctx {
	struct engine *e;
	struct proc *p;
	struct proc *old;		/* the previous layout (relayout), or NULL */
	bool reload;
	int err;
};

static void attrs_from_entry(const struct maps_entry *me, struct mapping_attrs *a)
{
	bool anon = !*me->path;

	memset(a, 0, sizeof(*a));
	a->offset = me->offset;
	a->ino = me->ino;
	a->dev_major = me->dev_major;
	a->dev_minor = me->dev_minor;
	a->perms = me->perms;
	a->kind = map_kind_classify(me->path, me->perms, false);
	a->path = anon ? NULL : me->path;
	if (a->kind == MK_STACK)
		a->flags |= MF_GROWSDOWN;
	if (a->kind == MK_VVAR)
		a->flags |= MF_PFNMAP;
}

static int layout_entry(const struct maps_entry *me, void *arg)
{
	struct layout_ctx *c = arg;
	uint64_t start = me->start >> PAGE_SHIFT_4K, end = me->end >> PAGE_SHIFT_4K;
	struct mapping_attrs a;

	attrs_from_entry(me, &a);
	if (c->old) {
		/* Keep what only events could tell (madvise flags, mlock) from the old layout. */
		struct mapping *om = model_find(c->old, start);

		if (om)
			a.flags |= om->flags & (MF_HUGEPAGE | MF_NOHUGEPAGE | MF_LOCKED |
						MF_HUGETLB | MF_GROWSDOWN | MF_UFFD);
		/* Pages the old layout did not cover are unknown: scan them. */
		uint64_t cur = start;

		while (cur < end) {
			struct mapping *cover = model_find(c->old, cur);

			if (cover) {
				cur = mapping_end(cover) < end ? mapping_end(cover) : end;
				continue;
			}
			struct mapping *next = model_find_ge(c->old, cur);
			uint64_t stop = next && mapping_start(next) < end ? mapping_start(next) : end;

			queue_scan(c->e, c->p, cur, stop);
			cur = stop;
		}
	}
	c->err = model_map_keep(c->p, start, end, &a);
	if (!c->err && c->old && !model_find(c->old, start))
		HOOK(c->e, mapped, c->p, start, end);
	return c->err;
}

static int vmflags_entry(uint64_t start, uint64_t end, uint32_t vmf, void *arg)
{
	struct layout_ctx *c = arg;
	uint32_t set = 0;

	if (vmf & VMF_HUGEPAGE)
		set |= MF_HUGEPAGE;
	if (vmf & VMF_NOHUGEPAGE)
		set |= MF_NOHUGEPAGE;
	if (vmf & VMF_HUGETLB)
		set |= MF_HUGETLB;
	if (vmf & VMF_LOCKED)
		set |= MF_LOCKED;
	if (vmf & VMF_GROWSDOWN)
		set |= MF_GROWSDOWN;
	if (vmf & VMF_PFNMAP)
		set |= MF_PFNMAP;
	if (set)
		model_set_flags(c->p, start >> PAGE_SHIFT_4K, end >> PAGE_SHIFT_4K, set, 0);
	return 0;
}

/* VmFlags cost a page-table walk: read them only when THP eligibility can matter, i.e.
 * THP is in madvise mode and the process has an anonymous mapping of at least 2 MiB. */
static bool want_vmflags(const struct engine *e, const struct proc *p)
{
	const struct mapping *m;

	if (!e->smaps || e->f.thp != THP_MADVISE)
		return false;
	for (m = model_first(p); m; m = model_next(m))
		if ((m->kind == MK_ANON || m->kind == MK_HEAP) &&
		    mapping_end(m) - mapping_start(m) >= PMD_PAGES)
			return true;
	return false;
}

/* The layout of pid: PROCMAP_QUERY (binary, one ioctl per mapping) where the kernel has it,
 * else the text of /proc/PID/maps.  A refusal of the ioctl switches to the text for good. */
static int read_layout(struct engine *e, pid_t pid, maps_cb cb, void *arg)
{
	int err;

	e->st.maps_reads++;
	if (e->use_procmap) {
		err = procmap_read_maps(pid, cb, arg);
		if (err != -ENOTTY && err != -EINVAL && err != -EOPNOTSUPP)
			return err;
		log_info("PROCMAP_QUERY refused (%s): reading /proc/PID/maps text", strerror(-err));
		e->use_procmap = false;
	}
	return procfs_read_maps(pid, cb, arg);
}

/* Models a process from scratch: layout from /proc/PID/maps, pages from pagemap. */
static int reload(struct engine *e, struct proc *p)
{
	struct layout_ctx c = { .e = e, .p = p, .reload = true };
	int64_t r;
	int err;

	proc_reset(p);
	ps(p)->nscan = 0;
	ps(p)->nchecks = 0;
	err = choose_io_pid(p);
	if (err)
		return err;
	err = read_layout(e, io(p), layout_entry, &c);
	if (err)
		return err;
	if (!model_count_maps(p))
		return -ESRCH;	/* a kernel thread or a zombie: no address space */
	if (want_vmflags(e, p))
		procfs_read_vmflags(io(p), vmflags_entry, &c);
	procfs_read_start_brk(io(p), &p->brk_start);
	if (!p->comm[0])
		procfs_read_comm(p->pid, p->comm, sizeof(p->comm));
	procfs_read_uid(p->pid, &p->uid);
	ps(p)->born = 0;
	if (procfs_read_counters(p->pid, &ps(p)->c) == 0) {
		ps(p)->born = ps(p)->c.start_time;	/* the process's, not io_pid's */
		p->ppid = ps(p)->c.ppid;
	}
	r = scan_all(e, p);
	if (r < 0)
		return r;
	p->ready = true;
	HOOK(e, reloaded, p);
	return 0;
}

/* Re-reads the layout, keeping page states where the layout did not change and scanning
 * where it did. */
static int relayout(struct engine *e, struct proc *p)
{
	struct proc *old = proc_new(p->pid);
	struct layout_ctx c = { .e = e, .p = p, .old = old };
	struct mapping *m, *next;
	uint64_t prev_end = 0;
	int err;

	if (!old)
		return -ENOMEM;
	/* Move the current layout aside (pages stay in p). */
	for (m = model_first(p); m; m = next) {
		struct mapping_attrs a = {
			.offset = m->offset, .ino = m->ino, .dev_major = m->dev_major,
			.dev_minor = m->dev_minor, .perms = m->perms, .flags = m->flags,
			.kind = m->kind, .path = m->path,
		};

		next = model_next(m);
		model_map_keep(old, mapping_start(m), mapping_end(m), &a);
	}
	model_clear_layout(p);
	err = read_layout(e, io(p), layout_entry, &c);
	if (!err) {
		/* Pages outside the new layout are gone. */
		for (m = model_first(p); m; m = model_next(m)) {
			if (mapping_start(m) > prev_end)
				model_set_state(p, prev_end, mapping_start(m), PS_NOT_RESIDENT);
			prev_end = mapping_end(m);
		}
		model_set_state(p, prev_end, ~0ULL >> PAGE_SHIFT_4K, PS_NOT_RESIDENT);
	}
	proc_free(old);
	return err;
}

/* After the scans: a faulting page still absent means its fault was in flight. */
static void check_faults(struct engine *e, struct proc *p)
{
	struct pstate *s = ps(p);
	size_t i, keep = 0;

	for (i = 0; i < s->nchecks; i++) {
		struct fault_check *c = &s->checks[i];

		/* Not forced resident: a later munmap or MADV_DONTNEED may have removed it for
		 * good, and the scans stay the only truth. */
		if (model_page_state(p, c->page) == PS_RESIDENT || ++c->tries > FAULT_CHECK_TRIES)
			continue;
		s->checks[keep++] = *c;
	}
	s->nchecks = keep;
	if (keep && e->nretry < RETRY_MAX)
		e->retry[e->nretry++] = p;
}

/* The batch end: everything events asked for, in one pass per process. */
static void flush(struct engine *e)
{
	struct proc *p;
	size_t i;
	int err;

	while ((p = e->pending)) {
		uint32_t what = p->pending;
		int64_t r;

		if (engine_quitting()) {
			/* Nobody will see the result: leave the target's mmap lock alone. */
			e->pending = p->pending_next;
			p->pending = 0;
			p->pending_next = NULL;
			continue;
		}

		e->pending = p->pending_next;
		p->pending = 0;
		p->pending_next = NULL;
		err = 0;
		if (what & PEND_RELOAD) {
			err = reload(e, p);
			ps(p)->load_err = err;
		} else {
			if (what & PEND_MAPS)
				err = relayout(e, p);
			if (!err && (what & (PEND_RECONCILE | PEND_VERIFY))) {
				e->st.reconciles++;
				ps(p)->nscan = 0;
				r = scan_all(e, p);
				if (r < 0)
					err = r;
				else if (what & PEND_RECONCILE)
					e->st.drift_pages += r;
			} else if (!err && (what & PEND_RESCAN)) {
				/* The mode's own scan, not a correction: no drift counted, and
				 * the pages that became resident are this interval's heat. */
				e->st.scans++;
				ps(p)->nscan = 0;
				e->heat_scan = true;
				r = scan_all(e, p);
				e->heat_scan = false;
				if (r < 0)
					err = r;
			}
			if (!err && (what & (PEND_SCAN | PEND_MAPS)))
				err = scan_queued(e, p);
		}
		if (!err && ps(p)->nchecks)
			check_faults(e, p);
		yield_lock(e);
		if (err == -ESRCH || err == -ENOENT) {
			/* Gone (or never had an address space): its exit record may follow. */
			if (!p->ready) {
				table_del(e, p);
				continue;
			}
		} else if (err) {
			/* The model may be part old, part new: never leave it so. */
			log_debug("pid %d: %s", p->pid, strerror(-err));
			ps(p)->scan_failed = true;
		}
	}
	/* Windows of faults still in flight: scanned again at the next batch. */
	for (i = 0; i < e->nretry; i++) {
		struct pstate *s = ps(e->retry[i]);
		size_t k;

		for (k = 0; k < s->nchecks; k++)
			queue_scan(e, e->retry[i], s->checks[k].window.start,
				   s->checks[k].window.end);
	}
	e->nretry = 0;
}

/* --- layout changes without syscall records (sample and chunk modes) --- */

/* The layout hook replaces the syscall records: tp_btf/mmap_lock_released, when the kernel
 * has it and the mode needs no ordered stream (trace) or prompt registration (exact). */
static void choose_layout_source(struct engine *e)
{
	bool wants = e->o.mode == MODE_SAMPLE || e->o.mode == MODE_CHUNK;

	if (wants && e->f.hook[HOOK_LAYOUT] != AT_NONE) {
		e->f.hook[HOOK_SYSCALLS] = AT_NONE;
		log_info("layout changes: tp_btf/mmap_lock_released (no syscall hook)");
		return;
	}
	if (wants)
		log_info("layout changes: %s (no tp_btf/mmap_lock_released%s): every syscall "
			 "takes the kernel's slow path while mevitop runs",
			 attach_name(e->f.hook[HOOK_SYSCALLS]),
			 e->f.disabled & DIS_MMAP_LOCK ? ": disabled by switch" : "");
	e->f.hook[HOOK_LAYOUT] = AT_NONE;
}

/*
 * Exact mode keeps the syscall records (new mappings are registered from them within a
 * millisecond), but on one tp_btf/sys_exit link rather than 14 classic per-syscall
 * tracepoints: opening, attaching and detaching those (an RCU grace period each) made
 * `mevitop run -- /bin/true` take ~150 ms here, ~60 ms with the one link.  Every syscall
 * takes the kernel's slow path with either; the raw hook adds a switch on the number.
 */
static void choose_syscall_hook(struct engine *e)
{
	if (e->o.mode == MODE_EXACT && e->f.hook[HOOK_SYSCALLS] == AT_TP_PER_SYSCALL &&
	    e->f.btf_raw_syscalls)
		e->f.hook[HOOK_SYSCALLS] = AT_TP_BTF_RAW_SYSCALLS;
}

static bool layout_hooked(const struct engine *e)
{
	return e->f.hook[HOOK_LAYOUT] != AT_NONE;
}

/* p's mmap_lock was released for writing since the last refresh: re-read its layout once,
 * at this refresh (relayout scans what the new layout covers and the old did not). */
static void on_layout_changed(void *ctx, pid_t tgid, uint64_t count)
{
	struct engine *e = ctx;
	struct proc *p = engine_find(e, tgid);

	/* exit_mmap() takes the lock too: a tombstone stays as it is, and a process not seen
	 * yet is announced by its fork record (or healed as a lost one). */
	if (!p || p->exited || !p->ready)
		return;
	e->st.layout_changes++;
	mark(e, p, PEND_MAPS);
}

/*
 * What the counters say when no syscall record explains anything (layout hooked):
 *   the size moved: a layout change the hook cannot see -- munmap, brk or mremap shrinking
 *     and a stack growing by faults downgrade the write lock to a read lock instead of
 *     releasing it, so no write release fires: re-read the layout;
 *   chunk mode: rss fell (MADV_DONTNEED/FREE/PAGEOUT, reclaim, munmap) or moved with no
 *     fault counted (MADV_POPULATE_*, mlock, GUP): rescan it -- the mode's own scan now,
 *     not a correction, since no record could have said it.
 */
static uint32_t layout_unexplained(const struct engine *e, const struct pstate *s,
				   const struct proc_counters *c)
{
	uint32_t what = 0;

	if (c->vsize != s->c.vsize)
		what |= PEND_MAPS;
	if (e->o.mode == MODE_CHUNK && (c->rss < s->c.rss || (c->rss != s->c.rss && !s->events_tick)))
		what |= PEND_RESCAN;
	return what;
}

/* --- public --- */

int engine_new(const struct engine_opts *o, const struct features *f, struct engine **out,
	       char *why, size_t whylen)
{
	struct engine *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->o = *o;
	e->f = *f;
	pthread_mutex_init(&e->lock, NULL);
	pthread_mutex_init(&e->step_lock, NULL);
	e->use_scan = f->pagemap_scan && !(f->disabled & DIS_PAGEMAP_SCAN);
	e->use_procmap = f->procmap_query && !(f->disabled & DIS_PROCMAP_QUERY);
	if (getenv("MEVITOP_TEST_FAIL_ALLOC") && !strcmp(getenv("MEVITOP_TEST_FAIL_ALLOC"),
							 "scan-runs"))
		e->test_fail_runs = 1;
	e->scale = 1;
	e->cpu_at_tick = cpu_ns();
	e->smaps = !(f->disabled & DIS_SMAPS);
	if (!e->o.reconcile_period_ms)
		e->o.reconcile_period_ms = 30000;
	if (!e->o.reconcile_budget_pages)
		e->o.reconcile_budget_pages = 4 << 20;	/* ~20 ms of PAGEMAP_SCAN per tick */
	if (!e->o.tombstone_ms)
		e->o.tombstone_ms = 2000;
	if (o->stacks && stacks_new(o->stack_interval_ms,
				    o->mode == MODE_SAMPLE ? o->stack_sample_period : 0, &e->stacks)) {
		engine_free(e);
		snprintf(why, whylen, "failed to allocate the stack table: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	*out = e;
	return 0;
}

/*
 * -p of a program that has already forked (a server, a browser): its descendants alive now
 * are watched too, as the children it forks from now on are (the BPF side follows forks of
 * targets once they are in its map).  /proc/PID/stat's ppid links them; pids wrap, so a
 * child may be listed before its parent: passes repeat until one adds nothing, and a last
 * listing catches what a descendant forked while the first was read.  Exact mode attaches
 * its userfaultfd to the named pids only (user/exact.c), so it does not come here.
 */
static int watch_descendants(struct engine *e)
{
	pid_t *pids = NULL, *ppids = NULL;
	size_t n, i, round;
	bool added = true;
	int err = 0;

	for (round = 0; added && round < 3; round++) {
		added = false;
		err = procfs_list_pids(&pids, &n);
		if (err)
			return err;
		ppids = calloc(n ? n : 1, sizeof(*ppids));
		if (!ppids) {
			free(pids);
			return -ENOMEM;
		}
		for (i = 0; i < n; i++) {
			struct proc_counters c;

			if (pids[i] != getpid() && procfs_read_counters(pids[i], &c) == 0)
				ppids[i] = c.ppid;
		}
		for (bool more = true; more;) {
			more = false;
			for (i = 0; i < n; i++) {
				struct proc *parent = ppids[i] ? engine_find(e, ppids[i]) : NULL;

				if (!parent || engine_find(e, pids[i]) ||
				    tracer_add_target(e->tracer, pids[i]))
					continue;
				if (!new_proc(e, pids[i], false)) {
					err = -ENOMEM;
					break;
				}
				more = added = true;
			}
		}
		free(pids);
		free(ppids);
		if (err)
			return err;
	}
	return 0;
}

int engine_start(struct engine *e, char *why, size_t whylen)
{
	struct tracer_opts to = {
		.filter = filtered(e),
		.all_proc_events = filter_active(e->o.filter),
		.chunk_map_entries = e->o.chunk_map_entries,
		.sample = e->o.mode == MODE_CHUNK,
		.ringbuf_bytes = e->o.ringbuf_bytes,
		.wakeup_bytes = e->o.ringbuf_bytes ? e->o.ringbuf_bytes / 4 : 2 << 20,
		.self = getpid(),
		.follow_children = e->o.follow_children,
		.stacks = e->stacks != NULL,
		.stack_interval_ns = e->o.stack_interval_ms * 1000000ULL,
		.stack_sample_period = e->stacks && e->o.mode == MODE_SAMPLE ?
				       e->o.stack_sample_period : 0,
	};
	pid_t *pids = NULL;
	size_t n = 0, i;
	int err;

	if (to.wakeup_bytes < 64)
		to.wakeup_bytes = 64;
	/*
	 * Any program on the page-fault tracepoints costs ~80 ns a fault on this class of
	 * machine, an empty one included (4-5% of a 2 us fault; bench/run_bench.py), and the
	 * rss_stat hook fires at every fault too (another ~3.5%).  Only trace and chunk mode
	 * hook faults; sample and exact mode poll each process's fault and rss counters.  The
	 * rss_stat hook (counters kept in a BPF map) is opt-in: --rss-hook.
	 */
	if (e->o.mode == MODE_SAMPLE || e->o.mode == MODE_EXACT)
		e->f.hook[HOOK_FAULT] = e->f.hook[HOOK_KFAULT] = AT_NONE;
	if (!e->o.rss_hook)
		e->f.hook[HOOK_RSS] = AT_NONE;	/* /proc/PID/stat is polled instead */
	choose_layout_source(e);
	choose_syscall_hook(e);
	err = tracer_open(&e->f, &to, on_event, e, &e->tracer, why, whylen);
	if (err)
		return err;
	e->now_ns = engine_now_ns();
	e->last_tick_ns = e->now_ns;
	if (e->o.npids) {
		for (i = 0; i < e->o.npids; i++) {
			err = tracer_add_target(e->tracer, e->o.pids[i]);
			if (err) {
				snprintf(why, whylen, "failed to watch pid %d: %s", e->o.pids[i],
					 strerror(-err));
				return err;
			}
			if (!engine_find(e, e->o.pids[i]) && !new_proc(e, e->o.pids[i], true))
				return -ENOMEM;
		}
		if (e->o.follow_children && e->o.mode != MODE_EXACT) {
			err = watch_descendants(e);
			if (err) {
				snprintf(why, whylen, "failed to list the watched processes' "
					 "children: %s", strerror(-err));
				return err;
			}
		}
	} else {
		err = procfs_list_pids(&pids, &n);
		if (err) {
			snprintf(why, whylen, "failed to list /proc: %s", strerror(-err));
			return err;
		}
		for (i = 0; i < n; i++) {
			if (pids[i] == getpid() || engine_find(e, pids[i]))
				continue;
			if (!filter_active(e->o.filter))
				new_proc(e, pids[i], false);
			else if (filter_match(e->o.filter, pids[i], NULL))
				watch_new(e, pids[i], NULL);
		}
		free(pids);
	}
	elock(e);
	flush(e);
	eunlock(e);
	if (e->o.npids) {
		for (i = 0; i < e->o.npids; i++) {
			struct proc *p = engine_find(e, e->o.pids[i]);

			if (p && !p->ready && ps(p)->load_err && ps(p)->load_err != -ESRCH) {
				snprintf(why, whylen, "cannot read process %d's memory map: %s",
					 e->o.pids[i], strerror(-ps(p)->load_err));
				return ps(p)->load_err;
			}
			if (!p || !p->ready) {
				snprintf(why, whylen, "process %d vanished while attaching",
					 e->o.pids[i]);
				return -ESRCH;
			}
		}
	}
	/* Apply what happened during the initial scans before the first snapshot. */
	engine_step(e, 0);
	return 0;
}

int engine_poll_ms(const struct engine *e)
{
	return e->o.mode == MODE_TRACE ? 10 : 100;
}

static atomic_bool quitting;

void engine_set_quitting(bool on)
{
	atomic_store(&quitting, on);
}

bool engine_quitting(void)
{
	return atomic_load_explicit(&quitting, memory_order_relaxed);
}

int engine_step(struct engine *e, int timeout_ms)
{
	int n;

	if (engine_quitting())
		return 0;

	/* Wait for a wake-up (or the timeout) without the lock, so readers are never held up
	 * by an idle wait; then apply what is there
	 * (no wait when the previous drain ran out of budget: records are waiting). */
	tracer_wait(e->tracer, e->drain_paused ? 0 : timeout_ms);
	elock(e);
	e->now_ns = engine_now_ns();
	n = drain(e);
	HOOK(e, step);
	flush(e);
	eunlock(e);
	return n;
}

/* Sample mode: faults of one process in one 2 MiB chunk since the last tick. */
static void on_chunk(void *ctx, const struct chunk_key *k, const struct chunk_val *v)
{
	struct engine *e = ctx;
	struct proc *p = engine_find(e, k->tgid);
	uint64_t start = k->chunk << (MEVITOP_CHUNK_SHIFT - PAGE_SHIFT_4K), b;
	uint64_t pages = 1ULL << (MEVITOP_CHUNK_SHIFT - PAGE_SHIFT_4K);
	uint64_t blocks = pages >> HEAT_BLOCK_SHIFT;

	/* Counts are drained at ticks, after the exit record of a process that faulted and
	 * exited in between: those belong to the tombstone, not to a new process. */
	if (p && p->exited)
		return;
	if (!p)
		p = proc_for(e, k->tgid);
	if (!p)
		return;
	p->faults += v->faults;
	ps(p)->events_tick += v->faults;
	/* The aggregate does not say which pages: spread the heat over the chunk. */
	for (b = 0; b < blocks; b++)
		heat_add(&p->heat, start + (b << HEAT_BLOCK_SHIFT), (float)v->faults / blocks,
			 e->now_ns);
	if (!(p->pending & PEND_RELOAD))
		queue_scan(e, p, start, start + pages);
}

static void on_lost_tgid(void *ctx, pid_t tgid, uint64_t count)
{
	struct engine *e = ctx;
	struct proc *p = engine_find(e, tgid);

	/* We cannot know what the lost records said: layout and pages both. */
	if (p && !p->exited)
		mark(e, p, PEND_MAPS | PEND_RECONCILE);
	else if (!p)
		proc_for(e, tgid);	/* its fork record may be what was lost */
}

static int cmp_proc(const void *a, const void *b)
{
	const struct proc *x = *(const struct proc *const *)a, *y = *(const struct proc *const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

struct proc **engine_procs(struct engine *e, size_t *n)
{
	size_t i, k = 0;
	struct proc *p;

	if (e->sorted_dirty) {
		if (e->capsorted < e->nprocs) {
			struct proc **v = realloc(e->sorted, e->nprocs * 2 * sizeof(*v));

			if (!v) {
				*n = 0;
				return e->sorted;
			}
			e->sorted = v;
			e->capsorted = e->nprocs * 2;
		}
		for (i = 0; i < NBUCKETS; i++)
			for (p = e->buckets[i]; p; p = p->hnext)
				e->sorted[k++] = p;
		if (k)	/* none yet: e->sorted may still be NULL */
			qsort(e->sorted, k, sizeof(*e->sorted), cmp_proc);
		e->nsorted = k;
		e->sorted_dirty = false;
	}
	*n = e->nsorted;
	return e->sorted;
}

/*
 * A process whose exit record was lost (a small ring under fork load) would stay in the model
 * as running forever: found here gone, reused (another start time) or a zombie, and retired
 * as its exit record would have.  c: its counters just read, or NULL if they could not be.
 */
static bool retire_if_ended(struct engine *e, struct proc *p, const struct proc_counters *c)
{
	struct pstate *s = ps(p);

	if (c && (!s->born || c->start_time == s->born) && c->state != 'Z' && c->state != 'X')
		return false;	/* the common case, decided without another read */
	if (!procfs_process_ended(p->pid, s->born)) {
		/* Alive, but the thread we read it through is gone or a zombie (the main
		 * thread called pthread_exit()): read it through a live one. */
		if (!c || c->state == 'Z' || c->state == 'X')
			mark(e, p, PEND_RELOAD);
		return false;
	}
	mark_exited(e, p);
	e->st.retired++;
	return true;
}

/*
 * What changed a process since the last tick, when no BPF program runs at each fault.
 *   trace with --rss-hook: the rss_stat hook's counters moved but no record of this
 *          process came -> reclaim, swap-out, khugepaged, KSM or GUP changed it behind our
 *          back: reconcile.
 *   trace, chunk: the counters are read for rss_gap_check, which decides after the drain.
 *   sample, exact: its fault counters (exact, kept by the kernel per process) or its rss
 *          or size moved: rescan it, and re-read its layout if its size changed (a stack
 *          growing by faults makes no syscall).
 */
static void poll_counters(struct engine *e, struct proc *p)
{
	struct pstate *s = ps(p);
	struct proc_counters c;
	struct rss_val rv;
	bool read;

	if (e->f.hook[HOOK_RSS] != AT_NONE) {
		/* /proc/PID/stat is not polled: look for ghosts only after exits were lost. */
		if (e->ghost_ticks && retire_if_ended(e, p, NULL))
			return;
		if (tracer_read_rss(e->tracer, p->pid, &rv) == 0) {
			if (rv.updates != s->rss_updates && !s->events_tick && s->rss_updates)
				mark(e, p, PEND_RECONCILE);
			s->rss_updates = rv.updates;
		}
		return;
	}
	read = procfs_read_counters(io(p), &c) == 0;
	if (retire_if_ended(e, p, read ? &c : NULL))
		return;
	if (read) {
		p->ppid = c.ppid;	/* a parent's exit reparents its children */
		if (io(p) == p->pid && c.comm[0])	/* a child may name itself after the fork */
			memcpy(p->comm, c.comm, sizeof(p->comm));
	}
	if (s->events_tick || c.rss != s->c.rss)
		s->rss_gap_dirty = true;
	if (s->counters_seen) {
		uint64_t faults = c.minflt + c.majflt, before = s->c.minflt + s->c.majflt;
		bool moved = faults != before || c.rss != s->c.rss || c.vsize != s->c.vsize;

		if (layout_hooked(e) && e->o.mode == MODE_CHUNK) {
			/* No syscall records: what the size and rss say (layout_unexplained);
			 * anything else no event explains shows in the rss gap (rss_gap_check). */
			mark(e, p, layout_unexplained(e, s, &c));
		} else if (e->o.mode != MODE_CHUNK && e->o.mode != MODE_TRACE && moved) {
			/* Sample and exact mode; trace and chunk mode's faults arrive as records
			 * or counts, and what none explains shows in the rss gap (rss_gap_check). */
			p->faults += faults > before ? faults - before : 0;
			mark(e, p, PEND_RESCAN | (c.vsize != s->c.vsize ? PEND_MAPS : 0));
		}
	}
	s->c = c;
	s->counters_seen = true;
}

/* --cgroup: processes join and leave the cgroup without any event we see. */
static void refresh_cgroup(struct engine *e)
{
	struct filter *f = e->o.filter;
	struct proc **procs;
	size_t n, i;

	filter_refresh(f);
	procs = engine_procs(e, &n);
	for (i = n; i-- > 0;)
		if (!procs[i]->exited && !filter_match(f, procs[i]->pid, procs[i]->comm))
			unwatch(e, procs[i]);
	for (i = 0; i < f->nmembers; i++)
		if (f->members[i] != getpid() && !engine_find(e, f->members[i]) &&
		    filter_match(f, f->members[i], NULL))
			watch_new(e, f->members[i], NULL);
}

/* --max-cpu: past the budget, double the interval (and halve the rescan budget); well
 * under it, come back.  Said in the stats, never silent. */
static void cpu_budget(struct engine *e, double dt)
{
	uint64_t c = cpu_ns();

	if (dt > 0)
		e->st.cpu_pct = (c - e->cpu_at_tick) / 1e7 / dt;
	e->cpu_at_tick = c;
	if (!e->o.max_cpu_pct)
		return;
	if (e->st.cpu_pct > e->o.max_cpu_pct && e->scale < 64)
		e->scale *= 2;
	else if (e->st.cpu_pct < e->o.max_cpu_pct / 2.0 && e->scale > 1)
		e->scale /= 2;
}

/* Everything the kernel has for us: records, and chunk mode's fault counts. */
static void drain_all(struct engine *e)
{
	drain(e);
	if (e->o.mode == MODE_CHUNK) {
		tracer_drain_chunks(e->tracer, on_chunk, e);
		tracer_read_chunk_slots(e->tracer, on_chunk, e);
	}
}

/* The counters were read (poll_counters); bring the model up to that moment -- every fault
 * they count has its record or chunk count in by now -- and compare. */
static void rss_gap_tick(struct engine *e)
{
	struct proc **procs;
	size_t n, i;

	drain_all(e);
	flush(e);
	procs = engine_procs(e, &n);
	for (i = 0; i < n; i++)
		rss_gap_check(e, procs[i]);
}

uint32_t engine_interval_scale(struct engine *e)
{
	return e->scale;
}

void engine_tick(struct engine *e)
{
	uint64_t now = engine_now_ns(), budget;
	double dt = (now - e->last_tick_ns) / 1e9;
	struct proc **procs;
	size_t n, i, k;

	elock(e);
	cpu_budget(e, dt);
	e->st.interval_scale = e->scale;
	budget = e->o.reconcile_budget_pages / e->scale;
	e->now_ns = now;
	if (e->o.filter && e->o.filter->cgroup)
		refresh_cgroup(e);
	drain_all(e);
	HOOK(e, tick);
	e->st.lost = tracer_lost(e->tracer, e->st.lost_by_kind);
	e->st.overflows = tracer_overflows(e->tracer);
	if (e->st.lost_by_kind[EV_EXIT] != e->lost_exits) {
		/* Some exit records were lost: a process may still be exiting, or a zombie
		 * not yet reaped, at this tick; look again for a few. */
		e->lost_exits = e->st.lost_by_kind[EV_EXIT];
		e->ghost_ticks = GHOST_TICKS;
	} else if (e->ghost_ticks) {
		e->ghost_ticks--;
	}
	tracer_drain_lost_tgids(e->tracer, on_lost_tgid, e);
	if (layout_hooked(e)) {
		tracer_drain_layout(e->tracer, on_layout_changed, e);
		e->st.layout_unowned = tracer_layout_unowned(e->tracer);
	}

	procs = engine_procs(e, &n);
	for (i = 0; i < n; i++) {
		struct proc *p = procs[i];
		struct pstate *s = ps(p);

		if (p->exited) {
			/* Shown as exited at least once (engine_take_exits), then dropped. */
			if (now - p->exited_ns > e->o.tombstone_ms * 1000000ULL &&
			    (p->reported_exit || now - p->exited_ns > 60000000000ULL))
				table_del(e, p);
			continue;
		}
		if (dt > 0) {
			p->fault_rate = (p->faults - p->faults_prev) / dt;
			p->faults_prev = p->faults;
		}
		if (s->scan_failed) {
			s->scan_failed = false;
			mark(e, p, p->ready ? PEND_RECONCILE : PEND_RELOAD);
		}
		if (p->ready)
			poll_counters(e, p);
		s->events_tick = 0;
		if (p->heat.used > 4096)
			heat_prune(&p->heat, now);
	}
	if (rss_gap_mode(e))
		rss_gap_tick(e);
	/* Periodic reconciliation, round robin, within a page budget per tick. */
	procs = engine_procs(e, &n);
	if (e->o.reconcile && n) {
		for (k = 0; k < n && budget; k++) {
			struct proc *p = procs[(e->reconcile_cursor + k) % n];

			if (p->exited || !p->ready || (p->pending & PEND_RELOAD))
				continue;
			if (now - ps(p)->last_full_ns < e->o.reconcile_period_ms * 1000000ULL)
				continue;
			if (p->mapped_pages > budget && k)
				break;
			budget = p->mapped_pages > budget ? 0 : budget - p->mapped_pages;
			mark(e, p, PEND_MAPS | PEND_RECONCILE);
		}
		e->reconcile_cursor = (e->reconcile_cursor + k) % n;
	}
	flush(e);
	if (dt > 0) {
		e->st.events_per_sec = (e->st.events - e->events_at_tick) / dt;
		e->st.maps_reads_per_sec = (e->st.maps_reads - e->maps_reads_at_tick) / dt;
		e->st.interval_s = dt;
	}
	e->events_at_tick = e->st.events;
	e->maps_reads_at_tick = e->st.maps_reads;
	e->last_tick_ns = now;
	eunlock(e);
}

void engine_set_hooks(struct engine *e, const struct engine_hooks *h)
{
	e->hooks = *h;
}

const struct engine_hooks *engine_hooks(struct engine *e)
{
	return &e->hooks;
}

void engine_queue_scan(struct engine *e, struct proc *p, uint64_t start, uint64_t end)
{
	queue_scan(e, p, start, end);
}

void engine_lock(struct engine *e)
{
	atomic_fetch_add(&e->waiting, 1);
	pthread_mutex_lock(&e->lock);
	atomic_fetch_sub(&e->waiting, 1);
}

void engine_unlock(struct engine *e)
{
	pthread_mutex_unlock(&e->lock);
}

const struct engine_stats *engine_stats(struct engine *e)
{
	return &e->st;
}

const struct features *engine_features(struct engine *e)
{
	return &e->f;
}

enum engine_mode engine_mode(const struct engine *e)
{
	return e->o.mode;
}

size_t engine_alive_targets(struct engine *e)
{
	size_t i, alive = 0;

	for (i = 0; i < e->o.npids; i++) {
		struct proc *p = engine_find(e, e->o.pids[i]);

		if (p && !p->exited)
			alive++;
	}
	/* Followed children keep a -p session alive too. */
	if (e->o.follow_children) {
		struct proc **procs;
		size_t n;

		procs = engine_procs(e, &n);
		for (i = 0; i < n; i++)
			if (!procs[i]->exited && !ps(procs[i])->target)
				alive++;
	}
	return alive;
}

void engine_take_exits(struct engine *e, void (*fn)(void *ctx, const struct proc *p), void *ctx)
{
	size_t i;

	for (i = 0; i < e->nexits; i++) {
		e->exits[i]->reported_exit = true;
		fn(ctx, e->exits[i]);
	}
	e->nexits = 0;
}

size_t engine_proc_bytes(const struct proc *p)
{
	const struct pstate *s = ps(p);

	return proc_bytes(p) + sizeof(*s) + s->capscan * sizeof(*s->scan) +
	       s->capchecks * sizeof(*s->checks);
}

size_t engine_bytes(struct engine *e)
{
	size_t bytes = sizeof(*e) + e->capsorted * sizeof(void *) +
		       e->capruns * sizeof(struct scan_run) +
		       (e->capaliases + e->capexits) * sizeof(void *);
	struct proc *p;
	size_t i;

	for (i = 0; i < NBUCKETS; i++)
		for (p = e->buckets[i]; p; p = p->hnext)
			bytes += engine_proc_bytes(p);
	return bytes;
}

void engine_free(struct engine *e)
{
	struct proc *p;
	size_t i;

	if (!e)
		return;
	tracer_close(e->tracer);
	for (i = 0; i < NBUCKETS; i++) {
		while ((p = e->buckets[i])) {
			e->buckets[i] = p->hnext;
			pstate_free(ps(p));
			proc_free(p);
		}
	}
	free(e->sorted);
	free(e->aliases);
	free(e->runs);
	free(e->exits);
	stacks_free(e->stacks);
	pthread_mutex_destroy(&e->lock);
	pthread_mutex_destroy(&e->step_lock);
	free(e);
}
