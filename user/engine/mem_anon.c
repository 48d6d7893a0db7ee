// SPDX-License-Identifier: GPL-2.0
/*
 * Anonymous memory counted once (mem_anon.h).  Why not the model's own counts: after fork
 * a page is resident in both processes' address spaces but one page of RAM; on this box
 * the sum of every process's resident anonymous pages was 2.5 times AnonPages, which made
 * "accounted" exceed what it stands for.  smaps_rollup's Pss_Anon divides each page by its
 * map count; the kernel walks the page tables for it (~50 µs a small process), so it is
 * read only for processes whose anonymous pages changed, or whose sharing may have.
 */
#include <stdlib.h>
#include <string.h>
#include "engine/engine_int.h"
#include "engine/mem_anon.h"
#include "kernel/rollup.h"

#define ANON_BUDGET_FIRST_NS	300000000ull	/* the first snapshot: every process, normally */
#define ANON_BUDGET_NS		2000000ull	/* later refreshes: <= 0.2% of a core at 1 s */
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

struct anon_acct {
	struct anon_ent *v;	/* sorted by serial */
	size_t n;
	bool first_done;
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

/* Reads entries wanting it until the budget is spent. */
static void read_some(struct anon_ent *v, size_t n, uint64_t budget)
{
	uint64_t start = engine_now_ns(), now = start;
	struct anon_ent **order = malloc(n * sizeof(*order));
	size_t i, k = 0;

	if (!order)
		return;
	for (i = 0; i < n; i++)
		if (want(&v[i], now) < 3)
			order[k++] = &v[i];
	sort_now = now;
	qsort(order, k, sizeof(*order), by_want);
	for (i = 0; i < k && now - start < budget; i++) {
		struct anon_ent *x = order[i];
		struct rollup r;

		/* Unreadable: the model's count stands in, retried only when old. */
		x->unreadable = rollup_read(x->pid, &r) != 0;
		x->pss = x->unreadable ? x->model * PAGE_SIZE_4K : r.pss_anon;
		x->model_read = x->model;
		x->read_ns = now;
		x->stale = false;
		now = engine_now_ns();
	}
	free(order);
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

	if (!a) {
		a = e->anon = calloc(1, sizeof(*a));
		if (!a)
			return 0;
	}
	v = collect(e, a, &n);
	parents_stale(v, n);
	read_some(v, n, a->first_done ? ANON_BUDGET_NS : ANON_BUDGET_FIRST_NS);
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
	if (a)
		free(a->v);
	free(a);
}
