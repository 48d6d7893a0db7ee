// SPDX-License-Identifier: GPL-2.0
/*
 * The cursor line's sharers (--sharing): which other watched processes map the physical
 * page under the cursor, for the terminal's cursor line and the web view's /api/who.
 */
#include <errno.h>
#include <string.h>
#include "lib/array.h"
#include "lib/page.h"
#include "engine/engine_int.h"
#include "engine/share_int.h"
#include "kernel/kpage.h"
#include "model/share_figs.h"

/*
 * The cursor line's sharers.  A PFN says nothing of who maps it (the kernel's rmap is not
 * exported), and the passes keep no PFNs, so this looks where another process can map the
 * same page and compares PFNs read now:
 * - a file or shmem page: the same file offset in each mapping of that file (dev, inode);
 * - the vdso: the same offset in each vdso;
 * - an anonymous page, or a private file mapping's written copy: the same address, in
 *   each process whose anonymous memory may be shared (share_anon: a fork keeps
 *   addresses, so parent, children and their children map a copy-on-write page there).
 * Then, while the page's map count (kpagecount, read now) says some mappers are still
 * unaccounted for, an anonymous page (kpageflags) is looked for by PFN in the processes
 * those reads did not find it in:
 * - a KSM page (KSM merges pages at any address of any process): in the ranges where
 *   another process's last pass found KSM pages (its spans with ksm), then, merged since
 *   that pass, as below in each process KSM merged pages of (ksm_merging_pages);
 * - any other anonymous page (mremap moves a copy-on-write page to another address in
 *   the parent or the child): in the resident pages (the model's) of the private mappings
 *   of each process whose anonymous memory may be shared;
 * ENTRY_CHUNK entries a pread, at most SHARE_WHO_SCAN_ENTRIES of them (2 MiB of pagemap,
 * ~1-3 ms) a lookup: past that the answer is cut (+?).
 * One pagemap pread a place, at most SHARE_WHO_READS of them (~1 us each): a box of 300
 * forks of one program is one cursor move's quarter of a millisecond, and once every
 * mapper the count says is found, no search.
 */
#define SHARE_WHO_READS	256
#define SHARE_WHO_SCAN_ENTRIES	(1u << 18)

struct who_ctx {
	struct engine *e;
	uint64_t pfn;
	uint32_t reads;
	uint32_t scan_entries;		/* read searching by PFN */
	uint64_t count;			/* its map count now (kpagecount), 0: unknown */
	bool anon;			/* the page is anonymous (kpageflags) */
	bool ksm;			/* ... and KSM's */
	struct share_who *out;
};

/* Does q map c->pfn at page?  Counts the read; false once the budget is spent. */
static bool maps_pfn(struct who_ctx *c, struct proc *q, uint64_t page)
{
	struct pstate *s = ps(q);
	uint64_t ent;

	if (c->reads >= SHARE_WHO_READS) {
		c->out->cut = true;
		return false;
	}
	c->reads++;
	if (s->pagemap_fd < 0)
		s->pagemap_fd = c->e->src->open_pages(c->e->src_ctx, io(q));
	return s->pagemap_fd >= 0 && !kpage_read_entries(s->pagemap_fd, page, 1, &ent) &&
	       kpm_present(ent) && kpm_pfn(ent) == c->pfn;
}

static bool same_object(const struct mapping *a, const struct mapping *b)
{
	if (a->kind == MK_VDSO)
		return b->kind == MK_VDSO;
	return (a->kind == MK_FILE || a->kind == MK_SHMEM) && a->ino && b->kind == a->kind &&
	       b->ino == a->ino && b->dev_major == a->dev_major && b->dev_minor == a->dev_minor;
}

/* Does q map the page of m at page (p's) where it could? */
static bool shares_page(struct who_ctx *c, struct proc *q, const struct mapping *m,
			uint64_t page)
{
	uint64_t fo = m->offset / PAGE_SIZE_4K + (page - mapping_start(m)), read = UINT64_MAX;
	const struct mapping *qm;

	if (is_anon(m) || (m->kind == MK_FILE && !(m->perms & MP_SHARED))) {
		qm = model_find(q, page);
		if (ps(q)->sharing->anon && qm && (is_anon(qm) || (qm->kind == MK_FILE &&
		    !(qm->perms & MP_SHARED)))) {
			if (maps_pfn(c, q, page))
				return true;
			read = page;
		}
	}
	if (is_anon(m))
		return false;
	for (qm = model_first(q); qm; qm = model_next(qm)) {
		uint64_t qo = qm->offset / PAGE_SIZE_4K, len = mapping_end(qm) - mapping_start(qm);

		if (m->kind == MK_VDSO)
			qo = m->offset / PAGE_SIZE_4K;	/* no file: offsets from the start */
		if (same_object(m, qm) && fo >= qo && fo < qo + len &&
		    mapping_start(qm) + fo - qo != read &&
		    maps_pfn(c, q, mapping_start(qm) + fo - qo))
			return true;
	}
	return false;
}

/* Does q map the KSM page c->pfn in a range its last pass found KSM pages in? */
static bool maps_ksm_page(struct who_ctx *c, struct proc *q)
{
	struct sharing *sh = c->e->sharing;
	struct pstate *s = ps(q);
	size_t i, k;

	if (!c->ksm || !q->share)
		return false;
	for (i = 0; i < q->share->n; i++) {
		const struct share_span *sp = &q->share->spans[i];
		uint64_t a;

		if (!sp->ksm)
			continue;
		for (a = sp->start; a < sp->end; a += ENTRY_CHUNK) {
			size_t n = sp->end - a < ENTRY_CHUNK ? sp->end - a : ENTRY_CHUNK;

			if (c->scan_entries + n > SHARE_WHO_SCAN_ENTRIES) {
				c->out->cut = true;
				return false;
			}
			c->scan_entries += n;
			if (s->pagemap_fd < 0)
				s->pagemap_fd = c->e->src->open_pages(c->e->src_ctx, io(q));
			if (s->pagemap_fd < 0 || kpage_read_entries(s->pagemap_fd, a, n, sh->ent))
				return false;
			for (k = 0; k < n; k++)
				if (kpm_present(sh->ent[k]) && kpm_pfn(sh->ent[k]) == c->pfn)
					return true;
		}
	}
	return false;
}

struct scan_ctx {
	struct who_ctx *c;
	int fd;
	bool found, failed;
};

static int on_scan(uint64_t start, uint64_t end, enum page_state st, void *arg)
{
	struct scan_ctx *x = arg;
	struct who_ctx *c = x->c;
	uint64_t *ent = c->e->sharing->ent, a, n, k;

	if (st != PS_RESIDENT)
		return 0;
	for (a = start; a < end; a += n) {
		n = end - a < ENTRY_CHUNK ? end - a : ENTRY_CHUNK;
		if (n > SHARE_WHO_SCAN_ENTRIES - c->scan_entries)
			n = SHARE_WHO_SCAN_ENTRIES - c->scan_entries;
		if (!n) {
			c->out->cut = true;
			return 1;
		}
		c->scan_entries += n;
		if (kpage_read_entries(x->fd, a, n, ent)) {
			x->failed = true;
			return 1;
		}
		for (k = 0; k < n; k++)
			if (kpm_present(ent[k]) && kpm_pfn(ent[k]) == c->pfn) {
				x->found = true;
				return 1;
			}
	}
	return 0;
}

/* Does q map the anonymous page c->pfn anywhere in its private mappings? */
static bool maps_anon_page(struct who_ctx *c, struct proc *q)
{
	struct pstate *s = ps(q);
	struct scan_ctx x = { .c = c };
	const struct mapping *qm;

	if (s->pagemap_fd < 0)
		s->pagemap_fd = c->e->src->open_pages(c->e->src_ctx, io(q));
	x.fd = s->pagemap_fd;
	for (qm = model_first(q); x.fd >= 0 && qm && !x.found && !x.failed && !c->out->cut;
	     qm = model_next(qm))
		if (is_anon(qm) || (qm->kind == MK_FILE && !(qm->perms & MP_SHARED)))
			model_runs(q, mapping_start(qm), mapping_end(qm), on_scan, &x);
	return x.found;
}

/* Can q map a KSM page?  Only if ksmd merged some of its pages (ksm_merging_pages, read
 * now: one small read, where the search would read all its resident private memory);
 * without the file (before 5.19): maybe. */
static bool ksm_merged(const struct proc *q)
{
	uint64_t merged;

	return kpage_ksm_merging(io(q), &merged) || merged;
}

/* One more process found: out->pids keeps the lowest, ascending; comm is pids[0]'s. */
static void who_add(struct share_who *out, const struct proc *q)
{
	uint32_t k = out->n < SHARE_WHO_MAX ? out->n : SHARE_WHO_MAX;

	out->n++;
	if (k == SHARE_WHO_MAX && q->pid > out->pids[k - 1])
		return;
	if (k == SHARE_WHO_MAX)
		k--;		/* the highest kept makes room */
	for (; k && out->pids[k - 1] > q->pid; k--)
		out->pids[k] = out->pids[k - 1];
	out->pids[k] = q->pid;
	if (!k)
		memcpy(out->comm, q->comm, sizeof(out->comm));
}

/* Every mapper the page's count says is found (each process maps it once at least, p
 * too): nobody else to look for. */
static bool all_found(const struct who_ctx *c)
{
	return c->count && c->out->n + 1 >= c->count;
}

static int todo_add(struct sharing *sh, struct proc *q)
{
	if (array_reserve(sh->who_todo, sh->nwho_todo, sh->capwho_todo, 64))
		return -ENOMEM;
	sh->who_todo[sh->nwho_todo++] = q;
	return 0;
}

int engine_share_who(struct engine *e, pid_t pid, uint64_t page, struct share_who *out)
{
	struct sharing *sh = e->sharing;
	struct who_ctx c = { .e = e, .out = out };
	struct proc *p = sh ? engine_find(e, pid) : NULL, *q;
	const struct mapping *m = p ? model_find(p, page) : NULL;
	uint64_t ent;
	size_t i;
	int err;

	memset(out, 0, sizeof(*out));
	if (!m || p->exited || !p->ready)
		return -ENOENT;
	if (sh->who_gen && sh->who_gen == sh->gen && sh->who_pid == pid && sh->who_page == page) {
		*out = sh->who;
		return 0;
	}
	if (ps(p)->pagemap_fd < 0)
		ps(p)->pagemap_fd = e->src->open_pages(e->src_ctx, io(p));
	if (ps(p)->pagemap_fd < 0)
		return ps(p)->pagemap_fd;
	err = kpage_read_entries(ps(p)->pagemap_fd, page, 1, &ent);
	if (err)
		return err;
	out->known = kpm_present(ent) && share_counted(m);
	c.pfn = kpm_pfn(ent);
	if (out->known && kpage_lookup(&sh->k, KPAGE_COUNT, &c.pfn, 1, &c.count))
		c.count = 0;
	engine_share_discount_self(e, &c.pfn, &c.count, 1);
	if (out->known && !(m->perms & MP_SHARED)) {	/* anonymous pages are private ones */
		uint64_t f;

		if (!kpage_lookup(&sh->k, KPAGE_FLAGS, &c.pfn, 1, &f)) {
			c.anon = f & (1ULL << KPF_ANON_BIT);
			c.ksm = f & (1ULL << KPF_KSM_BIT);
		}
	}
	/* The pid table's chains (engine_procs is the engine's caller's): found in hash
	 * order, the lowest pids kept.  Where the others can map it first, then the search. */
	sh->nwho_todo = 0;
	for (i = 0; out->known && i < NBUCKETS && !out->cut && !all_found(&c); i++)
		for (q = e->buckets[i]; q && !out->cut && !all_found(&c); q = q->hnext) {
			if (q == p || q->exited || !q->ready)
				continue;
			if (shares_page(&c, q, m, page))
				who_add(out, q);
			else if (c.anon && (c.ksm || ps(q)->sharing->anon) && todo_add(sh, q))
				out->cut = true;	/* ENOMEM: not searched */
		}
	for (i = 0; c.ksm && i < sh->nwho_todo && !out->cut && !all_found(&c); i++)
		if (maps_ksm_page(&c, sh->who_todo[i])) {
			who_add(out, sh->who_todo[i]);
			sh->who_todo[i] = NULL;
		}
	/* A KSM page too: ksmd may have merged it after q's last pass, where that pass found
	 * no KSM page -- in the refresh before ksm_check sees q's merged count move and has
	 * it read again, or in a merge no counter showed.  ksm_merged reads the count now
	 * (ksm_check's copy is as old as its last look). */
	for (i = 0; i < sh->nwho_todo && !out->cut && !all_found(&c); i++)
		if (sh->who_todo[i] && (!c.ksm || ksm_merged(sh->who_todo[i])) &&
		    maps_anon_page(&c, sh->who_todo[i]))
			who_add(out, sh->who_todo[i]);
	sh->who = *out;
	sh->who_pid = pid;
	sh->who_page = page;
	sh->who_gen = sh->gen;
	return 0;
}
