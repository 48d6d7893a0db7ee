// SPDX-License-Identifier: GPL-2.0
/* The engine's process table: lookups, creation, the batch-end work list, the lock
 * (engine_int.h). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/array.h"
#include "engine/engine_int.h"

/* The engine thread's own lock/unlock: records when it took the lock, so long batch ends
 * can hand it to a waiting reader (the UI) between processes and between scan chunks. */
void table_lock(struct engine *e)
{
	pthread_mutex_lock(&e->step_lock);
	pthread_mutex_lock(&e->lock);
	e->locked_at = engine_now_ns();
}

void table_unlock(struct engine *e)
{
	pthread_mutex_unlock(&e->lock);
	pthread_mutex_unlock(&e->step_lock);
}

#define YIELD_AFTER_NS 2000000ULL	/* 2 ms */

/* Called at points where the model is consistent: if a reader waits and the lock has been
 * held long, let it in.  The reader sees each process either before or after its work. */
void table_yield(struct engine *e)
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

/* --- process table --- */

/* Picks the thread to read p through (procfs_live_thread); a new one needs a new pagemap
 * fd, since the old one may be the exited main thread's. */
int table_choose_io(struct engine *e, struct proc *p)
{
	pid_t tid;
	int err = e->src->live_thread(e->src_ctx, p->pid, &tid);

	if (err)
		return err;
	if (tid != io(p))
		table_close_pages(e, p);
	ps(p)->io_pid = tid;
	return 0;
}

/* Closes p's pagemap handle (exit, exec: it points at the old mm; a new io thread). */
void table_close_pages(struct engine *e, struct proc *p)
{
	struct pstate *s = ps(p);

	if (s->pagemap_fd >= 0)
		e->src->close_pages(e->src_ctx, s->pagemap_fd);
	s->pagemap_fd = -1;
}

struct proc *table_attach_pstate(struct engine *e, struct proc *p)
{
	struct pstate *s = calloc(1, sizeof(*s));

	if (s && e->o.sharing && !(s->sharing = calloc(1, sizeof(*s->sharing)))) {
		free(s);
		s = NULL;
	}
	if (!s) {
		proc_free(p);
		return NULL;
	}
	s->pagemap_fd = -1;
	if (s->sharing)
		s->sharing->anon = true;	/* its history is unknown: the first pass checks */
	p->engine = s;
	return p;
}

void table_add(struct engine *e, struct proc *p)
{
	struct proc **b = table_bucket(e, p->pid);

	p->hnext = *b;
	*b = p;
	p->serial = ++e->serials;	/* a new process, even if its pid was seen before */
	e->nprocs++;
	e->sorted_dirty = true;
}

static void pstate_free(struct engine *e, struct pstate *s)
{
	if (!s)
		return;
	if (s->pagemap_fd >= 0)
		e->src->close_pages(e->src_ctx, s->pagemap_fd);
	free(s->scan);
	free(s->checks);
	share_build_drop(s);
	free(s->sharing);
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

void table_del(struct engine *e, struct proc *p)
{
	struct proc **pp;
	size_t i;

	for (pp = table_bucket(e, p->pid); *pp; pp = &(*pp)->hnext) {
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
	e->src->forget(e->src_ctx, p->pid);
	pstate_free(e, ps(p));
	proc_free(p);
}

void table_pend(struct engine *e, struct proc *p, uint32_t what)
{
	/* Nothing asked (chunk mode's layout_unexplained() says 0 most ticks): not listed.
	 * Listed with p->pending still 0, the next call would list it again, linking it to
	 * itself, and the batch end would spin on it for ever (seen under an exec flood). */
	if (!what)
		return;
	if (!p->pending) {
		p->pending_next = e->pending;
		e->pending = p;
	}
	p->pending |= what;
}

void table_queue_scan(struct engine *e, struct proc *p, uint64_t start, uint64_t end)
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
			table_pend(e, p, PEND_RECONCILE);
			return;
		}
		s->scan[s->nscan++] = (struct range){ start, end };
	}
	table_pend(e, p, PEND_SCAN);
}

struct proc *table_new_proc(struct engine *e, pid_t pid, bool target)
{
	struct proc *p = proc_new(pid);

	if (!p || !table_attach_pstate(e, p))
		return NULL;
	ps(p)->target = target;
	table_add(e, p);
	table_pend(e, p, PEND_RELOAD);
	return p;
}

pid_t table_alias_parent(struct engine *e, pid_t tgid)
{
	size_t i;

	for (i = 0; i < e->naliases; i++)
		if (e->aliases[i].child == tgid)
			return e->aliases[i].parent;
	return 0;
}

void table_alias_del(struct engine *e, pid_t child)
{
	size_t i;

	for (i = 0; i < e->naliases; i++)
		if (e->aliases[i].child == child)
			e->aliases[i] = e->aliases[--e->naliases];
}

void table_alias_add(struct engine *e, pid_t child, pid_t parent)
{
	if (array_reserve(e->aliases, e->naliases, e->capaliases, 8))
		return;
	e->aliases[e->naliases++] = (struct alias){ child, parent };
}

/* The process whose model an event of `tgid` changes, creating it in whole-system mode. */
/* Only some processes are watched: -p, or a filter. */
bool table_filtered(const struct engine *e)
{
	return e->o.npids || filter_active(e->o.filter);
}

struct proc *table_proc_for(struct engine *e, pid_t tgid)
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
	parent = e->naliases ? table_alias_parent(e, tgid) : 0;
	if (parent)
		return engine_find(e, parent);
	/* A process we have not seen (started before the hooks, or its fork record was lost):
	 * model it from /proc at the end of the batch, if it is one we watch. */
	if (!table_filtered(e) || e->src->is_target(e->src_ctx, tgid))
		return table_new_proc(e, tgid, false);
	return NULL;
}

/* Starts watching a process that passed the filter. */
struct proc *table_watch_new(struct engine *e, pid_t tgid, const char *comm)
{
	struct proc *p;

	if (e->src->add_target(e->src_ctx, tgid))
		return NULL;
	p = table_new_proc(e, tgid, false);
	if (p && comm)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
	return p;
}

/* Stops watching a process that no longer passes the filter (exec, left the cgroup). */
void table_unwatch(struct engine *e, struct proc *p)
{
	e->src->del_target(e->src_ctx, p->pid);
	table_del(e, p);
}


static void note_exit(struct engine *e, struct proc *p)
{
	if (array_reserve(e->exits, e->nexits, e->capexits, 16))
		return;
	e->exits[e->nexits++] = p;
}

void table_mark_exited(struct engine *e, struct proc *p)
{
	/* Keep the last picture for a while (a tombstone), as top and htop do. */
	p->exited = true;
	p->exited_ns = e->now_ns;
	pending_remove(e, p);
	table_close_pages(e, p);
	note_exit(e, p);
	HOOK(e, exited, p);
}

/* Pids found to have no address space (engine_int.h). */
static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

bool table_no_mm(const struct engine *e, pid_t pid)
{
	return e->nnomm && bsearch(&pid, e->nomm, e->nnomm, sizeof(pid), cmp_pid);
}

void table_set_no_mm(struct engine *e, pid_t pid)
{
	if (table_no_mm(e, pid) || array_reserve(e->nomm, e->nnomm, e->capnomm, 64))
		return;
	e->nomm[e->nnomm++] = pid;
	qsort(e->nomm, e->nnomm, sizeof(pid), cmp_pid);
}

int table_init(struct engine *e, const struct engine_opts *o, const struct features *f,
	       const struct engine_source *src, void *src_ctx)
{
	e->o = *o;
	e->f = *f;
	e->src = src;
	e->src_ctx = src_ctx;
	pthread_mutex_init(&e->lock, NULL);
	pthread_mutex_init(&e->step_lock, NULL);
	e->use_scan = f->pagemap_scan && !(f->disabled & DIS_PAGEMAP_SCAN);
	e->use_procmap = f->procmap_query && !(f->disabled & DIS_PROCMAP_QUERY);
	e->use_maps_text = !(f->disabled & DIS_MAPS_TEXT);
	e->smaps = !(f->disabled & DIS_SMAPS);
	return 0;
}

void table_fini(struct engine *e)
{
	struct proc *p;
	size_t i;

	for (i = 0; i < NBUCKETS; i++) {
		while ((p = e->buckets[i])) {
			e->buckets[i] = p->hnext;
			pstate_free(e, ps(p));
			proc_free(p);
		}
	}
	free(e->sorted);
	free(e->aliases);
	free(e->runs);
	free(e->exits);
	free(e->nomm);
	pthread_mutex_destroy(&e->lock);
	pthread_mutex_destroy(&e->step_lock);
}
