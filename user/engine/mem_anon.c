// SPDX-License-Identifier: GPL-2.0
/*
 * Anonymous memory counted once (mem_anon.h).  Why not the model's own counts: after fork
 * a page is resident in both processes' address spaces but one page of RAM; on this box
 * the sum of every process's resident anonymous pages was 2.5 times AnonPages, which made
 * "accounted" exceed what it stands for.  smaps_rollup's Pss_Anon divides each page by its
 * map count; the kernel walks the page tables for it (~50 µs a small process), so it is
 * read only for processes whose anonymous pages changed, or whose sharing may have.
 *
 * Sharing moves with no change of anyone's resident count when a process writes a page it
 * shares since fork (copy on write: the writer gets a page of its own, the others' share
 * grows; redis's BGSAVE child, a forked server's workers).  Such pages are shared within a
 * fork family only, whose members (fork without exec) keep their parent's name and heap
 * start: a process whose fault counters moved, and every process of its family, are read
 * again.  (By name alone, a python test runner and every python it started were one
 * family: the runner's own re-reads took the budget.)  What that
 * misses (a family member renamed, KSM) the periodic re-read catches.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "engine/engine_int.h"
#include "engine/mem_anon.h"
#include "engine/start_ahead.h"
#include "kernel/rollup.h"

#define ANON_BUDGET_FIRST_NS	300000000ull	/* the first snapshot: every process, normally */
#define ANON_BUDGET_NS		2000000ull	/* later refreshes: <= 0.2% of a core at 1 s */
#define ANON_REREAD_NS		30000000000ull	/* sharing changes without our noticing (a
						 * renamed sharer, KSM): re-read after; was
						 * 10 s, a sixth of the idle CPU at 300
						 * processes (issue 24) */
#define FAMILY_DEPTH		64		/* parents followed to a family's root */

struct anon_ent {
	uint64_t serial;
	pid_t pid, ppid;
	uint64_t model;		/* the model's resident anonymous pages now */
	uint64_t model_read;	/* ... when pss was read */
	uint64_t pss;		/* Pss_Anon, bytes; valid if read_ns */
	uint64_t read_ns;	/* 0: never read */
	uint64_t faults;	/* the process's fault count (struct proc.faults) when read */
	uint64_t faults_now;	/* ... at this refresh */
	char comm[16];
	uint64_t brk_start;	/* the heap's start: fork keeps it, exec draws another (ASLR) */
	bool stale;
	bool moved;		/* faulted since it was read */
	bool hot;		/* families_stale(): a family root with a member that moved */
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
			memcpy(x->comm, p->comm, sizeof(x->comm));
			x->brk_start = p->brk_start;
			x->faults_now = p->faults;
			x->moved = x->read_ns && p->faults != x->faults;
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

static int by_pid(const void *a, const void *b)
{
	const struct anon_ent *x = *(struct anon_ent *const *)a, *y = *(struct anon_ent *const *)b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static struct anon_ent *find_pid(struct anon_ent **by, size_t n, pid_t pid)
{
	struct anon_ent key = { .pid = pid }, *kp = &key, **f;

	f = bsearch(&kp, by, n, sizeof(*by), by_pid);
	return f ? *f : NULL;
}

/* Whether up is x's parent by a fork with no exec since, as far as the layout tells: the
 * same name and the same heap start (exec places the heap anew, at random). */
static bool same_image(const struct anon_ent *up, const struct anon_ent *x)
{
	return up->brk_start && up->brk_start == x->brk_start &&
	       !strncmp(up->comm, x->comm, sizeof(x->comm));
}

/* The oldest ancestor of x through forks with no exec (same_image): the family's root. */
static struct anon_ent *family_root(struct anon_ent **by, size_t n, struct anon_ent *x)
{
	for (int d = 0; d < FAMILY_DEPTH && x->ppid > 0; d++) {
		struct anon_ent *up = find_pid(by, n, x->ppid);

		if (!up || up == x || !same_image(up, x))
			break;
		x = up;
	}
	return x;
}

/* Every member of a family of two or more one of whose members faulted since it was read
 * (see above); a process alone is read when its own pages change, as before. */
static void families_stale(struct anon_ent *v, size_t n)
{
	struct anon_ent **by, **root;
	size_t i, moved = 0;

	for (i = 0; i < n; i++) {
		moved += v[i].moved;
		v[i].hot = false;
	}
	if (!moved)
		return;
	by = malloc(n * sizeof(*by));
	root = malloc(n * sizeof(*root));
	if (!by || !root) {
		free(by);
		free(root);
		return;		/* no memory: the periodic re-read stands */
	}
	for (i = 0; i < n; i++)
		by[i] = &v[i];
	qsort(by, n, sizeof(*by), by_pid);
	for (i = 0; i < n; i++)
		root[i] = family_root(by, n, &v[i]);
	/* A member that moved, in a family with another member: its root is hot. */
	for (i = 0; i < n; i++) {
		struct anon_ent *r = root[i];

		if (r != &v[i] && (v[i].moved || r->moved))
			r->hot = true;
	}
	for (i = 0; i < n; i++)
		if (root[i]->hot)
			v[i].stale = true;
	free(by);
	free(root);
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

/* First reads first, the largest first (their stand-in counts err the most); then
 * re-reads, the longest unread first: a large process that changes every refresh and
 * takes the budget alone must not starve the rest (it did: a forked pair's re-read waited
 * behind the test runner's own). */
static int by_want(const void *a, const void *b)
{
	const struct anon_ent *x = *(struct anon_ent *const *)a, *y = *(struct anon_ent *const *)b;
	int wx = want(x, sort_now), wy = want(y, sort_now);

	if (wx != wy)
		return wx - wy;
	if (wx == 0)
		return x->model > y->model ? -1 : x->model < y->model;
	return x->read_ns < y->read_ns ? -1 : x->read_ns > y->read_ns;
}

/* Reads entries wanting it until the budget is spent. */
static void read_some(struct engine *e, struct anon_ent *v, size_t n, uint64_t budget)
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
		bool ahead;

		/* Unreadable: the model's count stands in, retried only when old. */
		x->unreadable = start_ahead_rollup(e, x->pid, &r, &ahead) != 0;
		x->pss = x->unreadable ? x->model * PAGE_SIZE_4K : r.pss_anon;
		x->model_read = x->model;
		x->read_ns = now;
		x->faults = x->faults_now;
		/* Read at start before the model's scan: if its anonymous pages moved in
		 * between, it is read again at the next refresh. */
		x->stale = ahead && !x->unreadable && r.anon != x->model * PAGE_SIZE_4K;
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

bool mem_anon_from_meminfo(bool whole_system, uint32_t disabled)
{
	return whole_system && !(disabled & DIS_MEMINFO_ANON);
}

/* AnonPages less what mevitop maps itself (it is not in its own table).  mevitop shares
 * no anonymous page (only a child it forks does, until that child's exec), so its
 * Pss_Anon is its resident anonymous count, which statm gives without the page-table
 * walk of its own smaps_rollup (~0.4 ms a refresh at 20 MiB: 0.04% of a core, measured
 * at idle on the box alone).  Both are read now: a page mevitop faults in between is the
 * only disagreement, its own. */
static uint64_t anon_but_self(uint64_t anon_pages)
{
	uint64_t self;

	if (procfs_read_anon_rss(getpid(), &self))
		return anon_pages;
	self *= PAGE_SIZE_4K;
	return anon_pages > self ? anon_pages - self : 0;
}

uint64_t mem_anon_refresh(struct engine *e, uint64_t anon_pages, uint64_t *pending,
			  uint64_t *unreadable)
{
	struct anon_acct *a = e->anon;
	struct anon_ent *v;
	uint64_t sum = 0;
	size_t n, i;

	if (e->anon_meminfo) {
		*pending = *unreadable = 0;
		return anon_but_self(anon_pages);
	}

	if (!a) {
		a = e->anon = calloc(1, sizeof(*a));
		if (!a)
			return 0;
	}
	v = collect(e, a, &n);
	parents_stale(v, n);
	families_stale(v, n);
	read_some(e, v, n, a->first_done ? ANON_BUDGET_NS : ANON_BUDGET_FIRST_NS);
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
