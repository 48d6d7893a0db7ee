// SPDX-License-Identifier: GPL-2.0
/*
 * Sharing passes (--sharing): each process's USS, PSS and shared bytes per mapping, and
 * each resident page's map-count class, into proc.share (model/share.h).
 *
 * A pass reads the pagemap entries (PFN and the "exclusively mapped" bit) of the resident
 * pages of the mappings whose pages can be shared: file and shmem mappings (and the vdso)
 * always, anonymous ones only while the process's anonymous memory may be shared -- its
 * history is unknown (watched since before it forked, or since mevitop started), it
 * forked or was forked, or KSM merged some of its pages.  A pass that finds every
 * anonymous page exclusive, with no fork meanwhile, turns that off until the next fork:
 * an exec'd process's anonymous memory is private.  An exclusive entry is a page mapped
 * once; only the others are looked up in /proc/kpagecount (map count) and
 * /proc/kpageflags (the zero page, KSM), sorted so nearby PFNs share one read.
 *
 * Budget: at most share_budget_pages entries a tick; a pass that does not fit resumes at
 * the next tick where it stopped, and the process's figures change only when a pass is
 * complete.  A process is read again after share_period_ms if its faults moved, and at
 * the next tick after a fork or exec.  Otherwise its figures move only when another
 * process maps or unmaps one of its pages: a quiet process is read again after ten
 * periods only if the processes that moved meanwhile (world_tick: came, went, or changed
 * their resident file pages -- or anonymous ones, for processes whose anonymous pages may
 * be shared) can have moved its figures by more than the drift allowed (sens_shared), and after
 * SHARE_IDLE_FACTOR periods whatever happened (what the model cannot see: processes
 * mevitop does not watch, the kernel's reclaim).  An idle box of forked sleepers is then
 * read once a minute, not every ten seconds.  Nothing runs in the
 * kernel for it: the cost is mevitop's own CPU (stats.sharing says how much).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "lib/log.h"
#include "lib/page.h"
#include "engine/engine_int.h"
#include "engine/share_int.h"
#include "kernel/kpage.h"
#include "model/share_figs.h"

#define SHARE_BUDGET_DEFAULT	(256ULL * 1024)	/* entries a tick: 1 GiB, ~3 ms */
#define SHARE_PERIOD_DEFAULT	1000ULL		/* ms */
#define SHARE_QUIET_FACTOR	10
#define SHARE_IDLE_FACTOR	60		/* periods: nothing seen moving, read anyway */
#define SHARE_NS_PER_ENTRY	80ULL		/* a tick's passes stop after budget x this
						 * (the default: 21 ms), lookups included */
#define SHARE_TICK_NS_MIN	2000000ULL	/* ... but never less than 2 ms */
#define PEND_FLUSH		16384		/* look up once this many wait (~10-25 ms) */

/* A page whose entry was not exclusive: its map count is looked up. */
struct share_pend {
	uint64_t pfn;
	uint64_t page;
	uint32_t span;		/* index in the build's spans */
	uint16_t anon;		/* an anonymous mapping's page */
	uint16_t file;		/* a page cache (or shmem) page: KPM_FILE */
};

/* A PFN's count and flags as looked up this tick: the pages of libc (and of a forked
 * pair) are looked up once a tick, not once per process.  Counts may move within a tick
 * (a fault elsewhere): a pass is a snapshot no finer than a tick anyway. */
struct kcache_ent {
	uint64_t pfn;
	uint32_t gen;			/* the tick it was looked up in; 0: empty */
	uint32_t count;
	uint64_t flags;
};

enum { WORLD_FILE, WORLD_ANON };

/*
 * How much one process mapping or unmapping a page can move this process's figures, in
 * PSS units (bytes << SHARE_PSS_SHIFT), summed over its pages at a pass (share_build's
 * sens): a page mapped by c >= 3 moves its PSS by at most a page over c(c - 1) (one
 * unmap), one mapped by 2 may become private (its USS a page), and a private page cache
 * or shmem page (pagemap's KPM_FILE) may become shared (a page).  A private anonymous
 * page -- in a private file mapping too, a written copy -- no other process can map (a
 * fork of this one, KSM: passes at once).  A quiet process whose figures the processes that
 * moved since its pass can have moved by less than the drift allowed (SHARE_DRIFT_*) is not read again before
 * SHARE_IDLE_FACTOR periods: 300 forks of one program, each page mapped by 300, and
 * libc's pages by every process on the box, stay put when a shell comes and goes.
 */
#define SENS_PRIVATE	(PAGE_SIZE_4K << SHARE_PSS_SHIFT)

static uint64_t sens_shared(uint64_t c)
{
	return c == 2 ? SENS_PRIVATE : SENS_PRIVATE / (c * (c - 1));
}

/* The drift allowed: a page's bytes, or 1/256 of the PSS if more (test_sharing's forked
 * pairs, redis and postgres share pages by 2-8, so each mover passes them again). */
#define SHARE_DRIFT_PAGES	1
#define SHARE_DRIFT_SHIFT	8

#define KCACHE_BITS	17		/* 128 Ki entries, 3 MiB */
#define KCACHE_PROBES	8

int engine_share_init(struct engine *e, char *why, size_t whylen)
{
	struct sharing *sh;
	int err;

	if (!e->o.sharing)
		return 0;
	if (e->f.disabled & DIS_KPAGECOUNT) {
		snprintf(why, whylen, "--sharing needs /proc/kpagecount (disabled by --disable "
			 "kpagecount)");
		return -EPERM;
	}
	err = kpage_probe();
	if (err) {
		snprintf(why, whylen, "--sharing needs PFNs from /proc/PID/pagemap and "
			 "/proc/kpagecount (root): %s", strerror(-err));
		return err;
	}
	sh = calloc(1, sizeof(*sh));
	if (!sh || !(sh->cache = calloc(1u << KCACHE_BITS, sizeof(*sh->cache)))) {
		free(sh);
		return -ENOMEM;
	}
	err = kpage_open(&sh->k);
	if (err) {
		snprintf(why, whylen, "failed to open /proc/kpagecount: %s", strerror(-err));
		free(sh);
		return err;
	}
	if (!e->o.share_budget_pages)
		e->o.share_budget_pages = SHARE_BUDGET_DEFAULT;
	if (!e->o.share_period_ms)
		e->o.share_period_ms = SHARE_PERIOD_DEFAULT;
	/* With -p or a filter, processes not watched map pages too: quiet ones are read
	 * after SHARE_QUIET_FACTOR periods, as if the world had moved. */
	sh->world_seen = !e->o.npids && !e->o.filter;
	sh->self_off = e->f.disabled & DIS_OBSERVER;
	e->sharing = sh;
	return 0;
}

void engine_share_fini(struct engine *e)
{
	struct sharing *sh = e->sharing;

	if (!sh)
		return;
	kpage_close(&sh->k);
	kpage_self_free(&sh->self);
	free(sh->pend);
	free(sh->pfns);
	free(sh->counts);
	free(sh->flags);
	free(sh->fout);
	free(sh->fidx);
	free(sh->mpfn);
	free(sh->mcount);
	free(sh->mflag);
	free(sh->midx);
	free(sh->cache);
	free(sh->who_todo);
	free(sh);
	e->sharing = NULL;
}

const struct share_stats *engine_share_stats(struct engine *e)
{
	return e->sharing ? &e->sharing->st : NULL;
}

/* Which mappings a pass reads: where a page can be mapped by another process too. */
static bool readable(const struct mapping *m, bool anon)
{
	if (!share_counted(m) || (m->flags & MF_UFFD))
		return false;
	if (is_anon(m))
		return anon;
	/* A private file mapping's written pages are anonymous copies, shared after a fork
	 * like any other: read as the file's pages are. */
	return m->kind == MK_FILE || m->kind == MK_SHMEM || m->kind == MK_VDSO;
}

static int pend_add(struct sharing *sh, uint64_t ent, uint64_t page, uint32_t span, bool anon)
{
	if (array_reserve(sh->pend, sh->npend, sh->cappend, 1024))
		return -ENOMEM;
	sh->pend[sh->npend++] = (struct share_pend){ kpm_pfn(ent), page, span, anon,
						     !!(ent & KPM_FILE) };
	return 0;
}

/* Does the aligned block of PMD_PAGES entries at ent look like one PMD-mapped huge page
 * (present, physically contiguous from an aligned PFN)?  For those, 6.18's pagemap sets
 * the "exclusively mapped" bit of every page from the first page's map count alone: after
 * a fork and a write to one page, the parent's entries all say exclusive while the other
 * 511 pages are mapped twice (smaps and kpagecount agree on 2).  Such blocks are looked
 * up page by page (one pread of 512 contiguous counts). */
static bool pmd_like(const uint64_t *ent)
{
	uint64_t pfn = kpm_pfn(ent[0]);
	size_t i;

	if (!kpm_present(ent[0]) || pfn % PMD_PAGES)
		return false;
	for (i = 1; i < PMD_PAGES; i++)
		if (!kpm_present(ent[i]) || kpm_pfn(ent[i]) != pfn + i)
			return false;
	return true;
}

/* Pages [start, start + n) of span `span` (n <= ENTRY_CHUNK, never across an aligned
 * ENTRY_CHUNK boundary): exclusive entries are private at once, the others wait for their
 * map counts. */
static int read_entries(struct engine *e, struct share_build *b, int fd, uint64_t start,
			size_t n, uint32_t span, bool anon)
{
	struct sharing *sh = e->sharing;
	struct share_span *sp = &b->s->spans[span];
	size_t i, trust_from = 0;
	int err = kpage_read_entries(fd, start, n, sh->ent);

	if (err)
		return err;
	sh->st.pages_read += n;
	b->s->pages_read += n;
	for (i = 0; i < n; i++) {
		uint64_t ent = sh->ent[i];

		if (!((start + i) % PMD_PAGES) && i + PMD_PAGES <= n && pmd_like(sh->ent + i))
			trust_from = i + PMD_PAGES;
		if (!kpm_present(ent))
			continue;	/* gone since the model's scan */
		if ((ent & KPM_EXCLUSIVE) && i >= trust_from) {
			sp->uss++;
			sp->pss += PAGE_SIZE_4K << SHARE_PSS_SHIFT;
			if (ent & KPM_FILE)
				b->sens[WORLD_FILE] += SENS_PRIVATE;
		} else if ((err = pend_add(sh, ent, start + i, span, anon))) {
			return err;
		}
	}
	return 0;
}

/* One looked-up page into its span and class. */
static void account(struct share_build *b, const struct share_pend *pd, uint64_t c,
		    uint64_t f)
{
	struct share_span *sp = &b->s->spans[pd->span];

	if (f & (1ULL << KPF_ZERO_BIT))
		return;	/* the zero page: in no Rss, Pss or Private */
	if (f & (1ULL << KPF_KSM_BIT))
		sp->ksm++;
	if (c <= 1) {
		sp->uss++;
		sp->pss += PAGE_SIZE_4K << SHARE_PSS_SHIFT;
		if (pd->file)
			b->sens[WORLD_FILE] += SENS_PRIVATE;
		return;
	}
	sp->shared++;
	sp->pss += (PAGE_SIZE_4K << SHARE_PSS_SHIFT) / c;
	b->sens[pd->file ? WORLD_FILE : WORLD_ANON] += sens_shared(c);
	share_mark(b->s, pd->page, c);
	if (pd->anon)
		b->anon_shared = true;	/* private file mappings are read anyway */
}

static int cmp_pend(const void *a, const void *b)
{
	const struct share_pend *x = a, *y = b;

	return (x->pfn > y->pfn) - (x->pfn < y->pfn);
}

static struct kcache_ent *kcache_slot(struct sharing *sh, uint64_t pfn, bool *hit)
{
	uint64_t h = (pfn * 0x9e3779b97f4a7c15ULL) >> (64 - KCACHE_BITS);
	int i;

	for (i = 0; i < KCACHE_PROBES; i++) {
		struct kcache_ent *c = &sh->cache[(h + i) & ((1u << KCACHE_BITS) - 1)];

		if (c->gen == sh->gen && c->pfn == pfn) {
			*hit = true;
			return c;
		}
		if (c->gen != sh->gen) {
			*hit = false;
			return c;	/* stale or empty: free for this tick */
		}
	}
	*hit = false;
	return NULL;		/* full around here: not cached */
}

/* mevitop is a mapper too: its binary's and libraries' pages (libc, libtinfo, ...) that a
 * watched process maps count one more while mevitop runs, and a page only the two of
 * them touched would be "shared by 2" -- private, once mevitop is gone, to smaps_rollup
 * and smem.  The observer takes itself out (kpage_self.c).  Read once a tick, at its
 * first lookup: mevitop maps and unmaps too (libmicrohttpd when --listen starts). */
void engine_share_discount_self(struct engine *e, const uint64_t *pfns, uint64_t *counts,
				size_t n)
{
	struct sharing *sh = e->sharing;
	int err;

	if (sh->self_off || !n)
		return;
	if (sh->self_gen != sh->gen) {
		uint64_t t0 = engine_now_ns();

		sh->self_gen = sh->gen;
		err = kpage_self_read(&sh->self);
		sh->st.self_ns += engine_now_ns() - t0;
		if (err)
			log_debug("sharing: own pagemap unread, counts include mevitop: %s",
				  strerror(-err));
		sh->st.self_pages = sh->self.n;
		sh->st.self_entries = sh->self.entries;
	}
	kpage_self_discount(&sh->self, pfns, counts, n);
}

/* Counts (and flags where needed: a count <= 1 may be the zero page, never counted or
 * rmapped; while KSM shares pages anywhere, which shared pages are KSM's) of the m
 * distinct PFNs the cache did not have, sh->mpfn[0..m) ascending. */
static int lookup_misses(struct engine *e, size_t m)
{
	struct sharing *sh = e->sharing;
	bool ksm = sh->ksm_sharing > 0;
	size_t j, f = 0;
	int err;

	if (!m)
		return 0;
	err = kpage_lookup(&sh->k, KPAGE_COUNT, sh->mpfn, m, sh->mcount);
	if (!err)
		engine_share_discount_self(e, sh->mpfn, sh->mcount, m);
	for (j = 0; !err && j < m; j++) {
		sh->mflag[j] = 0;
		if (sh->mcount[j] <= 1 || ksm) {
			sh->fidx[f] = j;
			sh->pfns[f++] = sh->mpfn[j];	/* ascending still */
		}
	}
	if (!err && f)
		err = kpage_lookup(&sh->k, KPAGE_FLAGS, sh->pfns, f, sh->fout);
	for (j = 0; !err && j < f; j++)
		sh->mflag[sh->fidx[j]] = sh->fout[j];
	sh->st.lookups += m;
	sh->st.preads = sh->k.preads;
	return err;
}

static int reserve_lookups(struct sharing *sh, size_t n)
{
	if (n <= sh->caplook)
		return 0;
	if (array_resize(sh->pfns, n) || array_resize(sh->counts, n) ||
	    array_resize(sh->flags, n) || array_resize(sh->fidx, n) ||
	    array_resize(sh->fout, n) || array_resize(sh->mpfn, n) ||
	    array_resize(sh->mcount, n) || array_resize(sh->mflag, n) ||
	    array_resize(sh->midx, n))
		return -ENOMEM;
	sh->caplook = n;
	return 0;
}

/* Map counts of the waiting pages (this tick's cache, else kpagecount), into the build's
 * spans and classes. */
static int resolve(struct engine *e, struct share_build *b)
{
	struct sharing *sh = e->sharing;
	size_t i, m = 0, n = sh->npend;
	int err;

	if (!n)
		return 0;
	if (reserve_lookups(sh, n))
		return -ENOMEM;
	qsort(sh->pend, n, sizeof(*sh->pend), cmp_pend);
	for (i = 0; i < n; i++) {
		uint64_t pfn = sh->pend[i].pfn;
		struct kcache_ent *c;
		bool hit;

		sh->midx[i] = SIZE_MAX;
		if (i && pfn == sh->pend[i - 1].pfn) {
			sh->counts[i] = sh->counts[i - 1];
			sh->flags[i] = sh->flags[i - 1];
			sh->midx[i] = sh->midx[i - 1];
		} else if ((c = kcache_slot(sh, pfn, &hit)) && hit) {
			sh->counts[i] = c->count;
			sh->flags[i] = c->flags;
			sh->st.cached++;
		} else {
			sh->mpfn[m] = pfn;
			sh->midx[i] = m++;
		}
	}
	err = lookup_misses(e, m);
	sh->npend = 0;
	if (err)
		return err;
	for (i = 0; i < m; i++) {
		bool hit;
		struct kcache_ent *c = kcache_slot(sh, sh->mpfn[i], &hit);

		if (c)
			*c = (struct kcache_ent){ sh->mpfn[i], sh->gen, (uint32_t)sh->mcount[i],
						  sh->mflag[i] };
	}
	for (i = 0; i < n; i++) {
		if (sh->midx[i] != SIZE_MAX) {
			sh->counts[i] = sh->mcount[sh->midx[i]];
			sh->flags[i] = sh->mflag[sh->midx[i]];
		}
		account(b, &sh->pend[i], sh->counts[i], sh->flags[i]);
	}
	return 0;
}

/* This tick has spent its time (and made progress: each tick reads something). */
static bool over_time(const struct sharing *sh)
{
	return sh->st.pages_read > sh->tick_read0 &&
	       engine_now_ns() - sh->tick_t0 > sh->tick_ns_max;
}

struct run_ctx {
	struct engine *e;
	struct share_build *b;
	int fd;
	uint32_t span;
	bool anon;
	uint64_t read, limit;	/* entries read, at most */
	uint64_t stop;		/* where the budget ran out, 0: the whole range was read */
	int err;
};

static int on_run(uint64_t start, uint64_t end, enum page_state s, void *arg)
{
	struct run_ctx *c = arg;
	uint64_t at, n;

	if (s != PS_RESIDENT)
		return 0;
	for (at = start; at < end; at += n) {
		/* Aligned chunks: a huge page's block lies within one (pmd_like); a budget
		 * smaller than a chunk (--sharing-budget) reads a huge page's worth at once. */
		uint64_t chunk = c->e->o.share_budget_pages >= ENTRY_CHUNK ? ENTRY_CHUNK :
				 PMD_PAGES;
		uint64_t next = (at | (chunk - 1)) + 1;

		n = (next < end ? next : end) - at;

		if (c->read >= c->limit || over_time(c->e->sharing)) {
			c->stop = at;
			return 1;
		}
		c->err = read_entries(c->e, c->b, c->fd, at, n, c->span, c->anon);
		if (!c->err && c->e->sharing->npend >= PEND_FLUSH)
			c->err = resolve(c->e, c->b);	/* lookups count against the time too */
		if (c->err)
			return c->err;
		c->read += n;
	}
	return 0;
}

static void on_thp(uint64_t start, uint64_t end, uint32_t cats, void *arg)
{
	if ((cats & PMC_HUGE) && (cats & PMC_PRESENT))
		*(uint64_t *)arg += end - start;
}

/* The pages of m a PMD maps (PAGEMAP_SCAN's PAGE_IS_HUGE: ~5 ns a 4 KiB page walked, one
 * step a huge page), once a pass, whether or not its PFNs are read. */
static int count_thp(struct engine *e, int fd, const struct mapping *m, struct share *s)
{
	if (!s->thp_known)
		return 0;
	return e->src->scan_pages(e->src_ctx, fd, mapping_start(m), mapping_end(m), on_thp,
				  &s->thp);
}

/* Reads p's mappings from the build's cursor on, within *budget entries (a mapping too
 * big for it is cut where the budget ran out).  Returns 1 when the pass is complete, 0
 * when the budget ran out, or -errno. */
static int build_step(struct engine *e, struct proc *p, struct share_build *b,
		      uint64_t *budget)
{
	struct pstate *s = ps(p);
	const struct mapping *m;
	int done = 1, err = 0;

	if (s->pagemap_fd < 0)
		s->pagemap_fd = e->src->open_pages(e->src_ctx, io(p));
	if (s->pagemap_fd < 0)
		return s->pagemap_fd;
	/* The cursor may be inside a mapping a budget cut: go on there. */
	m = model_find(p, b->cursor);
	for (m = m ? m : model_find_ge(p, b->cursor); m && !err; m = model_next(m)) {
		uint64_t from = mapping_start(m) > b->cursor ? mapping_start(m) : b->cursor;
		struct run_ctx c = { .e = e, .b = b, .fd = s->pagemap_fd, .anon = is_anon(m),
				     .limit = *budget };

		if (!readable(m, b->anon)) {
			/* The cursor is past it after this step. */
			if (share_counted(m) && from == mapping_start(m))
				err = count_thp(e, s->pagemap_fd, m, b->s);
			continue;
		}
		if (!*budget || over_time(e->sharing)) {
			b->cursor = from;	/* the rest at the next tick */
			done = 0;
			break;
		}
		if (from == mapping_start(m) && (err = count_thp(e, s->pagemap_fd, m, b->s)))
			break;
		if (!share_add_span(b->s, from, mapping_end(m))) {
			err = -ENOMEM;
			break;
		}
		c.span = b->s->n - 1;
		model_runs(p, from, mapping_end(m), on_run, &c);
		err = c.err;
		*budget -= c.read < *budget ? c.read : *budget;
		b->cursor = mapping_end(m);
		if (c.stop) {
			b->s->spans[c.span].end = b->cursor = c.stop;
			done = 0;
			break;
		}
	}
	/* Once per step: the PFNs of all its mappings sorted together share reads. */
	if (!err)
		err = resolve(e, b);
	e->sharing->npend = 0;
	return err ? err : done;
}

/* A complete pass replaces the process's figures. */
static void build_finish(struct engine *e, struct proc *p, struct share_build *b)
{
	struct pstate *s = ps(p);
	size_t i;

	share_finish(b->s);
	share_free(p->share);
	p->share = b->s;
	b->s = NULL;
	p->share->at_ns = b->start_ns;
	s->sharing->done_ns = b->start_ns;
	s->sharing->faults = b->faults;
	memcpy(s->sharing->world, b->world, sizeof(s->sharing->world));
	memcpy(s->sharing->sens, b->sens, sizeof(s->sharing->sens));
	s->sharing->pss = 0;
	for (i = 0; i < p->share->n; i++)
		s->sharing->pss += p->share->spans[i].pss;	/* what was read: the part that moves */
	if (b->anon && !b->anon_shared && !b->forked) {
		s->sharing->anon = false;	/* verified: nothing anonymous is shared */
		e->sharing->st.anon_verified++;
	}
	e->sharing->st.passes++;
	share_build_drop(s);
}

static bool moved(const struct proc *p)
{
	return p->faults != ps(p)->sharing->faults;
}

/* A forked pair shares its anonymous pages until one of them writes: when a process
 * that may share them faulted, its parent's pages may have become private, and a
 * parent's faults change its children's.  Marks those kin (share_kin). */
static void mark_kin(struct engine *e, struct proc **procs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct proc *p = procs[i], *parent;

		if (p->exited || !ps(p)->sharing->anon || !p->ppid)
			continue;
		parent = engine_find(e, p->ppid);
		if (!parent || parent->exited || !ps(parent)->sharing->anon)
			continue;
		if (moved(p))
			ps(parent)->sharing->kin = true;
		if (moved(parent))
			ps(p)->sharing->kin = true;
	}
}

/* Can the processes that moved since p's last pass began have moved its figures by more
 * than the drift allowed (sens above)? */
static bool world_moved(const struct sharing *sh, const struct pstate *s)
{
	unsigned __int128 drift = 0, allowed = s->sharing->pss >> SHARE_DRIFT_SHIFT;
	int i;

	if (!sh->world_seen)
		return true;
	for (i = 0; i < 2; i++)
		if (i == WORLD_FILE || s->sharing->anon)
			drift += (unsigned __int128)(sh->world[i] - s->sharing->world[i]) *
				 s->sharing->sens[i];
	if (allowed < SHARE_DRIFT_PAGES * SENS_PRIVATE)
		allowed = SHARE_DRIFT_PAGES * SENS_PRIVATE;
	return drift > allowed;
}

static bool due(const struct engine *e, const struct proc *p, uint64_t now)
{
	const struct pstate *s = ps(p);
	uint64_t period = e->o.share_period_ms * 1000000ULL, age = now - s->sharing->done_ns;

	if (s->sharing->build || s->sharing->due || !s->sharing->done_ns)
		return true;
	if (age >= period * SHARE_IDLE_FACTOR)
		return true;
	if (age >= period * SHARE_QUIET_FACTOR && world_moved(e->sharing, s))
		return true;
	return age >= period && (moved(p) || s->sharing->kin);
}

/* Counts the processes that moved since the last tick (struct sharing's world): a process
 * new or gone counts in both (a fork or an exit maps or unmaps pages of others, an exec
 * unmaps its parent's copies), one whose resident file-backed pages changed in the file
 * count, one whose anonymous memory may be shared and faulted or changed its anonymous
 * pages in the anonymous count.  model_totals and model_anon_resident are cached figures: an
 * idle process costs two compares. */
static void world_tick(struct engine *e, struct proc **procs, size_t n)
{
	struct sharing *sh = e->sharing;
	uint64_t bump[2] = { 0, 0 };
	size_t i;

	for (i = 0; i < n; i++) {
		struct proc *p = procs[i];
		struct share_sig *g = &ps(p)->sharing->sig, now = { .seen = true };
		uint64_t counts[PS_COUNT];

		if (g->gone)
			continue;
		if (p->exited) {
			g->gone = true;
			bump[WORLD_FILE]++;
			bump[WORLD_ANON]++;
			continue;
		}
		if (!p->ready)
			continue;
		model_totals(p, counts);
		now.faults = p->faults;
		now.anon = model_anon_resident(p);
		now.file = counts[PS_RESIDENT] - now.anon;
		if (!g->seen) {
			bump[WORLD_FILE]++;
			bump[WORLD_ANON]++;
		} else {
			bump[WORLD_FILE] += now.file != g->file;
			bump[WORLD_ANON] += ps(p)->sharing->anon && (now.anon != g->anon ||
								    now.faults != g->faults);
		}
		*g = now;
	}
	for (i = 0; i < 2; i++)
		sh->world[i] += bump[i];
}

/* KSM merged pages somewhere since the last tick: processes with merged pages have
 * anonymous pages other processes map.  pages_sharing alone misses merges: ksmd drops an
 * exited process's merged pages (counted until ksmd runs again) while it merges others,
 * and the count can end where it was; a merge is made by a scan, so ksmd's progress
 * counts too (while ksmd runs, each tick reads every process's merged pages, ~13 us a
 * process).  A process whose count moved -- one whose anonymous memory was shared already
 * (a fork) too, and one whose pages were unmerged -- is read again at the next tick. */
static void ksm_check(struct engine *e, struct proc **procs, size_t n)
{
	struct sharing *sh = e->sharing;
	uint64_t sharing, scanned = 0;
	size_t i;

	if (kpage_ksm_sharing(&sharing))
		return;
	kpage_ksm_scanned(&scanned);	/* unreadable: 0, pages_sharing alone */
	if (sharing == sh->ksm_sharing && scanned == sh->ksm_scanned)
		return;
	sh->ksm_sharing = sharing;
	sh->ksm_scanned = scanned;
	for (i = 0; i < n; i++) {
		struct pstate *s = ps(procs[i]);
		uint64_t merged = 0;

		if (procs[i]->exited || (!sharing && !s->sharing->ksm_merged) ||
		    kpage_ksm_merging(io(procs[i]), &merged) || merged == s->sharing->ksm_merged)
			continue;
		s->sharing->ksm_merged = merged;
		s->sharing->due = true;
		if (merged)
			s->sharing->anon = true;
	}
}

static int start_build(struct engine *e, struct proc *p, uint64_t now)
{
	struct pstate *s = ps(p);

	s->sharing->build = calloc(1, sizeof(*s->sharing->build));
	if (!s->sharing->build || !(s->sharing->build->s = share_new())) {
		share_build_drop(s);
		return -ENOMEM;
	}
	s->sharing->build->start_ns = now;
	s->sharing->build->s->thp_known = e->use_scan;	/* pread's entries say nothing of PMDs */
	s->sharing->build->faults = p->faults;
	memcpy(s->sharing->build->world, e->sharing->world, sizeof(s->sharing->build->world));
	s->sharing->build->anon = s->sharing->anon;
	s->sharing->due = s->sharing->kin = false;
	return 0;
}

void engine_share_tick(struct engine *e, struct proc **procs, size_t n)
{
	struct sharing *sh = e->sharing;
	uint64_t now = engine_now_ns(), budget, t0 = now, read0;
	size_t k;

	if (!sh || engine_quitting())
		return;
	if (!++sh->gen)
		sh->gen = 1;	/* 0 marks an empty cache slot */
	ksm_check(e, procs, n);
	mark_kin(e, procs, n);
	world_tick(e, procs, n);
	budget = e->o.share_budget_pages / (e->scale ? e->scale : 1);
	read0 = sh->tick_read0 = sh->st.pages_read;
	sh->tick_ns_max = budget * SHARE_NS_PER_ENTRY;
	if (sh->tick_ns_max < SHARE_TICK_NS_MIN)
		sh->tick_ns_max = SHARE_TICK_NS_MIN;	/* a small budget binds by entries */
	sh->tick_t0 = t0;
	for (k = 0; k < n && budget; k++) {
		struct proc *p = procs[(sh->cursor + k) % n];
		struct pstate *s = ps(p);
		int r;

		if (p->exited || !p->ready || (p->pending & PEND_RELOAD) || !due(e, p, now))
			continue;
		if (!s->sharing->build && start_build(e, p, now))
			break;
		r = build_step(e, p, s->sharing->build, &budget);
		if (r == 1) {
			build_finish(e, p, s->sharing->build);
		} else if (r < 0) {
			if (r != -ESRCH)
				log_debug("sharing pass of %d failed: %s", p->pid, strerror(-r));
			share_build_drop(s);	/* again from the start at its next turn */
			s->sharing->done_ns = now;
		} else {
			break;	/* out of budget: this process first at the next tick */
		}
	}
	sh->cursor = n ? (sh->cursor + k) % n : 0;
	sh->st.tick_pages = sh->st.pages_read - read0;
	sh->st.tick_ns = engine_now_ns() - t0;
	sh->st.total_ns += sh->st.tick_ns;
}
