// SPDX-License-Identifier: GPL-2.0
/*
 * Anonymous memory counted once (mem_anon.h).  Why not the model's own counts: after fork
 * a page is resident in both processes' address spaces but one page of RAM; on this box
 * the sum of every process's resident anonymous pages was 2.5 times AnonPages, which made
 * "accounted" exceed what it stands for.  smaps_rollup's Pss_Anon divides each page by its
 * map count; the kernel walks the page tables for it (~50 µs a small process), so it is
 * read only for processes whose anonymous pages changed, or whose sharing may have.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "engine/engine_int.h"
#include "engine/mem_anon.h"
#include "kernel/rollup.h"

#define ANON_BUDGET_FIRST_NS	300000000ull	/* the first snapshot: every process, normally */
#define ANON_BUDGET_NS		2000000ull	/* later refreshes: <= 0.2% of a core at 1 s */
#define ANON_PARALLEL_MIN	256	/* entries worth starting helper threads for */
#define ANON_READERS_MAX	4	/* threads reading at once, the caller's included */
#define ANON_REREAD_NS		10000000000ull	/* sharing changes without our noticing (exit
						 * of a sharer, exec of a child): re-read after */

struct anon_ent {
	uint64_t serial;
	pid_t pid, ppid;
	uint64_t model;		/* the model's resident anonymous pages now */
	uint64_t model_read;	/* ... when pss was read */
	uint64_t pss;		/* Pss_Anon, bytes; valid if read_ns */
	uint64_t read_ns;	/* 0: never read */
	bool stale;
	bool unreadable;	/* smaps_rollup refused (another user namespace's init: EACCES;
				 * a kernel thread: ESRCH): pss is the model's count */
};

/* Smaps_rollup reads under way: entries claimed one at a time from a shared index by the
 * readers (helper threads and, when it has time, the caller), so a reader slowed by a big
 * address space or a busy CPU takes fewer. */
struct readers {
	struct anon_ent **order;
	size_t k;
	size_t next;		/* atomic: the next entry to claim */
	uint64_t start, budget;
	pthread_t tids[ANON_READERS_MAX];
	unsigned started;
};

struct anon_acct {
	struct anon_ent *v;	/* sorted by serial */
	size_t n;
	bool first_done;
	struct readers pre;	/* mem_anon_start()'s reads, of pre_v[pre_n]; pre_v NULL: none */
	struct anon_ent *pre_v;
	size_t pre_n;
};

static int by_serial(const void *a, const void *b)
{
	const struct anon_ent *x = a, *y = b;

	return x->serial < y->serial ? -1 : x->serial > y->serial;
}

static const struct anon_ent *old_ent(const struct anon_acct *a, uint64_t serial)
{
	struct anon_ent key = { .serial = serial };

	return a->n ? bsearch(&key, a->v, a->n, sizeof(key), by_serial) : NULL;
}

/* This refresh's entries: one per live process, carried over from the last by serial. */
static struct anon_ent *collect(struct engine *e, const struct anon_acct *a, size_t *np)
{
	struct anon_ent *v = NULL;
	size_t n = 0, cap = 0, i;

	for (i = 0; i < NBUCKETS; i++)
		for (struct proc *p = e->buckets[i]; p; p = p->hnext) {
			const struct anon_ent *o;
			struct anon_ent *x;
			uint64_t na;

			if (p->exited || !p->ready)
				continue;
			if (n == cap) {
				struct anon_ent *nv = realloc(v, (cap ? cap * 2 : 64) * sizeof(*v));

				if (!nv)
					break;
				v = nv;
				cap = cap ? cap * 2 : 64;
			}
			x = &v[n++];
			o = p->serial ? old_ent(a, p->serial) : NULL;
			if (o && o->pid == p->pid)
				*x = *o;
			else
				*x = (struct anon_ent){ .serial = p->serial, .pid = p->pid };
			x->ppid = p->ppid;
			/* Shared anonymous mappings are shmem: the files' rows count them. */
			na = model_anon_resident(p);
			if (x->read_ns && !x->unreadable && x->model != na)
				x->stale = true;
			x->model = na;
		}
	*np = n;
	return v;
}

/* A child not read before shares its parent's pages: the parent's Pss_Anon halved. */
static void parents_stale(struct anon_ent *v, size_t n)
{
	size_t i, j, news = 0;

	for (i = 0; i < n; i++)
		news += !v[i].read_ns;
	if (!news)
		return;
	if (news > 64) {	/* a burst of forks: re-read all, within the budget */
		for (i = 0; i < n; i++)
			v[i].stale = true;
		return;
	}
	for (i = 0; i < n; i++)
		if (!v[i].read_ns && v[i].ppid > 0)
			for (j = 0; j < n; j++)
				if (v[j].pid == v[i].ppid)
					v[j].stale = true;
}

/* What an entry wants: 0 a first read, 1 a re-read (its pages or sharing changed), 2 a
 * re-read because it is old, 3 nothing. */
static int want(const struct anon_ent *x, uint64_t now)
{
	if (!x->read_ns)
		return 0;
	if (x->stale)
		return 1;
	return now - x->read_ns > ANON_REREAD_NS ? 2 : 3;
}

static uint64_t sort_now;

/* First reads first, the largest first (their stand-in counts err the most). */
static int by_want(const void *a, const void *b)
{
	const struct anon_ent *x = *(struct anon_ent *const *)a, *y = *(struct anon_ent *const *)b;
	int wx = want(x, sort_now), wy = want(y, sort_now);

	if (wx != wy)
		return wx - wy;
	return x->model > y->model ? -1 : x->model < y->model;
}

static void *read_share(void *arg)
{
	struct readers *r = arg;
	uint64_t now = engine_now_ns();

	while (now - r->start < r->budget) {
		size_t i = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
		struct anon_ent *x;
		struct rollup ru;

		if (i >= r->k)
			break;
		x = r->order[i];
		/* Unreadable: the model's count stands in, retried only when old. */
		x->unreadable = rollup_read(x->pid, &ru) != 0;
		x->pss = x->unreadable ? x->model * PAGE_SIZE_4K : ru.pss_anon;
		x->model_read = x->model;
		x->read_ns = now;
		x->stale = false;
		now = engine_now_ns();
	}
	return NULL;
}

/* Helper threads for reading many entries: the kernel's page-table walk behind each
 * smaps_rollup is a large part of the first snapshot's time with thousands of processes
 * (~25 µs each), and the reads are independent, so the first snapshot takes the CPUs there
 * are.  own: the caller reads too. */
static unsigned helpers_for(size_t k, bool own)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (k < ANON_PARALLEL_MIN || cpus < 2)
		return 0;
	return (unsigned)(cpus > ANON_READERS_MAX ? ANON_READERS_MAX : cpus) - own;
}

/* Starts reading the entries that want it, within budget, on `helpers` threads (none: the
 * caller's readers_finish() reads them all).  False if out of memory. */
static bool readers_start(struct readers *r, struct anon_ent *v, size_t n, uint64_t budget,
			  unsigned helpers)
{
	*r = (struct readers){ .start = engine_now_ns(), .budget = budget };
	r->order = malloc((n ? n : 1) * sizeof(*r->order));
	if (!r->order)
		return false;
	for (size_t j = 0; j < n; j++)
		if (want(&v[j], r->start) < 3)
			r->order[r->k++] = &v[j];
	sort_now = r->start;
	qsort(r->order, r->k, sizeof(*r->order), by_want);
	for (unsigned i = 0; i < helpers; i++)	/* one that fails to start leaves its share */
		if (!pthread_create(&r->tids[r->started], NULL, read_share, r))
			r->started++;
	return true;
}

/* The caller reads what is left within the budget, then waits for the helpers. */
static void readers_finish(struct readers *r)
{
	read_share(r);
	for (unsigned i = 0; i < r->started; i++)
		pthread_join(r->tids[i], NULL);
	free(r->order);
	r->order = NULL;
}

/* Reads entries wanting it until the budget is spent. */
static void read_some(struct anon_ent *v, size_t n, uint64_t budget, bool parallel)
{
	struct readers r;

	if (readers_start(&r, v, n, budget, parallel ? helpers_for(n, true) : 0))
		readers_finish(&r);
}

static struct anon_acct *anon_of(struct engine *e)
{
	if (!e->anon)
		e->anon = calloc(1, sizeof(struct anon_acct));
	return e->anon;
}

void mem_anon_start(struct engine *e)
{
	struct anon_acct *a = anon_of(e);
	struct anon_ent *v;
	size_t n;

	if (!a || a->first_done || a->pre_v)
		return;
	v = collect(e, a, &n);
	if (!v)
		return;
	parents_stale(v, n);
	if (!helpers_for(n, false) ||
	    !readers_start(&a->pre, v, n, ANON_BUDGET_FIRST_NS, helpers_for(n, false))) {
		free(v);
		return;
	}
	a->pre_v = v;
	a->pre_n = n;
}

/* The reads mem_anon_start() began, finished and taken as the last refresh's entries. */
static void take_started(struct anon_acct *a)
{
	if (!a->pre_v)
		return;
	readers_finish(&a->pre);
	if (a->pre_n)
		qsort(a->pre_v, a->pre_n, sizeof(*a->pre_v), by_serial);
	free(a->v);
	a->v = a->pre_v;
	a->n = a->pre_n;
	a->pre_v = NULL;
}

/* Pss_Anon as of now, from the last read and what the model saw since (a process waiting for
 * its re-read): pages it gained are its own (a fresh anonymous page is mapped once), pages
 * it lost take their share with them. */
static uint64_t estimate(const struct anon_ent *x)
{
	if (x->unreadable)
		return x->model * PAGE_SIZE_4K;
	if (x->model >= x->model_read)
		return x->pss + (x->model - x->model_read) * PAGE_SIZE_4K;
	return (uint64_t)((double)x->pss * x->model / x->model_read);
}

uint64_t mem_anon_refresh(struct engine *e, uint64_t *pending, uint64_t *unreadable)
{
	struct anon_acct *a = e->anon;
	struct anon_ent *v;
	uint64_t sum = 0;
	size_t n, i;

	if (!(a = anon_of(e)))
		return 0;
	/* Entries read since mem_anon_start() carry over by serial like a refresh's; those
	 * whose model count moved since are stale and read again below. */
	take_started(a);
	v = collect(e, a, &n);
	parents_stale(v, n);
	/* Later refreshes read a few within 2 ms: one thread, so idle costs stay where measured. */
	read_some(v, n, a->first_done ? ANON_BUDGET_NS : ANON_BUDGET_FIRST_NS, !a->first_done);
	a->first_done = true;
	*pending = *unreadable = 0;
	for (i = 0; i < n; i++) {
		if (v[i].read_ns) {
			sum += estimate(&v[i]);
			*unreadable += v[i].unreadable;
		} else {
			sum += v[i].model * PAGE_SIZE_4K;
			++*pending;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), by_serial);
	free(a->v);
	a->v = v;
	a->n = n;
	return sum;
}

void mem_anon_free(struct anon_acct *a)
{
	if (a) {
		take_started(a);
		free(a->v);
	}
	free(a);
}
