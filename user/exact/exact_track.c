// SPDX-License-Identifier: GPL-2.0
/*
 * exact_track.c - exact mode's engine hooks: what the userfaultfds say, applied to the model.
 *
 * Everything here runs in the engine's thread with the engine lock held (engine.h).
 *
 * Order.  The server queues records in the order it read them, which per userfaultfd is the
 * kernel's order.  The engine applies its BPF records before calling the hooks, so a record
 * is applied only if the server read it before the previous hook call ended (`bound_ns`):
 * every mm syscall that returned before such a touch has then been applied by the engine,
 * and a touch that follows a MADV_DONTNEED never lands before it.  A touch reported for a
 * mapping that is no longer a registered one (unmapped and mapped again meanwhile) is not
 * applied; the REMOVE/UNMAP/REMAP record that made it stale queues a scan of its range, so
 * the model converges on pagemap whatever the interleaving.
 *
 * Registration.  A process's private anonymous mappings are registered when its
 * userfaultfd is handed over (from /proc/PID/maps, while it is stopped), again from the
 * model after each reload (new process, exec: idempotent, and it sets MF_UFFD), and new
 * ones from the `mapped` hook, i.e. from the engine's BPF mmap/brk/mremap records.  The
 * pages a new mapping had when it was registered were touched before mevitop could see
 * them: they are counted (prereg_pages) and scanned.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/array.h"
#include "lib/clock.h"
#include "exact/exact_int.h"
#include "exact/exact_stats.h"
#include "lib/log.h"
#include "kernel/pagemap.h"
#include "kernel/procfs.h"
#include "stacks/stacks.h"
#include "lib/page.h"

/* ---- lookups ---- */

static uint32_t xfd_key(const void *elem)
{
	return ((const struct xfd *)elem)->id;
}

static uint32_t xp_key(const void *elem)
{
	return (uint32_t)((const struct xproc *)elem)->pid;
}

static struct xfd *xfd_find(struct exact *x, uint32_t id)
{
	return xtab_find(&x->eng.fds, id);
}

static struct xfd *xfd_add(struct exact *x, uint32_t id, int fd, pid_t pid, pid_t parent)
{
	struct xfd *f = calloc(1, sizeof(*f));

	if (!f) {
		close(fd);
		return NULL;
	}
	f->id = id;
	f->fd = fd;
	f->pid = pid;
	f->parent = parent;
	f->born_ns = clock_mono_ns();
	x->eng.fds.key = xfd_key;
	if (xtab_add(&x->eng.fds, f)) {	/* indexed by f->id: set first */
		free(f);
		close(fd);
		return NULL;
	}
	return f;
}

static void xfd_del(struct exact *x, struct xfd *f)
{
	xtab_del(&x->eng.fds, f);
	close(f->fd);
	pageset_free(f->inherit);
	free(f);
}

static struct xproc *xp_find(struct exact *x, pid_t pid)
{
	return xtab_find(&x->eng.procs, (uint32_t)pid);
}

static struct xproc *xp_get(struct exact *x, pid_t pid)
{
	struct xproc *xp = xp_find(x, pid);

	if (xp)
		return xp;
	xp = calloc(1, sizeof(*xp));
	if (!xp)
		return NULL;
	xp->pid = pid;
	xp->pagemap_fd = -1;
	x->eng.procs.key = xp_key;
	if (xtab_add(&x->eng.procs, xp)) {
		free(xp);
		return NULL;
	}
	return xp;
}

/* Forgets what was learnt about the address space (exec): the uffd, the scanner's state. */
static void xp_reset_mm(struct exact *x, struct xproc *xp)
{
	if (xp->pagemap_fd >= 0)
		close(xp->pagemap_fd);
	xp->pagemap_fd = -1;
	pageset_free(xp->seen);
	xp->seen = NULL;
	xp->seeded = false;
	xp->nfresh = 0;
	xp->nyoung = 0;
	xp->npend = 0;
}

static void xp_del(struct exact *x, struct xproc *xp)
{
	xtab_del(&x->eng.procs, xp);
	if (xp->xf)
		xfd_del(x, xp->xf);
	xp_reset_mm(x, xp);
	pageset_free(xp->inherit);
	free(xp->fresh);
	free(xp->young);
	free(xp->pend);
	free(xp);
}

/* ---- which mappings ---- */

/* When the list of p's ranges cannot even be made: the engine scans all of p instead
 * (it clips to mappings), so no page is left wrong. */
static void scan_all_of(struct exact *x, struct proc *p)
{
	engine_queue_scan(x->e, p, 0, ALL_PAGES);
}

/* ---- counting pages with our own pagemap reader ---- */

struct count_ctx {
	uint64_t pages;
};

static void count_run(uint64_t start, uint64_t end, uint32_t cats, void *arg)
{
	struct count_ctx *c = arg;

	c->pages += end - start;
}

static uint64_t count_present(struct exact *x, struct xproc *xp, uint64_t start, uint64_t end)
{
	struct count_ctx c = { 0 };
	int fd = mappings_pagemap_fd(xp);

	if (fd >= 0)
		pagemap_scan(fd, start, end, x->use_scan, count_run, &c);
	return c.pages;
}

/* ---- registration ---- */


/* Registers the eligible, not yet registered parts of [start, end) of p with xp's uffd. */
static void register_range(struct exact *x, struct xproc *xp, struct proc *p, uint64_t start,
			   uint64_t end, bool fresh_mapping)
{
	struct span *v;
	size_t n, i;

	if (!xp->xf)
		return;
	if (mappings_collect(p, start, end, false, &v, &n)) {
		x->eng.st.behind++;		/* left to the engine's pagemap tracking */
		return;
	}
	for (i = 0; i < n; i++) {
		uint64_t s = v[i].start, t = v[i].end, pre;

		if (uffd_register(xp->xf->fd, s << PAGE_SHIFT_4K, (t - s) << PAGE_SHIFT_4K, x->reg_mode,
				  NULL)) {
			log_debug("process %d: %s", p->pid, uffd_why());
			continue;
		}
		model_set_flags(p, s, t, MF_UFFD, 0);
		if (!fresh_mapping)
			continue;
		/* Touched between the mmap and now: accounted by a scan, not seen one by one. */
		pre = count_present(x, xp, s, t);
		x->eng.st.prereg_pages += pre;
		if (pre > x->eng.st.prereg_max)
			x->eng.st.prereg_max = pre;
		engine_queue_scan(x->e, p, s, t);
		if (x->variant == EXACT_FAST)
			fast_add_young(x, xp, s, t);
	}
	free(v);
}

/*
 * New mappings (the `mapped` hook) are registered at the end of a drain, newest first, for
 * REG_BUDGET_NS per drain at most: each UFFDIO_REGISTER, and the scan after it, takes the
 * target's mmap lock, against every thread of a target that maps and unmaps flat out
 * (16 threads doing mmap, touch 16 pages, munmap kept the engine in one drain for minutes,
 * deaf to q and SIGTERM).  Most such mappings are gone by then, and cost nothing: the
 * model no longer has them.  A mapping still waiting after PEND_MAX_NS, or beyond PEND_MAX
 * waiting ones, is left to the engine's pagemap tracking ("tracker": "pagemap") and
 * counted in stats.exact.behind: exact mode says it cannot keep up instead of stalling.
 */
#define REG_BUDGET_NS	2000000ull
#define PEND_MAX_NS	100000000ull
#define PEND_MAX	1024

static void add_pending(struct exact *x, struct xproc *xp, uint64_t s, uint64_t t)
{
	struct young *last = xp->npend ? &xp->pend[xp->npend - 1] : NULL;

	if (last && s <= last->end && last->start <= t) {
		/* The same place again (an unmapped range reused), or a neighbour. */
		last->start = s < last->start ? s : last->start;
		last->end = t > last->end ? t : last->end;
		last->born_ns = clock_mono_ns();
		return;
	}
	if (xp->npend >= PEND_MAX || array_reserve(xp->pend, xp->npend, xp->cappend, 16)) {
		x->eng.st.behind++;
		return;
	}
	xp->pend[xp->npend++] = (struct young){ s, t, clock_mono_ns() };
}

static void register_pending(struct exact *x, struct xproc *xp, struct proc *p,
			     uint64_t deadline)
{
	uint64_t now;
	size_t i, keep = 0;

	while (xp->npend && clock_mono_ns() < deadline && !engine_quitting()) {
		struct young y = xp->pend[--xp->npend];

		register_range(x, xp, p, y.start, y.end, true);
	}
	now = clock_mono_ns();
	for (i = 0; i < xp->npend; i++) {
		if (now - xp->pend[i].born_ns > PEND_MAX_NS)
			x->eng.st.behind++;
		else
			xp->pend[keep++] = xp->pend[i];
	}
	xp->npend = keep;
}

/* ---- binding userfaultfds to processes ---- */

/* Registers everything p has and, fast, takes the picture later scans compare with. */
static void xp_start(struct exact *x, struct xproc *xp, struct proc *p, bool scan_now)
{
	struct span *v;
	size_t n, i;

	if (!p || !p->ready || p->exited || !xp->xf)
		return;
	register_range(x, xp, p, 0, ALL_PAGES, false);
	if (scan_now) {
		/* Touched since the engine last looked (between its scan and the registration). */
		if (mappings_collect(p, 0, ALL_PAGES, true, &v, &n))
			scan_all_of(x, p);
		for (i = 0; i < n; i++)
			engine_queue_scan(x->e, p, v[i].start, v[i].end);
		free(v);
	}
	if (x->variant == EXACT_FAST && !xp->seeded)
		fast_scan(x, xp, p, false);
}

static void bind(struct exact *x, struct xfd *f, pid_t pid)
{
	struct xproc *xp = xp_get(x, pid);

	f->pid = pid;
	if (!xp || xp->xf == f)
		return;
	if (xp->xf) {
		/* Two children of one parent forked at once and were guessed the wrong way
		 * round: the thread id of a fault is the truth. */
		xp->xf->pid = 0;
	}
	xp->xf = f;
	xp_reset_mm(x, xp);
	if (f->inherit) {
		/* A forked child starts from its parent's picture: what it touches after the
		 * fork are its first touches, even before we knew its pid. */
		xp->seen = f->inherit;
		xp->seeded = true;
		f->inherit = NULL;
	}
	xp_start(x, xp, engine_find(x->e, pid), true);
}

static pid_t read_ppid(pid_t pid)
{
	struct proc_counters c;

	return procfs_read_counters(pid, &c) ? 0 : c.ppid;
}

/* A forked child without a uffd yet: the oldest unidentified one its parent gave birth to. */
static void identify_child(struct exact *x, struct proc *p)
{
	struct xfd *f, *best = NULL;
	pid_t ppid = read_ppid(p->pid);
	size_t i;

	if (!ppid)
		return;
	for (i = 0; i < x->eng.fds.n; i++) {
		f = x->eng.fds.v[i];
		if (!f->pid && f->parent == ppid && (!best || f->born_ns < best->born_ns))
			best = f;
	}
	if (best)
		bind(x, best, p->pid);
}

/* The other way round: a fork record applied after the engine modelled the child. */
static void identify_children(struct exact *x, pid_t parent)
{
	struct proc **procs;
	size_t n, i;

	procs = engine_procs(x->e, &n);
	for (i = 0; i < n; i++) {
		struct xproc *xp = xp_find(x, procs[i]->pid);

		if (procs[i]->exited || !procs[i]->ready || (xp && (xp->xf || xp->awaiting)) ||
		    procs[i]->pid == parent || read_ppid(procs[i]->pid) != parent)
			continue;
		identify_child(x, procs[i]);
	}
}

/* ---- applying records ---- */

static unsigned hist_bucket(uint32_t ns)
{
	uint32_t us = ns / 1000;
	unsigned b = 0;

	while (us && b < EXACT_HIST_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	return b;
}

static void apply_touch(struct exact *x, struct xfd *f, const struct xrec *r)
{
	uint64_t page = r->a >> PAGE_SHIFT_4K;
	struct mapping *m;
	struct proc *p;
	pid_t tgid;

	if (!f->pid && r->tid && procfs_read_tgid(r->tid, &tgid) == 0)
		bind(x, f, tgid);
	x->eng.st.touches++;
	x->eng.st.touches_interval++;
	x->eng.st.hist[hist_bucket(r->lat_ns)]++;
	if (r->lat_ns > x->eng.st.lat_max_ns)
		x->eng.st.lat_max_ns = r->lat_ns;
	touchlog_add(x, f->pid, r->tid, r->a, r->ts_ns, r->flags & XT_WRITE);
	p = f->pid ? engine_find(x->e, f->pid) : NULL;
	m = p && p->ready && !p->exited ? model_find(p, page) : NULL;
	if (!m || !(m->flags & MF_UFFD)) {
		/* Not read yet (its scan finds the page), or stale: its REMOVE/UNMAP/REMAP
		 * record rescans the range.  --stacks counts it, so that every first touch
		 * is either placed or said to be dropped. */
		if (engine_stacks(x->e))
			stacks_first_touch_unplaced(engine_stacks(x->e));
		return;
	}
	model_set_page(p, page, PS_RESIDENT);
	heat_add(&p->heat, page, 1.0f, r->ts_ns);
	if (engine_stacks(x->e))	/* --stacks: this touch's fault's stack */
		stacks_on_first_touch(engine_stacks(x->e), p, r->tid, r->a, r->ts_ns);
}

/* REMAP, REMOVE, UNMAP: the engine applies the syscalls from BPF; here the scanner's
 * picture follows, and the range is rescanned (it may hold stale touches). */
static void apply_layout(struct exact *x, struct xfd *f, const struct xrec *r)
{
	struct proc *p = f->pid ? engine_find(x->e, f->pid) : NULL;
	struct xproc *xp = f->pid ? xp_find(x, f->pid) : NULL;
	uint64_t s = r->a >> PAGE_SHIFT_4K, t = page_end_4k(r->b);

	if (r->kind == XR_REMAP) {
		x->eng.st.remap++;
		s = r->b >> PAGE_SHIFT_4K;
		t = page_end_4k(r->b + r->c);
		if (xp && xp->seen && xp->xf == f)
			pageset_move_range(xp->seen, r->a >> PAGE_SHIFT_4K,
					   page_end_4k(r->a + r->c), s);
	} else {
		if (r->kind == XR_REMOVE)
			x->eng.st.remove++;
		else
			x->eng.st.unmap++;
		if (xp && xp->seen && xp->xf == f) {
			pageset_remove_range(xp->seen, s, t);
			fast_add_fresh(x, xp, s, t);
		}
	}
	if (p && p->ready && !p->exited)
		engine_queue_scan(x->e, p, s, t);
}

struct add_ctx {
	struct pageset *set;
};

static void add_run(uint64_t start, uint64_t end, uint32_t cats, void *arg)
{
	pageset_add_range(((struct add_ctx *)arg)->set, start, end);
}

/* Fast: what a forked child is born with, as far as we can tell now: the parent's pages at
 * its last scan and at this moment (pages it touched between its last scan and the fork
 * are in both it and the child, and are not the child's first touches). */
static struct pageset *inherited(struct exact *x, pid_t parent)
{
	struct xproc *xp = parent ? xp_find(x, parent) : NULL;
	struct proc *p = parent ? engine_find(x->e, parent) : NULL;
	struct add_ctx c;
	struct span *v;
	size_t n, i;
	int fd;

	if (!xp || !xp->seen || !p || (fd = mappings_pagemap_fd(xp)) < 0)
		return NULL;
	c.set = pageset_clone(xp->seen);
	if (!c.set)
		return NULL;
	if (mappings_collect(p, 0, ALL_PAGES, true, &v, &n)) {
		pageset_free(c.set);
		return NULL;	/* not known: the child starts from a scan of its own */
	}
	for (i = 0; i < n; i++)
		pagemap_scan(fd, v[i].start, v[i].end, x->use_scan, add_run, &c);
	free(v);
	return c.set;
}

static void apply(struct exact *x, const struct xrec *r)
{
	struct xfd *f = xfd_find(x, r->id), *child;
	struct xproc *xp;

	if (r->kind == XR_FORK) {
		/* The child's pid does not exist yet when the event is read (dup_mmap runs
		 * before it is allocated): learnt later from a fault or from its parent. */
		x->eng.st.fork++;
		child = xfd_add(x, r->tid, r->fd, 0, f ? f->pid : 0);
		if (child && x->variant == EXACT_FAST)
			child->inherit = inherited(x, child->parent);
		if (child && child->parent)
			identify_children(x, child->parent);
		return;
	}
	if (!f) {
		x->eng.st.stale++;	/* its process exited or execed */
		return;
	}
	switch (r->kind) {
	case XR_TOUCH:
		apply_touch(x, f, r);
		break;
	case XR_REMAP:
	case XR_REMOVE:
	case XR_UNMAP:
		apply_layout(x, f, r);
		break;
	case XR_GONE:
		x->eng.st.gone++;
		xp = f->pid ? xp_find(x, f->pid) : NULL;
		if (xp && xp->xf == f)
			xp->xf = NULL;
		xfd_del(x, f);
		break;
	}
}

/* inject.c looks for a `syscall` instruction in the executable mappings (the vDSO first)
 * through /proc/PID/mem, one byte past each page it reads: that brings pages in without a
 * fault of the process, which the engine would never hear of. */
static void rescan_text(struct exact *x, struct proc *p)
{
	struct span *v = NULL;
	struct mapping *m;
	size_t n = 0, cap = 0, i;

	for (m = model_first(p); m; m = model_next(m)) {
		if (!(m->perms & MP_EXEC) || m->kind == MK_VSYSCALL)
			continue;
		if (array_reserve(v, n, cap, 16)) {
			free(v);
			scan_all_of(x, p);
			return;
		}
		v[n++] = (struct span){ mapping_start(m), mapping_end(m) };
	}
	for (i = 0; i < n; i++)
		engine_queue_scan(x->e, p, v[i].start, v[i].end);
	free(v);
}

static void take_adopts(struct exact *x)
{
	struct adopt *a, *next, *rev = NULL;

	pthread_mutex_lock(&x->ctl.lock);
	a = x->ctl.adopts;
	x->ctl.adopts = NULL;
	pthread_mutex_unlock(&x->ctl.lock);
	for (; a; a = next) {		/* oldest first */
		next = a->next;
		a->next = rev;
		rev = a;
	}
	for (a = rev; a; a = next) {
		struct xproc *xp = xp_get(x, a->pid);
		struct proc *p;
		struct xfd *f;

		next = a->next;
		f = xfd_add(x, a->id, a->fd, a->pid, 0);
		p = engine_find(x->e, a->pid);
		p = engine_find(x->e, a->pid);
		if (p && p->ready && !p->exited)
			rescan_text(x, p);
		if (xp && f) {
			if (xp->xf)
				xfd_del(x, xp->xf);
			xp->xf = f;
			xp->awaiting = false;
			xp_reset_mm(x, xp);
			if (xp->inherit) {
				/* Forked (fast): its first touches are what it has that its
				 * parent had not, including those before this attach. */
				xp->seen = xp->inherit;
				xp->seeded = true;
				xp->inherit = NULL;
			}
			x->eng.st.attaches++;
			if (atomic_load(&x->ctl.last_attach_ms) > x->eng.st.attach_ms_max)
				x->eng.st.attach_ms_max = atomic_load(&x->ctl.last_attach_ms);
			xp_start(x, xp, p, true);
		}
		free(a);
	}
}

static void rescan_all(struct exact *x)
{
	struct proc **procs;
	struct span *v;
	size_t n, i, k, nv;

	procs = engine_procs(x->e, &n);
	for (i = 0; i < n; i++) {
		if (!procs[i]->ready || procs[i]->exited)
			continue;
		if (mappings_collect(procs[i], 0, ALL_PAGES, true, &v, &nv))
			scan_all_of(x, procs[i]);
		for (k = 0; k < nv; k++)
			engine_queue_scan(x->e, procs[i], v[k].start, v[k].end);
		free(v);
	}
}

/*
 * Several servers (exact.c) push records in the order they get to it, not always in the
 * order they read them; the drain moves everything from the ring to a staging array, sorts
 * it by read time and applies what is older than the bound, less SETTLE_NS with several
 * servers: a server takes microseconds from reading a fault to queueing it.
 */
#define SETTLE_NS	2000000ull

static void stage(struct exact *x, uint32_t head)
{
	uint32_t tail = atomic_load_explicit(&x->ring.tail, memory_order_relaxed);
	size_t need = x->eng.nstage + (head - tail), i, j;

	if (array_reserve_n(x->eng.stage, need, x->eng.capstage, 1024)) {
		atomic_store(&x->ring.overflow, true);
		return;		/* stays in the ring */
	}
	for (; tail != head; tail++) {
		struct xrec r = x->ring.recs[tail & (XQ_SIZE - 1)];

		/* Insertion by read time: records come nearly sorted, so this is an append. */
		for (i = x->eng.nstage; i > 0 && x->eng.stage[i - 1].ts_ns > r.ts_ns; i--)
			;
		for (j = x->eng.nstage; j > i; j--)
			x->eng.stage[j] = x->eng.stage[j - 1];
		x->eng.stage[i] = r;
		x->eng.nstage++;
	}
	atomic_store_explicit(&x->ring.tail, tail, memory_order_release);
}

static void drain(struct exact *x)
{
	uint32_t head = atomic_load_explicit(&x->ring.head, memory_order_acquire);
	uint64_t limit = x->eng.bound_ns;
	size_t i;

	/* Adopts after loading head: every record below head has a known id (hand_over). */
	take_adopts(x);
	stage(x, head);
	if (x->srv.n > 1)
		limit = limit > SETTLE_NS ? limit - SETTLE_NS : 0;
	for (i = 0; i < x->eng.nstage && x->eng.stage[i].ts_ns < limit; i++)
		apply(x, &x->eng.stage[i]);
	if (i) {
		memmove(x->eng.stage, x->eng.stage + i, (x->eng.nstage - i) * sizeof(*x->eng.stage));
		x->eng.nstage -= i;
	}
	if (atomic_exchange(&x->ring.overflow, false))
		rescan_all(x);
}

/* ---- hooks ---- */

/* Every process's new mappings, within one REG_BUDGET_NS for all. */
static void register_all_pending(struct exact *x)
{
	uint64_t deadline = clock_mono_ns() + REG_BUDGET_NS;
	struct xproc *xp;
	size_t i;

	for (i = 0; i < x->eng.procs.n; i++) {
		struct proc *p;

		xp = x->eng.procs.v[i];
		if (!xp->npend)
			continue;
		p = xp->xf ? engine_find(x->e, xp->pid) : NULL;
		if (p && p->ready && !p->exited)
			register_pending(x, xp, p, deadline);
		else
			xp->npend = 0;
	}
}

/*
 * An interval ends (the engine's tick): what it saw is handed to the readers, and the next
 * starts empty.  Readers never reset anything, so the JSON line, a recording's frame and a
 * metrics scrape of one interval see the same first touches, however many read.
 */
static void publish(struct exact *x)
{
	struct first_touch *v = x->eng.last.all;
	size_t cap = x->eng.last.capall;

	x->eng.last.touches = x->eng.st.touches_interval;
	x->eng.last.unlisted = x->eng.st.logged_dropped;
	memcpy(x->eng.last.log, x->eng.log, x->eng.nlog * sizeof(*x->eng.log));
	x->eng.last.nlog = x->eng.nlog;
	x->eng.st.touches_interval = 0;
	x->eng.st.logged_dropped = 0;
	x->eng.nlog = 0;
	/* The buffers swap: what was kept is handed out, the old hand-out is refilled. */
	x->eng.last.all = x->eng.all;
	x->eng.last.capall = x->eng.capall;
	x->eng.last.nall = x->eng.nall;
	x->eng.last.all_dropped = x->eng.all_dropped;
	x->eng.all = v;
	x->eng.capall = cap;
	x->eng.nall = 0;
	x->eng.all_dropped = 0;
}

/* After each batch of records (step) and at each refresh (tick): the servers' records,
 * new mappings to register, and fast, a scan of young mappings (step) or of every
 * registered one (tick). */
static void drain_and_scan(struct exact *x, bool tick)
{
	struct xproc *xp;
	struct proc *p;
	size_t i;

	drain(x);
	register_all_pending(x);
	for (i = 0; x->variant == EXACT_FAST && i < x->eng.procs.n; i++) {
		xp = x->eng.procs.v[i];
		if (!xp->xf || (!tick && (!xp->nyoung || !xp->seeded)))
			continue;
		p = engine_find(x->e, xp->pid);
		if (!p || !p->ready || p->exited)
			continue;
		if (tick)
			fast_scan(x, xp, p, xp->seeded);
		else
			fast_scan_young(x, xp, p);
	}
	x->eng.bound_ns = clock_mono_ns();
}

static void h_step(void *ctx)
{
	drain_and_scan(ctx, false);
}

static void h_tick(void *ctx)
{
	drain_and_scan(ctx, true);
	publish(ctx);
}

/* The control thread gives pid a userfaultfd (exact.c); if it cannot even be queued, the
 * process stays with pagemap tracking, and says so. */
static void queue_attach(struct exact *x, struct xproc *xp)
{
	int err = jobq_push(&x->ctl.jobs, xp->pid);

	if (!err)
		return;
	xp->awaiting = false;
	log_warn("failed to queue process %d for a userfaultfd: %s: its memory is tracked by "
		 "pagemap only", xp->pid, strerror(-err));
}

/*
 * Fast: a child of a process we hold, new to the engine (the BPF fork hook added it).
 * Without UFFD_FEATURE_EVENT_FORK the kernel gave it no registrations: it gets its own
 * userfaultfd from the control thread, like an execed process, and starts from its
 * parent's picture.
 */
static void fast_child(struct exact *x, struct proc *p)
{
	pid_t ppid = read_ppid(p->pid);
	struct xproc *parent = ppid ? xp_find(x, ppid) : NULL, *xp;

	if (!x->follow_children || !parent || !parent->xf || !(xp = xp_get(x, p->pid)))
		return;
	pageset_free(xp->inherit);
	xp->inherit = inherited(x, ppid);
	xp->awaiting = true;
	x->eng.st.fork++;
	queue_attach(x, xp);
}

static void h_reloaded(void *ctx, struct proc *p)
{
	struct exact *x = ctx;
	struct xproc *xp = xp_find(x, p->pid);

	if (!xp || (!xp->xf && !xp->awaiting)) {
		if (x->variant == EXACT_FAST)
			fast_child(x, p);
		else
			identify_child(x, p);
		return;
	}
	xp_start(x, xp, p, false);
}

static void h_mapped(void *ctx, struct proc *p, uint64_t start, uint64_t end)
{
	struct exact *x = ctx;
	struct xproc *xp = xp_find(x, p->pid);

	if (!xp || !xp->xf)
		return;
	/* What the model says may be stale: brk growth is a new VMA the kernel did not
	 * register (it cannot merge with a registered one), and in fast mode an mremap'd
	 * VMA loses its registration (no UFFD_FEATURE_EVENT_REMAP).  Registering again is
	 * harmless where it was kept. */
	model_set_flags(p, start, end, 0, MF_UFFD);
	add_pending(x, xp, start, end);
}

/* Fast: what the UNMAP/REMOVE events say in ordered mode, from the engine's records. */
static void h_zapped(void *ctx, struct proc *p, uint64_t start, uint64_t end, bool unmapped)
{
	struct exact *x = ctx;
	struct xproc *xp = xp_find(x, p->pid);

	if (x->variant != EXACT_FAST || !xp || !xp->xf)
		return;
	if (unmapped)
		x->eng.st.unmap++;
	else
		x->eng.st.remove++;
	if (xp->seen) {
		pageset_remove_range(xp->seen, start, end);
		fast_add_fresh(x, xp, start, end);
	}
}

/* Fast: what the REMAP event says in ordered mode: the pages moved without a fault. */
static void h_moved(void *ctx, struct proc *p, uint64_t old, uint64_t new, uint64_t len)
{
	struct exact *x = ctx;
	struct xproc *xp = xp_find(x, p->pid);

	if (x->variant != EXACT_FAST || !xp || !xp->xf)
		return;
	x->eng.st.remap++;
	if (xp->seen)
		pageset_move_range(xp->seen, old, old + len, new);
}

static void h_exec(void *ctx, struct proc *p)
{
	struct exact *x = ctx;
	struct xproc *xp = xp_get(x, p->pid);

	if (!xp)
		return;
	/* run: the ptrace follower may already have given the new image its uffd. */
	if (xp->xf && uffd_alive(xp->xf->fd) == 1)
		return;
	if (xp->xf) {
		xfd_del(x, xp->xf);
		xp->xf = NULL;
	}
	xp_reset_mm(x, xp);
	pageset_free(xp->inherit);
	xp->inherit = NULL;
	xp->awaiting = true;
	if (p->pid != x->run_pid)
		queue_attach(x, xp);
}

static void h_exited(void *ctx, struct proc *p)
{
	struct exact *x = ctx;
	struct xproc *xp = xp_find(x, p->pid);

	if (xp)
		xp_del(x, xp);
}

/* ---- what readers see ---- */

static void h_exact_stats(void *ctx, struct exact_stats *o)
{
	struct exact *x = ctx;
	struct uffd_server_stats one;
	struct proc **procs;
	const struct mapping *m;
	size_t n, i;

	procs = engine_procs(x->e, &n);
	for (i = 0; i < n; i++) {
		struct xproc *xp = xp_find(x, procs[i]->pid);

		if (procs[i]->exited)
			continue;
		o->processes += xp && xp->xf;
		for (m = model_first(procs[i]); m; m = model_next(m))
			if (m->flags & MF_UFFD)
				o->registered_pages += mapping_end(m) - mapping_start(m);
	}
	for (i = 0; i < (size_t)x->srv.n; i++) {
		uffd_server_get_stats(x->srv.servers[i], &one);
		o->reads += one.reads;
		o->faults += one.faults;
		o->resolved += one.resolved;
		o->raced += one.raced;
		o->retried += one.retried;
	}
	o->ordered = x->variant == EXACT_ORDERED;
	o->server_threads = x->srv.n;
	o->server_waiting = server_waiting(x);
	o->steered = atomic_load(&x->srv.steered);
	o->parked = atomic_load(&x->srv.parked);
	o->touches = x->eng.st.touches;
	o->touches_dropped = atomic_load(&x->ring.dropped);
	o->prereg_pages = x->eng.st.prereg_pages;
	o->prereg_max = x->eng.st.prereg_max;
	o->stale = x->eng.st.stale;
	o->behind = x->eng.st.behind;
	o->fork = x->eng.st.fork;
	o->remap = x->eng.st.remap;
	o->remove = x->eng.st.remove;
	o->unmap = x->eng.st.unmap;
	o->gone = x->eng.st.gone;
	o->attaches = x->eng.st.attaches;
	o->attach_ms_max = x->eng.st.attach_ms_max;
	memcpy(o->hist, x->eng.st.hist, sizeof(o->hist));
	o->lat_max_ns = x->eng.st.lat_max_ns;
	o->touches_interval = x->eng.last.touches;
	o->log = x->eng.last.log;
	o->nlog = x->eng.last.nlog;
	o->unlisted = x->eng.last.unlisted;
}

static char *h_stats_json(void *ctx)
{
	struct exact_stats xs;

	memset(&xs, 0, sizeof(xs));
	h_exact_stats(ctx, &xs);
	return exact_stats_json(&xs);
}

static uint64_t h_first_touches(void *ctx)
{
	struct exact *x = ctx;

	return x->eng.st.touches;
}

static size_t h_touches(void *ctx, const struct first_touch **v, uint64_t *dropped)
{
	struct exact *x = ctx;

	*v = x->eng.last.all;
	*dropped = x->eng.last.all_dropped;
	return x->eng.last.nall;
}

/* ---- setup ---- */

void exact_track_install(struct exact *x)
{
	struct engine_hooks h = {
		.ctx = x,
		.reloaded = h_reloaded,
		.mapped = h_mapped,
		.zapped = h_zapped,
		.moved = h_moved,
		.exec = h_exec,
		.exited = h_exited,
		.step = h_step,
		.tick = h_tick,
		.stats_json = h_stats_json,
		.first_touches = h_first_touches,
		.touches = h_touches,
	};

	x->eng.keep_all = x->o.record;	/* a recorder takes every first touch of each frame */
	engine_set_hooks(x->e, &h);
}

void exact_track_free(struct exact *x)
{
	struct adopt *a, *next;
	size_t i;

	while (x->eng.procs.n)			/* with their userfaultfds */
		xp_del(x, x->eng.procs.v[x->eng.procs.n - 1]);
	while (x->eng.fds.n)			/* forked children not identified */
		xfd_del(x, x->eng.fds.v[x->eng.fds.n - 1]);
	xtab_free(&x->eng.procs);
	xtab_free(&x->eng.fds);
	for (a = x->ctl.adopts; a; a = next) {
		next = a->next;
		close(a->fd);
		free(a);
	}
	x->ctl.adopts = NULL;
	free(x->eng.all);
	free(x->eng.last.all);
	x->eng.all = x->eng.last.all = NULL;
	/* Forked children's fds still queued (never applied) are ours too. */
	for (i = 0; i < x->eng.nstage; i++)
		if (x->eng.stage[i].kind == XR_FORK)
			close(x->eng.stage[i].fd);
	free(x->eng.stage);
	x->eng.stage = NULL;
	x->eng.nstage = 0;
	while (x->ring.recs && atomic_load(&x->ring.tail) != atomic_load(&x->ring.head)) {
		uint32_t t = atomic_load(&x->ring.tail);

		if (x->ring.recs[t & (XQ_SIZE - 1)].kind == XR_FORK)
			close(x->ring.recs[t & (XQ_SIZE - 1)].fd);
		atomic_store(&x->ring.tail, t + 1);
	}
}
