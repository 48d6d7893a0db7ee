// SPDX-License-Identifier: GPL-2.0
/*
 * The batch end (engine_int.h): what the records asked for, read from the system --
 * layouts (/proc/PID/maps), pages (pagemap) -- through e->src, one pass per process.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "engine/engine_int.h"
#include "lib/log.h"

#define SCAN_CHUNK	16384ULL	/* pages per pagemap pass: at most 8192 runs buffered */
#define PREAD_MAX_PAGES	(16ULL << 20)	/* 64 GiB: the largest mapping read entry by entry */

/* --- scanning --- */

static int pagemap_fd(struct engine *e, struct proc *p)
{
	struct pstate *s = ps(p);

	if (s->pagemap_fd < 0)
		s->pagemap_fd = e->src->open_pages(e->src_ctx, io(p));
	return s->pagemap_fd;
}

static void collect_run(uint64_t start, uint64_t end, uint32_t cats, void *arg)
{
	struct engine *e = arg;

	if (e->runs_lost)
		return;
	/* A run left out would read as "not resident": when the runs cannot grow, the whole
	 * pass is dropped instead (scan_range fails, the process is rescanned). */
	if (e->nruns == e->capruns && e->test_fail_runs > 0 && e->capruns) {
		e->test_fail_runs--;	/* a growth that fails, for the test */
		e->runs_lost = true;
		return;
	}
	if (array_reserve(e->runs, e->nruns, e->capruns, 1024)) {
		e->runs_lost = true;
		return;
	}
	e->runs[e->nruns++] = (struct scan_run){
		start, end, (cats & PMC_PRESENT) ? PS_RESIDENT : PS_SWAPPED
	};
}

/* One pagemap pass over [s, t), which holds `pages` pages of mappings, into the model:
 * pages corrected, or -errno. */
static int64_t scan_pass(struct engine *e, struct proc *p, int fd, uint64_t s, uint64_t t,
			 uint64_t pages)
{
	int err;

	e->nruns = 0;
	e->runs_lost = false;
	err = e->src->scan_pages(e->src_ctx, fd, s, t, collect_run, e);
	if (!err && e->runs_lost)
		err = -ENOMEM;
	if (err)
		return err;
	e->st.scanned_pages += pages;
	return model_apply_scan(p, s, t, e->runs, e->nruns, e->heat_scan ? e->now_ns : 0);
}

/* Scans [start, end) (one mapping, or neighbours and the holes between them, which have no
 * pages) and replaces the model's states with
 * the truth, SCAN_CHUNK pages at a time so the run buffer stays small whatever the layout
 * (every other page resident means one run per two pages).  Returns pages corrected, or
 * -errno. */
static int64_t scan_range(struct engine *e, struct proc *p, uint64_t start, uint64_t end)
{
	int fd = pagemap_fd(e, p);
	uint64_t s, t, total = 0;
	int64_t r;

	if (fd < 0)
		return fd;
	if (!e->use_scan && end - start > PREAD_MAX_PAGES) {
		/* Without PAGEMAP_SCAN every page costs an 8-byte read, holes included: a
		 * sanitizer's 16 TiB shadow reservation would take hours.  Say "unknown". */
		struct scan_run u = { start, end, PS_UNTRACKED };

		return model_apply_scan(p, start, end, &u, 1, 0);
	}
	for (s = start; s < end; s = t) {
		/* A quit is answered between chunks: read entry by entry (no PAGEMAP_SCAN),
		 * a sanitizer's dozens of 56 GiB reservations take seconds to minutes.  The
		 * process is left marked for a rescan (scan_failed), like any failed scan. */
		if (engine_quitting())
			return -EINTR;
		t = (s | (SCAN_CHUNK - 1)) + 1;
		if (t > end)
			t = end;
		r = scan_pass(e, p, fd, s, t, t - s);
		if (r < 0)
			return r;
		total += r;
		table_yield(e);	/* a big process: let a reader in between chunks */
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
void scan_rss_gap_check(struct engine *e, struct proc *p)
{
	struct pstate *s = ps(p);
	uint64_t rss;

	/* No event and the same rss: the gap cannot have moved (most processes, most ticks). */
	if (!s->rss_gap_dirty && !s->events_tick)
		return;
	if (!s->counters_seen || !s->rss_gap_seen || p->exited || !p->ready || p->pending ||
	    e->src->read_rss(e->src_ctx, io(p), &rss))
		return;
	s->rss_gap_dirty = false;
	if (rss != s->c.rss) {
		/* A full rescan of a process that keeps moving costs what sample mode pays for
		 * it: at most every VERIFY_MIN_NS, and one that pauses is decided at once. */
		s->rss_gap_dirty = true;
		if (e->now_ns - s->last_full_ns >= VERIFY_MIN_NS)
			table_pend(e, p, PEND_VERIFY);
	} else if (model_resident(p) - (int64_t)rss != s->rss_gap) {
		table_pend(e, p, PEND_RECONCILE);
	}
}


static int64_t scan_all(struct engine *e, struct proc *p)
{
	struct pstate *s = ps(p);
	struct mapping *m, *next;
	int64_t total = 0, r;

	/* The counters the next tick compares with are those from before this scan: a fault
	 * during the scan shows as a change then. */
	if (e->f.hook[HOOK_RSS] == AT_NONE && e->src->read_counters(e->src_ctx, io(p), &s->c) == 0) {
		s->counters_seen = true;
		s->c_ns = engine_now_ns();
	}

	for (m = model_first(p); m; m = next) {
		uint64_t end = mapping_end(m), pages = end - mapping_start(m);

		next = model_next(m);
		if (m->kind == MK_VSYSCALL)
			continue;
		/* Neighbours holding SCAN_CHUNK pages of mappings between them are one
		 * PAGEMAP_SCAN walk, whatever the holes between them (the kernel's walk goes
		 * from VMA to VMA): a small process is one ioctl, not one per mapping -- at
		 * start with 5,000 processes they were half of mevitop's CPU.  The runs come
		 * from those pages only, so their buffer stays bounded as before.  Bounded by
		 * the address span instead (<= SCAN_CHUNK), a sleeper took 4 walks: 13.7 µs of
		 * ioctls against 11.5 in one, the same runs. */
		while (e->use_scan && next && next->kind != MK_VSYSCALL &&
		       pages + (mapping_end(next) - mapping_start(next)) <= SCAN_CHUNK) {
			pages += mapping_end(next) - mapping_start(next);
			end = mapping_end(next);
			next = model_next(next);
		}
		if (e->use_scan && pages <= SCAN_CHUNK) {
			r = pagemap_fd(e, p);
			if (r >= 0)
				r = scan_pass(e, p, (int)r, mapping_start(m), end, pages);
		} else {
			r = scan_range(e, p, mapping_start(m), end);
		}
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

			table_queue_scan(c->e, c->p, cur, stop);
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

/* The layout of pid, counted (maps_reads_per_sec). */
static int read_layout(struct engine *e, pid_t pid, maps_cb cb, void *arg)
{
	e->st.maps_reads++;
	return e->src->read_layout(e->src_ctx, pid, cb, arg);
}

/* Models a process from scratch: layout from /proc/PID/maps, pages from pagemap. */
/* Tell the source that p's layout is known (what it held back for it may be placed). */
static void layout_known(struct engine *e, struct proc *p)
{
	if (e->src->layout_known)
		e->src->layout_known(e->src_ctx, p);
}

static int reload_proc(struct engine *e, struct proc *p)
{
	struct layout_ctx c = { .e = e, .p = p, .reload = true };
	int64_t r;
	int err;

	proc_reset(p);
	ps(p)->nscan = 0;
	ps(p)->nchecks = 0;
	err = table_choose_io(e, p);
	if (err)
		return err;
	err = read_layout(e, io(p), layout_entry, &c);
	if (err)
		return err;
	if (!model_count_maps(p))
		return -ESRCH;	/* a kernel thread or a zombie: no address space */
	if (want_vmflags(e, p))
		e->src->read_vmflags(e->src_ctx, io(p), vmflags_entry, &c);
	e->src->read_start_brk(e->src_ctx, io(p), &p->brk_start);
	if (!p->comm[0])
		e->src->read_comm(e->src_ctx, p->pid, p->comm, sizeof(p->comm));
	e->src->read_uid(e->src_ctx, p->pid, &p->uid);
	ps(p)->born = 0;
	if (e->src->read_counters(e->src_ctx, p->pid, &ps(p)->c) == 0) {
		ps(p)->born = ps(p)->c.start_time;	/* the process's, not io_pid's */
		p->ppid = ps(p)->c.ppid;
	}
	r = scan_all(e, p);
	if (r < 0)
		return r;
	p->ready = true;
	layout_known(e, p);
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
void scan_flush_pending(struct engine *e)
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
			err = reload_proc(e, p);
			ps(p)->load_err = err;
		} else {
			if (what & PEND_MAPS)
				err = relayout(e, p);
			if ((what & PEND_MAPS) && !err)	/* mappings new to it */
				layout_known(e, p);
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
		table_yield(e);
		if (err == -ESRCH || err == -ENOENT) {
			/* Gone (or never had an address space): its exit record may follow. */
			if (!p->ready) {
				if (err == -ESRCH && (what & PEND_RELOAD))
					table_set_no_mm(e, p->pid);
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
			table_queue_scan(e, e->retry[i], s->checks[k].window.start,
				   s->checks[k].window.end);
	}
	e->nretry = 0;
}

