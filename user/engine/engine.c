// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's lifecycle, its ring buffer and its tick policy (counters, cgroup refresh,
 * --max-cpu, reconcile).  The rules are rules.c's, the batch end scan.c's, the process
 * table table.c's (engine_int.h).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/array.h"
#include "engine/engine_int.h"
#include "engine/mem_anon.h"
#include "engine/start_ahead.h"
#include "lib/log.h"
#include "stacks/stacks.h"
#include "kernel/kbtf.h"
#include "kernel/tracer.h"

struct stacks *engine_stacks(struct engine *e)
{
	return e->stacks;
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
	engine_faults_flush(e);
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

	engine_apply_record(e, data, size);
	if (kind == EV_STACK && e->stacks && size >= sizeof(struct ev_stack))
		stacks_on_event(e->stacks, engine_find(e, ((const struct ev_stack *)data)->tgid),
				data);
	return rc;
}

static bool rss_gap_mode(const struct engine *e)
{
	return (e->o.mode == MODE_TRACE || e->o.mode == MODE_CHUNK) &&
	       e->f.hook[HOOK_RSS] == AT_NONE;
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
			 kfeatures_attach_name(e->f.hook[HOOK_SYSCALLS]),
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

/*
 * The ring buffer's pages are mapped into mevitop twice over (libbpf maps the data area
 * twice, so a record never wraps), and all of them count in its RSS: the 8 MiB default was
 * 16 MiB of mevitop's 58 at 5,000 processes.  With no fault, syscall or stack hook (sample
 * mode, exact mode without --stacks, once mmap_lock_released replaced the syscall hook)
 * only fork, exec and exit records flow, 48 bytes each: 512 KiB holds 10,000 of them (a
 * drain is woken at a quarter full), and a loss is healed by the per-refresh pass or the
 * /proc listing (test_ghosts).
 */
#define PROC_RING_BYTES (512u << 10)

static bool only_proc_records(const struct engine *e)
{
	return e->f.hook[HOOK_FAULT] == AT_NONE && e->f.hook[HOOK_KFAULT] == AT_NONE &&
	       e->f.hook[HOOK_SYSCALLS] == AT_NONE && e->f.hook[HOOK_RSS] == AT_NONE &&
	       !e->stacks;
}

static void choose_ring(const struct engine *e, struct tracer_opts *to)
{
	if (!e->o.ringbuf_bytes && only_proc_records(e)) {
		to->ringbuf_bytes = PROC_RING_BYTES;
		to->wakeup_bytes = PROC_RING_BYTES / 4;
	}
	if (to->wakeup_bytes < 64)
		to->wakeup_bytes = 64;
}

/* Every BPF object of the start is loaded: the one BTF parse goes (kbtf.h; a whole-system
 * start's start_ahead thread let it go already, after its own load).  The
 * start-up's garbage (that parse, libbpf's ELF copies, the scans' run buffers) lies
 * between the model's allocations, where free() leaves it resident: malloc_trim hands
 * those pages back once. */
static void start_loaded(void)
{
	kbtf_release();
	malloc_trim(0);
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
	table_pend(e, p, PEND_MAPS);
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
	int err;

	if (!e)
		return -ENOMEM;
	table_init(e, o, f, &engine_kernel_source, e);
	e->anon_meminfo = mem_anon_from_meminfo(!table_filtered(e), f->disabled);
	if (getenv("MEVITOP_TEST_FAIL_ALLOC") && !strcmp(getenv("MEVITOP_TEST_FAIL_ALLOC"),
							 "scan-runs"))
		e->test_fail_runs = 1;
	e->scale = 1;
	e->cpu_at_tick = cpu_ns();
	if (!e->o.reconcile_period_ms)
		e->o.reconcile_period_ms = 30000;
	if (!e->o.reconcile_budget_pages)
		e->o.reconcile_budget_pages = 4 << 20;	/* ~20 ms of PAGEMAP_SCAN per tick */
	if (!e->o.tombstone_ms)
		e->o.tombstone_ms = 2000;
	if (o->stacks && stacks_new(o->stack_interval_ms,
				    o->mode == MODE_SAMPLE ? o->stack_sample_period : 0,
				    o->mode == MODE_EXACT, &e->stacks)) {
		engine_free(e);
		snprintf(why, whylen, "failed to allocate the stack table: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	if (e->stacks && o->mode == MODE_SAMPLE)
		stacks_set_duty(e->stacks, o->stack_duty_on_ms, o->stack_duty_every_ms);
	if (engine_files_init(e)) {
		engine_free(e);
		snprintf(why, whylen, "failed to allocate the file table: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	err = engine_share_init(e, why, whylen);
	if (err) {
		engine_free(e);
		return err;
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
 * its userfaultfd to the named pids only (exact/exact.c), so it does not come here.
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
				if (!table_new_proc(e, pids[i], false)) {
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

/* The processes to model at start: the pass's (processes with memory only: no kernel
 * thread to try and drop), or /proc's pids without it. */
static int list_processes(struct engine *e, pid_t **pids, size_t *n)
{
	size_t i;

	pass_take(e);
	if (!e->pass_ok)
		return procfs_list_pids(pids, n);
	*pids = malloc((e->nrecs ? e->nrecs : 1) * sizeof(**pids));
	if (!*pids)
		return -ENOMEM;
	for (i = 0; i < e->nrecs; i++)
		(*pids)[i] = (pid_t)e->recs[i].tgid;
	*n = e->nrecs;
	return 0;
}

void engine_prelaunch(const struct engine_opts *o, uint32_t disabled)
{
	if (!o->npids && !filter_active(o->filter))
		start_ahead_prelaunch(!mem_anon_from_meminfo(true, disabled));
}

static void choose_sources(struct engine *e, struct tracer_opts *to)
{
	choose_layout_source(e);
	choose_syscall_hook(e);
	choose_ring(e, to);
	to->task_iter = e->f.task_iter;
	to->fault_rings = e->o.mode == MODE_TRACE && e->f.fault_rings;
}

static int start(struct engine *e, char *why, size_t whylen)
{
	struct tracer_opts to = {
		.filter = table_filtered(e),
		.all_proc_events = filter_active(e->o.filter),
		.chunk_map_entries = e->o.chunk_map_entries,
		.sample = e->o.mode == MODE_CHUNK,
		.ringbuf_bytes = e->o.ringbuf_bytes,
		.wakeup_bytes = e->o.ringbuf_bytes ? e->o.ringbuf_bytes / 4 : 2 << 20,
		.self = getpid(),
		.follow_children = e->o.follow_children,
		.stacks = e->stacks != NULL,
		.stack_interval_ns = e->o.stack_interval_ms * 1000000ULL,
		.stacks_only = e->o.mode == MODE_EXACT,
		.stack_sample_period = e->stacks && e->o.mode == MODE_SAMPLE ?
				       e->o.stack_sample_period : 0,
		.stack_duty_on_ms = e->o.stack_duty_on_ms,
		.stack_duty_every_ms = e->o.stack_duty_every_ms,
	};
	pid_t *pids = NULL;
	size_t n = 0, i;
	int err;

	/*
	 * Any program on the page-fault tracepoints costs ~80 ns a fault on this class of
	 * machine, an empty one included (4-5% of a 2 us fault; bench/run_bench.py), and the
	 * rss_stat hook fires at every fault too (another ~3.5%).  Only trace and chunk mode
	 * hook faults; sample and exact mode poll each process's fault and rss counters.  The
	 * rss_stat hook (counters kept in a BPF map) is opt-in: --rss-hook.  Exact mode with
	 * --stacks keeps the fault hooks for the stacks alone (stacks_only): ordered exact
	 * mode's ~8x is the userfaultfd round trip, next to which a stack per fault is small.
	 */
	if (e->o.mode == MODE_SAMPLE || (e->o.mode == MODE_EXACT && !e->stacks))
		e->f.hook[HOOK_FAULT] = e->f.hook[HOOK_KFAULT] = AT_NONE;
	if (!e->o.rss_hook)
		e->f.hook[HOOK_RSS] = AT_NONE;	/* /proc/PID/stat is polled instead */
	choose_sources(e, &to);
	/* A whole-system start: the rollups need no hooks, only pids (start_ahead.c). */
	if (!e->o.npids && !filter_active(e->o.filter))
		start_ahead_early(e);
	err = tracer_open(&e->f, &to, on_event, e, &e->tracer, why, whylen);
	if (err)
		return err;
	e->tasks = tracer_tasks(e->tracer);
	e->f.fault_rings = tracer_fault_rings(e->tracer);	/* what was used (JSON) */
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
			if (!engine_find(e, e->o.pids[i]) && !table_new_proc(e, e->o.pids[i], true))
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
		err = list_processes(e, &pids, &n);
		if (err) {
			snprintf(why, whylen, "failed to list /proc: %s", strerror(-err));
			return err;
		}
		if (!filter_active(e->o.filter))
			start_ahead_begin(e, pids, n);
		for (i = n; i-- > 0;) {	/* the scans take the last first: up by pid */
			if (pids[i] == getpid() || engine_find(e, pids[i]))
				continue;
			if (!filter_active(e->o.filter))
				table_new_proc(e, pids[i], false);
			else if (filter_match(e->o.filter, pids[i], NULL))
				table_watch_new(e, pids[i], NULL);
		}
		free(pids);
	}
	table_lock(e);
	e->pass_reads = e->pass_ok;	/* the initial scans read the pass just taken */
	scan_flush_pending(e);
	e->pass_reads = false;
	table_unlock(e);
	start_ahead_scans_done(e);
	/* A stop signal during the initial scans cut them short: there is no first picture
	 * to give, and a -p process left unscanned has not vanished. */
	if (engine_quitting()) {
		snprintf(why, whylen, "stopped during the initial scan");
		return -EINTR;
	}
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
	err = engine_files_start(e, why, whylen);
	start_ahead_end(e);
	start_loaded();
	if (err)
		return err;
	/* Apply what happened during the initial scans before the first snapshot. */
	engine_step(e, 0);
	return 0;
}

/* A failed start joins the start's thread before it says why: the thread may be loading
 * the page cache's skeleton meanwhile, and its messages (-vv) must not follow the error. */
int engine_start(struct engine *e, char *why, size_t whylen)
{
	int err = start(e, why, whylen);

	if (err)
		start_ahead_end(e);
	return err;
}

/* The drain timer is for records that wake nobody (faults, syscalls, stacks: wakeup_flag in
 * bpf/common.bpf.h).  Sample mode with only fork, exec and exit records needs none: each of
 * them wakes the drain when it finds it caught up (bpf/procs.bpf.c), and one behind it is
 * still in the ring at the next epoll_wait, which then returns at once (level-triggered).
 * So there the engine wakes for records and for ticks only: 10 wake-ups a second fewer. */
int engine_poll_ms(const struct engine *e)
{
	if (e->o.mode == MODE_SAMPLE && only_proc_records(e))
		return 1000;
	return e->o.mode == MODE_TRACE ? 10 : 100;
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
	table_lock(e);
	e->now_ns = engine_now_ns();
	n = drain(e);
	HOOK(e, step);
	scan_flush_pending(e);
	table_unlock(e);
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
		p = table_proc_for(e, k->tgid);
	if (!p)
		return;
	p->faults += v->faults;
	ps(p)->events_tick += v->faults;
	/* The aggregate does not say which pages: spread the heat over the chunk. */
	for (b = 0; b < blocks; b++)
		heat_add(&p->heat, start + (b << HEAT_BLOCK_SHIFT), (float)v->faults / blocks,
			 e->now_ns);
	if (!(p->pending & PEND_RELOAD))
		table_queue_scan(e, p, start, start + pages);
}

static void on_lost_tgid(void *ctx, pid_t tgid, uint64_t count)
{
	struct engine *e = ctx;
	struct proc *p = engine_find(e, tgid);

	/* We cannot know what the lost records said: layout and pages both. */
	if (p && !p->exited)
		table_pend(e, p, PEND_MAPS | PEND_RECONCILE);
	else if (!p)
		table_proc_for(e, tgid);	/* its fork record may be what was lost */
}

/* Ended with its exit record lost: retired as that record would have. */
static void retire(struct engine *e, struct proc *p)
{
	table_mark_exited(e, p);
	e->st.retired++;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct proc *x = *(const struct proc *const *)a, *y = *(const struct proc *const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

uint64_t engine_ticks(const struct engine *e)
{
	return e->ticks;
}

struct proc **engine_procs(struct engine *e, size_t *n)
{
	size_t i, k = 0;
	struct proc *p;

	if (e->sorted_dirty) {
		if (array_reserve_n(e->sorted, e->nprocs, e->capsorted, 16)) {
			*n = 0;
			return e->sorted;
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
			table_pend(e, p, PEND_RELOAD);
		return false;
	}
	retire(e, p);
	return true;
}

/* The pass's answer (pass.c): true with *c filled when the pass has p (read through
 * another thread than ours -- the main thread exited -- wants a reload, which picks a live
 * thread).  A record under p's pid with another start time is a reused pid: p ended, and
 * is retired (*retired).  A process missing from the pass is read from /proc as without
 * it: a process the iterator does not visit (pid 1 here) must not be retired, and an ended
 * one costs one failed open. */
static bool counters_by_pass(struct engine *e, struct proc *p, struct proc_counters *c,
			     bool *retired)
{
	const struct task_rec *r;

	*retired = false;
	if (pass_alive(e, p, &r)) {
		taskiter_counters(r, c);
		ps(p)->cgroup_id = r->cgroup_id;
		if ((pid_t)r->io_tid != io(p) && (pid_t)r->io_tid != p->pid)
			table_pend(e, p, PEND_RELOAD);
		return true;
	}
	if (r) {
		retire(e, p);
		*retired = true;
	}
	return false;
}

/*
 * What changed a process since the last tick, when no BPF program runs at each fault.
 *   trace with --rss-hook: the rss_stat hook's counters moved but no record of this
 *          process came -> reclaim, swap-out, khugepaged, KSM or GUP changed it behind our
 *          back: reconcile.
 *   trace, chunk: the counters are read for scan_rss_gap_check, which decides after the drain.
 *   sample, exact: its fault counters (exact, kept by the kernel per process) or its rss
 *          or size moved: rescan it, and re-read its layout if its size changed (a stack
 *          growing by faults makes no syscall).
 */
static void poll_counters(struct engine *e, struct proc *p)
{
	struct pstate *s = ps(p);
	struct proc_counters c;
	struct rss_val rv;
	bool read, by_pass, gone = false;

	if (e->f.hook[HOOK_RSS] != AT_NONE) {
		/* /proc/PID/stat is not polled: look for ghosts only after exits were lost. */
		if (!(e->pass_ok && counters_by_pass(e, p, &c, &gone)) && !gone &&
		    (e->pass_ok || e->ghost_ticks))
			gone = retire_if_ended(e, p, NULL);
		if (gone)
			return;
		if (tracer_read_rss(e->tracer, p->pid, &rv) == 0) {
			if (rv.updates != s->rss_updates && !s->events_tick && s->rss_updates)
				table_pend(e, p, PEND_RECONCILE);
			s->rss_updates = rv.updates;
		}
		return;
	}
	/* One pass read every process's counters: nothing to read per process. */
	read = by_pass = e->pass_ok && counters_by_pass(e, p, &c, &gone);
	if (gone)
		return;
	if (!read) {
		read = procfs_read_counters(io(p), &c) == 0;
		if (retire_if_ended(e, p, read ? &c : NULL))
			return;
	}
	if (!read) {
		/* Alive, but the thread it is read through is gone: retire_if_ended asked for
		 * a reload (which picks a live one and rescans).  Nothing to compare: the
		 * baseline stays what was last read. */
		if (s->events_tick)
			s->rss_gap_dirty = true;
		return;
	}
	p->ppid = c.ppid;	/* a parent's exit reparents its children */
	if (io(p) == p->pid && c.comm[0])	/* a child may name itself after the fork */
		memcpy(p->comm, c.comm, sizeof(p->comm));
	if (s->events_tick || c.rss != s->c.rss)
		s->rss_gap_dirty = true;
	if (s->counters_seen) {
		uint64_t faults = c.minflt + c.majflt, before = s->c.minflt + s->c.majflt;
		bool moved = faults != before || c.rss != s->c.rss || c.vsize != s->c.vsize;

		if (layout_hooked(e) && e->o.mode == MODE_CHUNK) {
			/* No syscall records: what the size and rss say (layout_unexplained);
			 * anything else no event explains shows in the rss gap (scan_rss_gap_check). */
			table_pend(e, p, layout_unexplained(e, s, &c));
		} else if (faults_by_counters(e) && moved) {
			/* Sample and exact mode; trace and chunk mode's faults arrive as records
			 * or counts, and what none explains shows in the rss gap (scan_rss_gap_check). */
			p->faults += faults > before ? faults - before : 0;
			table_pend(e, p, PEND_RESCAN | (c.vsize != s->c.vsize ? PEND_MAPS : 0));
		}
	}
	s->c = c;
	s->c_ns = by_pass ? e->pass_ns : engine_now_ns();	/* no earlier than the read */
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
			table_unwatch(e, procs[i]);
	for (i = 0; i < f->nmembers; i++)
		if (f->members[i] != getpid() && !engine_find(e, f->members[i]) &&
		    filter_match(f, f->members[i], NULL))
			table_watch_new(e, f->members[i], NULL);
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
	scan_flush_pending(e);
	procs = engine_procs(e, &n);
	for (i = 0; i < n; i++)
		scan_rss_gap_check(e, procs[i]);
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

	table_lock(e);
	cpu_budget(e, dt);
	e->st.interval_scale = e->scale;
	budget = e->o.reconcile_budget_pages / e->scale;
	e->now_ns = now;
	if (e->o.filter && e->o.filter->cgroup)
		refresh_cgroup(e);
	/* The pass before the drain: every record of a process the pass misses is in the ring
	 * by now (but its exit record, written as its last thread dies), and every process the
	 * pass has has had its fork record written -- drained next, or lost. */
	pass_take(e);
	drain_all(e);
	engine_files_refresh(e);
	HOOK(e, tick);
	e->st.lost = tracer_lost(e->tracer, e->st.lost_by_kind);
	e->st.overflows = tracer_overflows(e->tracer);
	if (e->stacks) {
		struct fault_sampler_stats fs;

		if (tracer_sampler_stats(e->tracer, &fs))
			stacks_set_sampler(e->stacks, &fs);
	}
	if (e->st.lost_by_kind[EV_EXIT] != e->lost_exits) {
		/* Some exit records were lost: a process may still be exiting, or a zombie
		 * not yet reaped, at this tick; look again for a few. */
		e->lost_exits = e->st.lost_by_kind[EV_EXIT];
		e->ghost_ticks = GHOST_TICKS;
	} else if (e->ghost_ticks) {
		e->ghost_ticks--;
	}
	tracer_drain_lost_tgids(e->tracer, on_lost_tgid, e);
	pass_add_missed(e);
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
			table_pend(e, p, p->ready ? PEND_RECONCILE : PEND_RELOAD);
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
			table_pend(e, p, PEND_MAPS | PEND_RECONCILE);
		}
		e->reconcile_cursor = (e->reconcile_cursor + k) % n;
	}
	scan_flush_pending(e);
	/* After the scans: a pass reads the resident pages they found. */
	procs = engine_procs(e, &n);
	engine_share_tick(e, procs, n);
	if (dt > 0) {
		e->st.events_per_sec = (e->st.events - e->events_at_tick) / dt;
		e->st.maps_reads_per_sec = (e->st.maps_reads - e->maps_reads_at_tick) / dt;
		e->st.interval_s = dt;
	}
	e->events_at_tick = e->st.events;
	e->maps_reads_at_tick = e->st.maps_reads;
	e->last_tick_ns = now;
	e->ticks++;
	table_unlock(e);
}

void engine_on_tick(struct engine *e, void (*fn)(void *arg), void *arg)
{
	e->on_tick = fn;
	e->on_tick_arg = arg;
}

void engine_set_hooks(struct engine *e, const struct engine_hooks *h)
{
	e->hooks = *h;
}

const struct engine_hooks *engine_hooks(struct engine *e)
{
	return &e->hooks;
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

uint64_t engine_proc_cgroup(struct engine *e, const struct proc *p)
{
	return e->pass_ok ? ps(p)->cgroup_id : 0;
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
	if (!e)
		return;
	start_ahead_end(e);
	tracer_close(e->tracer);
	table_fini(e);
	stacks_free(e->stacks);
	engine_files_fini(e);
	engine_share_fini(e);
	free(e);
}

void engine_queue_scan(struct engine *e, struct proc *p, uint64_t start, uint64_t end)
{
	table_queue_scan(e, p, start, end);
}
