// SPDX-License-Identifier: GPL-2.0
/*
 * The rules that turn kernel records (events.h: faults, mm syscalls, fork, exec, exit)
 * into model edits, and into scans for what a record cannot say exactly (engine.h).
 * Everything they ask of the system goes through e->src (engine_int.h).
 */
#include <errno.h>
#include <string.h>
#include "lib/array.h"
#include "engine/engine_int.h"
#include "syscalls.h"
#include "kernel/uapi_mm.h"

#define MAX_ERRNO	4095

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
	table_queue_scan(e, p, ws, we);
	add_check(p, page, ws, we);
}

/* A range the kernel populates page by page (MADV_POPULATE_*, WILLNEED, mlock, mprotect
 * of a locked range, COLLAPSE): each page is populated as a fault would be, so a large
 * folio (THP, multi-size THP, a large page-cache folio) maps past the range's ends, though
 * never past the PMDs it touches.  Scanned up to those bounds (clipped to the mappings). */
static void queue_scan_populated(struct engine *e, struct proc *p, uint64_t start, uint64_t end)
{
	table_queue_scan(e, p, start & ~(PMD_PAGES - 1), (end + PMD_PAGES - 1) & ~(PMD_PAGES - 1));
}

/* --- applying events --- */

/*
 * Trace mode's faults come a record a page: ~one a microsecond from a program filling
 * memory, and applying each alone (the process, its mapping, three page sets, the heat
 * table) cost ~90 ns of the engine's CPU a fault.  Consecutive pages of one process with
 * the same flags (a loop writing a buffer, a file read in) are applied as one run: one
 * lookup of each and one range edit.  The run is applied before any other record (a
 * munmap, a fork, an exit) and at the end of each drain (engine_faults_flush), so the model
 * sees the same edits in the same order as page by page.
 */

/* Whether a fault here may have mapped more than its page (a PMD's window is scanned). */
static bool fault_maps_more(const struct engine *e, const struct mapping *m, uint8_t flags)
{
	if (m->flags & MF_HUGETLB)
		return true;
	if (m->kind == MK_FILE || m->kind == MK_SHMEM || m->kind == MK_VDSO || m->kind == MK_OTHER)
		/* Read faults map the cached neighbours too (do_fault_around).  And where the
		 * page cache holds large folios (shmem; ext4/xfs/btrfs files written with large
		 * writes), 6.18's read and shared-write faults map the whole folio, as far as
		 * it lies in the VMA and in the faulting page's PMD: beyond the fault-around
		 * window, possibly the whole 2 MiB.  So the window scanned is that PMD (a few
		 * microseconds with PAGEMAP_SCAN).  A private write fault copies one page. */
		return !(flags & EVF_WRITE) || (m->perms & MP_SHARED);
	return thp_possible(e, m);
}

/* Faults at pages [s, t), all inside m. */
static void faults_in(struct engine *e, struct proc *p, const struct mapping *m, uint64_t s,
		      uint64_t t, uint8_t flags)
{
	uint64_t pg, next;

	if (m->flags & MF_PFNMAP)
		return;		/* raw PFNs ([vvar]): the page walk skips them, so does pagemap */
	/* A protection fault (COW, write to a read-only PTE): the page was present.  Else
	 * PROT_NONE (SIGSEGV, nothing mapped) or a write to a read-only mapping (SIGSEGV or
	 * EFAULT) maps nothing. */
	if (!(flags & EVF_PRESENT) && (!(m->perms & (MP_READ | MP_WRITE | MP_EXEC)) ||
				       ((flags & EVF_WRITE) && !(m->perms & MP_WRITE))))
		return;
	if (t - s == 1)
		model_set_page(p, s, PS_RESIDENT);
	else
		model_set_state(p, s, t, PS_RESIDENT);
	if ((flags & EVF_PRESENT) || !fault_maps_more(e, m, flags))
		return;
	/* Every page of a PMD has the same window: one a PMD, with its latest fault. */
	for (pg = s; pg < t; pg = next) {
		next = (pg | (PMD_PAGES - 1)) + 1;
		if (next > t)
			next = t;
		queue_window(e, p, m, next - 1, PMD_PAGES);
	}
}

/* Faults at pages [s, t) of one process, with the same flags, in this order. */
static void apply_faults(struct engine *e, pid_t tgid, uint64_t s, uint64_t t, uint8_t flags)
{
	struct proc *p = table_proc_for(e, tgid);

	if (!p)
		return;
	p->faults += t - s;
	ps(p)->events_tick += t - s;
	heat_add_range(&p->heat, s, t, e->now_ns);
	if (p->pending & PEND_RELOAD)
		return;		/* the reload reads the truth after these faults */
	while (s < t) {
		struct mapping *m = model_find(p, s), *above;
		uint64_t to;

		if (!m) {
			above = model_find_ge(p, s);
			if (above && (above->flags & MF_GROWSDOWN) && !(flags & EVF_KERNEL)) {
				/* The stack grows down to the faulting page (expand_stack). */
				model_grow_down(p, above, s);
				m = above;
			} else {
				/* Addresses our layout does not know: re-read it, then look. */
				to = above && mapping_start(above) < t ? mapping_start(above) : t;
				table_pend(e, p, PEND_MAPS);
				table_queue_scan(e, p, s, to);
				s = to;
				continue;
			}
		}
		to = mapping_end(m) < t ? mapping_end(m) : t;
		faults_in(e, p, m, s, to, flags);
		s = to;
	}
}

void engine_faults_flush(struct engine *e)
{
	struct fault_run r = e->run;

	if (r.start == r.end)
		return;
	e->run.start = e->run.end = 0;
	apply_faults(e, (pid_t)r.tgid, r.start, r.end, r.flags);
}

static void push_fault(struct engine *e, const struct ev_fault *ev)
{
	struct fault_run *r = &e->run;
	uint64_t page = ev->addr >> PAGE_SHIFT_4K;

	if (page == r->end && r->start != r->end && ev->tgid == r->tgid && ev->flags == r->flags) {
		r->end++;
		return;
	}
	engine_faults_flush(e);
	*r = (struct fault_run){ .tgid = ev->tgid, .flags = ev->flags, .start = page,
				 .end = page + 1 };
}

static uint64_t pages_up(uint64_t bytes)
{
	return (bytes + PAGE_SIZE_4K - 1) >> PAGE_SHIFT_4K;
}

static uint32_t prot_perms(uint64_t prot, uint64_t flags)
{
	uint32_t perms = 0;

	if (prot & PROT_READ)
		perms |= MP_READ;
	if (prot & PROT_WRITE)
		perms |= MP_WRITE;
	if (prot & PROT_EXEC)
		perms |= MP_EXEC;
	if ((flags & MAP_SHARED_VALIDATE) == MAP_SHARED ||
	    (flags & MAP_SHARED_VALIDATE) == MAP_SHARED_VALIDATE)
		perms |= MP_SHARED;
	return perms;
}

static bool is_err(int64_t ret)
{
	return ret < 0 && ret >= -MAX_ERRNO;
}

/*
 * A mapping a syscall record adds is not scanned: in sample and exact mode its faults show
 * in the process's counters at the next tick (poll_counters), which rescans it.  Unless the
 * counters were read after the syscall returned and before its record was applied (the
 * record waited in the ring while a tick polled, or a full scan read the counters, without
 * the mapping in the model): faults on it in between are in that baseline, and nothing would
 * ever look at them.  A dynamic loader maps a library and faults it at once: libc's pages
 * were seen missing this way, with --no-reconcile, after an exec under load.  Then the new
 * range is scanned now.
 */
static void scan_if_counted(struct engine *e, struct proc *p, const struct ev_syscall *ev,
			    uint64_t start, uint64_t end)
{
	if (faults_by_counters(e) && ps(p)->counters_seen && ev->ts <= ps(p)->c_ns)
		table_queue_scan(e, p, start, end);
}

static void apply_mmap(struct engine *e, struct proc *p, const struct ev_syscall *ev)
{
	uint64_t addr = ev->ret, len = ev->args[1], prot = ev->args[2], flags = ev->args[3];
	uint64_t start = addr >> PAGE_SHIFT_4K, end = start + pages_up(len);
	struct mapping_attrs a = { .perms = prot_perms(prot, flags) };
	bool anon = flags & MAP_ANONYMOUS;

	if (is_err(ev->ret) || !len)
		return;
	a.kind = anon ? ((a.perms & MP_SHARED) ? MK_SHMEM : MK_ANON) : MK_FILE;
	if (!anon) {
		a.offset = ev->args[5];
		a.flags |= MF_NEEDS_NAME;	/* the path comes from /proc/PID/maps */
	}
	if (flags & MAP_GROWSDOWN)
		a.flags |= MF_GROWSDOWN;
	if (flags & MAP_HUGETLB)
		a.flags |= MF_HUGETLB;
	if ((flags & MAP_LOCKED) || ps(p)->locked_future)
		a.flags |= MF_LOCKED;
	if (model_map(p, start, end, &a)) {
		table_pend(e, p, PEND_MAPS);
		return;
	}
	HOOK(e, mapped, p, start, end);
	if (!anon || (flags & MAP_HUGETLB))
		table_pend(e, p, PEND_MAPS);		/* names, shmem vs file, hugetlb details */
	if (flags & (MAP_POPULATE | MAP_LOCKED) || ps(p)->locked_future)
		queue_scan_populated(e, p, start, end);	/* populated without faults */
	else
		scan_if_counted(e, p, ev, start, end);
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
		table_pend(e, p, PEND_MAPS);
		table_queue_scan(e, p, new, new + new_len);
		return;
	}
	if (model_remap(p, old, old_len, new, new_len, flags & MREMAP_DONTUNMAP))
		table_pend(e, p, PEND_MAPS);
	if (new != old)
		HOOK(e, moved, p, old, new, old_len < new_len ? old_len : new_len);
	else if (new_len < old_len)
		HOOK(e, zapped, p, old + new_len, old + old_len, true);
	HOOK(e, mapped, p, new, new + new_len);
	/* The moved pages are exact; a scan of the result costs little and absorbs any
	 * race with a fault that was still in flight when the mapping moved. */
	table_queue_scan(e, p, new, new + new_len);
	if (flags & MREMAP_DONTUNMAP)
		table_queue_scan(e, p, old, old + old_len);
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
	else if (end > start)
		scan_if_counted(e, p, ev, start, end);
}

static void apply_madvise(struct engine *e, struct proc *p, uint64_t addr, uint64_t len,
			  int advice, int64_t ret)
{
	uint64_t start = addr >> PAGE_SHIFT_4K, end = start + pages_up(len);

	/* -ENOMEM means part of the range was unmapped: the advice applied to the rest. */
	if (ret != 0 && ret != -ENOMEM)
		return;
	switch (advice) {
	case MADV_NORMAL:
	case MADV_RANDOM:
	case MADV_SEQUENTIAL:
	case MADV_DONTFORK:
	case MADV_DOFORK:
	case MADV_DONTDUMP:
	case MADV_DODUMP:
	case MADV_WIPEONFORK:
	case MADV_KEEPONFORK:
	case MADV_COLD:
	case MADV_MERGEABLE:		/* KSM merges later, unseen: rss reconciliation */
	case MADV_UNMERGEABLE:
		return;
	case MADV_HUGEPAGE:
		model_set_flags(p, start, end, MF_HUGEPAGE, MF_NOHUGEPAGE);
		return;
	case MADV_NOHUGEPAGE:
		model_set_flags(p, start, end, MF_NOHUGEPAGE, MF_HUGEPAGE);
		return;
	case MADV_DONTNEED:
	case MADV_DONTNEED_LOCKED:
	case MADV_REMOVE:
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
	if (e->src->pidfd_target(e->src_ctx, ev->tgid, ev->args[0], &target))
		return;
	t = engine_find(e, target);
	if (t && !t->exited)
		table_pend(e, t, PEND_RECONCILE);
}

static void apply_syscall(struct engine *e, const struct ev_syscall *ev)
{
	struct proc *p = table_proc_for(e, ev->tgid);
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
		if (ev->args[0] & MCL_FUTURE)
			ps(p)->locked_future = true;
		if (ev->args[0] & MCL_CURRENT)
			table_pend(e, p, PEND_RECONCILE);
		break;
	case SYS_SHMAT:
	case SYS_SHMDT:
	case SYS_REMAP_FILE_PAGES:
		if (is_err(ev->ret))
			break;
		/* Sizes live in the kernel's shm segment: read the layout, scan what changed. */
		table_pend(e, p, PEND_MAPS);
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
		if (e->src->read_tgid(e->src_ctx, ev->tgid, &tgid) == 0 && tgid != (pid_t)ev->tgid)
			return;
	}
	if (parent && parent->exited)
		parent = NULL;
	if (!parent && !table_filtered(e))
		parent = table_proc_for(e, ev->ptgid);	/* whole system: model the parent too */
	if (ev->flags & EVP_SHARED_MM) {
		/* vfork/CLONE_VM: the child's faults change the parent's memory until it execs. */
		if (parent)
			table_alias_add(e, ev->tgid, parent->pid);
		return;
	}
	if (!parent) {
		/* With a filter every fork is reported: a new process may pass it. */
		if (filter_active(e->o.filter) && e->src->passes(e->src_ctx, ev->tgid, ev->comm))
			table_watch_new(e, ev->tgid, ev->comm);
		return;
	}
	if (e->o.npids && !e->o.follow_children)
		return;
	/* The child starts with the parent's picture (anonymous pages are shared copy-on-write)
	 * and is rescanned at the end of the batch: file mappings' PTEs are not copied at
	 * fork, and MADV_DONTFORK/WIPEONFORK ranges differ. */
	c = !(parent->pending & PEND_RELOAD) ? proc_clone(parent, ev->tgid) : proc_new(ev->tgid);
	if (!c || !table_attach_pstate(e, c))
		return;
	memcpy(c->comm, ev->comm, sizeof(c->comm));
	c->comm[sizeof(c->comm) - 1] = 0;
	c->ppid = parent->pid;
	c->ready = true;
	table_add(e, c);
	table_pend(e, c, PEND_RELOAD);
	/* Both now map the anonymous pages copy-on-write: read them at the next pass.  The
	 * parent's figures are not the child's (its file pages are not even mapped yet). */
	share_free(c->share);
	c->share = NULL;
	if (ps(c)->sharing && ps(parent)->sharing) {
		ps(c)->sharing->due = true;
		ps(parent)->sharing->anon = ps(parent)->sharing->due = true;
		if (ps(parent)->sharing->build)
			ps(parent)->sharing->build->forked = true;
	}
}

static void apply_exec(struct engine *e, const struct ev_proc *ev)
{
	struct proc *p;

	e->src->forget(e->src_ctx, ev->tgid);	/* its code and chunks are gone */

	if (filter_active(e->o.filter)) {
		/* A new image may pass the filter (--comm) or stop passing it. */
		bool match = e->src->passes(e->src_ctx, ev->tgid, ev->comm);

		p = engine_find(e, ev->tgid);
		if (p && !p->exited && !match) {
			table_unwatch(e, p);
			return;
		}
		if (!p && match) {
			table_watch_new(e, ev->tgid, ev->comm);
			return;
		}
		if (!p)
			return;
	}

	if (e->naliases && table_alias_parent(e, ev->tgid)) {
		table_alias_del(e, ev->tgid);
		p = table_new_proc(e, ev->tgid, false);
		if (p)
			memcpy(p->comm, ev->comm, sizeof(p->comm));
		return;
	}
	p = table_proc_for(e, ev->tgid);
	if (!p)
		return;
	/* A new address space: the old pagemap fd points at the old mm. */
	proc_reset(p);
	table_close_pages(e, p);
	ps(p)->nscan = 0;
	ps(p)->nchecks = 0;
	ps(p)->locked_future = false;
	/* A new mm shares no anonymous page until it forks (or KSM merges one). */
	share_build_drop(ps(p));
	if (ps(p)->sharing) {
		ps(p)->sharing->anon = false;
		ps(p)->sharing->due = true;
	}
	HOOK(e, exec, p);
	memcpy(p->comm, ev->comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = 0;
	table_pend(e, p, PEND_RELOAD);
}


static void apply_exit(struct engine *e, const struct ev_proc *ev)
{
	struct proc *p = engine_find(e, ev->tgid);

	if (e->naliases)
		table_alias_del(e, ev->tgid);
	if (!p || p->exited)
		return;
	table_mark_exited(e, p);
}


/* One ring-buffer record, in ring order. */
void engine_apply_record(struct engine *e, const void *data, size_t size)
{
	uint8_t kind = *(const uint8_t *)data;

	e->st.events++;
	if (kind < EV_KIND_MAX)
		e->st.events_by_kind[kind]++;
	if (kind != EV_FAULT)
		engine_faults_flush(e);	/* the faults before it, first */
	switch (kind) {
	case EV_FAULT:
		if (size >= sizeof(struct ev_fault))
			push_fault(e, data);
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
	/* EV_STACK: --stacks' table, engine.c's (on_event). */
	}
}
