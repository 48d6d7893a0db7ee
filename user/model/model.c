// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/slab.h"
#include "lib/strpool.h"
#include "model/model.h"
#include "model/model_int.h"

/* --- a process's mappings (its lifetime is proc.c) --- */

static struct slab mappings = SLAB_INIT(struct mapping);

static void free_mapping(struct mapping *m)
{
	strpool_put(m->path);
	slab_free(&mappings, m);
}

static void drop_mappings(struct proc *p)
{
	struct itree_node *n;

	while ((n = itree_min(&p->maps))) {
		itree_remove(&p->maps, n);
		free_mapping(node_map(n));
	}
	p->mapped_pages = 0;
	model_changed(p);
}

void model_clear_layout(struct proc *p)
{
	drop_mappings(p);
}

static struct mapping *mapping_dup(const struct mapping *m)
{
	struct mapping *c = slab_alloc(&mappings);

	if (!c)
		return NULL;
	*c = *m;
	memset(&c->node, 0, sizeof(c->node));
	c->node.start = m->node.start;
	c->node.last = m->node.last;
	c->path = NULL;
	if (m->path && !(c->path = strpool_get(m->path))) {
		slab_free(&mappings, c);
		return NULL;
	}
	return c;
}

static void insert_mapping(struct proc *p, struct mapping *m)
{
	itree_insert(&p->maps, &m->node);
	p->mapped_pages += m->node.last - m->node.start + 1;
	model_changed(p);
}

static void remove_mapping(struct proc *p, struct mapping *m)
{
	itree_remove(&p->maps, &m->node);
	p->mapped_pages -= m->node.last - m->node.start + 1;
	model_changed(p);
}

int model_copy_layout(struct proc *c, const struct proc *p)
{
	struct itree_node *n;

	for (n = itree_min(&p->maps); n; n = itree_next(n)) {
		struct mapping *m = mapping_dup(node_map(n));

		if (!m)
			return -ENOMEM;
		insert_mapping(c, m);
	}
	return 0;
}

/* --- mapping layout --- */

struct mapping *model_find(const struct proc *p, uint64_t page)
{
	struct itree_node *n = itree_first_overlap(&p->maps, page, page);

	return n ? node_map(n) : NULL;
}

struct mapping *model_find_ge(const struct proc *p, uint64_t page)
{
	struct itree_node *n = itree_first_ge(&p->maps, page);

	return n ? node_map(n) : NULL;
}

struct mapping *model_first(const struct proc *p)
{
	struct itree_node *n = itree_min(&p->maps);

	return n ? node_map(n) : NULL;
}

struct mapping *model_next(const struct mapping *m)
{
	struct itree_node *n = itree_next(&m->node);

	return n ? node_map(n) : NULL;
}

struct mapping *model_heap(const struct proc *p)
{
	struct mapping *m;

	for (m = model_first(p); m; m = model_next(m))
		if (m->kind == MK_HEAP)
			return m;
	return NULL;
}

size_t model_count_maps(const struct proc *p)
{
	return p->maps.count;
}

/* Splits the mapping containing `page` so that a mapping starts exactly at `page`. */
static int split_at(struct proc *p, uint64_t page)
{
	struct mapping *m = model_find(p, page), *hi;

	if (!m || m->node.start == page)
		return 0;
	hi = mapping_dup(m);
	if (!hi)
		return -ENOMEM;
	remove_mapping(p, m);
	hi->node.start = page;
	if (m->path)
		hi->offset = m->offset + ((page - m->node.start) << PAGE_SHIFT_4K);
	m->node.last = page - 1;
	insert_mapping(p, m);
	insert_mapping(p, hi);
	return 0;
}

/* Splits so that [start, end) is made of whole mappings: one starts at start, one at end. */
static int split_range(struct proc *p, uint64_t start, uint64_t end)
{
	int err = split_at(p, start);

	return err ? err : split_at(p, end);
}

static bool same_attrs(const struct mapping *a, const struct mapping *b)
{
	if (a->perms != b->perms || a->flags != b->flags || a->kind != b->kind ||
	    a->ino != b->ino || a->dev_major != b->dev_major || a->dev_minor != b->dev_minor)
		return false;
	if (!a->path != !b->path)
		return false;
	if (a->path && strcmp(a->path, b->path))
		return false;
	/* File pieces merge only when the offsets continue. */
	if (a->path && a->offset + ((a->node.last + 1 - a->node.start) << PAGE_SHIFT_4K) !=
		       b->offset)
		return false;
	return true;
}

/* Merges hi into lo when they are contiguous twins; returns the survivor or NULL. */
static struct mapping *merge_pair(struct proc *p, struct mapping *lo, struct mapping *hi)
{
	if (lo->node.last + 1 != hi->node.start || !same_attrs(lo, hi) ||
	    lo->kind == MK_HEAP || lo->kind == MK_STACK)
		return NULL;
	remove_mapping(p, lo);
	remove_mapping(p, hi);
	lo->node.last = hi->node.last;
	free_mapping(hi);
	insert_mapping(p, lo);
	return lo;
}

/* Merges m with contiguous neighbours of identical attributes, as the kernel merges VMAs
 * (mprotect back and forth, adjacent anonymous mmaps); keeps the layout readable. */
static struct mapping *try_merge(struct proc *p, struct mapping *m)
{
	struct itree_node *n;
	struct mapping *merged;

	n = itree_prev(&m->node);
	if (n && (merged = merge_pair(p, node_map(n), m)))
		m = merged;
	n = itree_next(&m->node);
	if (n)
		merge_pair(p, m, node_map(n));
	return m;
}

/* Removes the mappings inside [start, end) (after splitting at both ends). */
static int cut_range(struct proc *p, uint64_t start, uint64_t end)
{
	struct itree_node *n;
	int err;

	if (start >= end)
		return 0;
	err = split_range(p, start, end);
	if (err)
		return err;
	while ((n = itree_first_overlap(&p->maps, start, end - 1))) {
		struct mapping *m = node_map(n);

		remove_mapping(p, m);
		free_mapping(m);
	}
	return 0;
}

static void clear_pages(struct proc *p, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < MODEL_NTRACKED; i++)
		pageset_remove_range(p->set[model_tracked[i]], start, end);
	model_changed(p);
}

/* What struct mapping's bit fields must hold. */
_Static_assert(MK_COUNT <= 256 && MF_PFNMAP < (1u << 16) && MP_SHARED < (1u << 8),
	       "struct mapping's kind, flags or perms outgrew their bits");

static struct mapping *new_mapping(uint64_t start, uint64_t end, const struct mapping_attrs *a)
{
	struct mapping *m = slab_alloc(&mappings);

	if (!m)
		return NULL;
	m->node.start = start;
	m->node.last = end - 1;
	m->offset = a->offset;
	m->ino = a->ino;
	m->dev_major = a->dev_major;
	m->dev_minor = a->dev_minor;
	m->perms = a->perms;
	m->flags = a->flags;
	m->kind = a->kind;
	if (a->path && *a->path && !(m->path = strpool_get(a->path))) {
		slab_free(&mappings, m);
		return NULL;
	}
	return m;
}

/* keep: the layout comes from /proc/PID/maps, whose boundaries are the kernel's own, so
 * nothing is merged and page states stay. */
static int map_common(struct proc *p, uint64_t start, uint64_t end,
		      const struct mapping_attrs *a, bool keep)
{
	struct mapping *m;
	int err;

	if (start >= end)
		return -EINVAL;
	err = cut_range(p, start, end);
	if (err)
		return err;
	if (!keep)
		clear_pages(p, start, end);
	m = new_mapping(start, end, a);
	if (!m)
		return -ENOMEM;
	insert_mapping(p, m);
	if (!keep)
		try_merge(p, m);
	return 0;
}

int model_map(struct proc *p, uint64_t start, uint64_t end, const struct mapping_attrs *a)
{
	return map_common(p, start, end, a, false);
}

int model_map_keep(struct proc *p, uint64_t start, uint64_t end, const struct mapping_attrs *a)
{
	return map_common(p, start, end, a, true);
}

void model_unmap(struct proc *p, uint64_t start, uint64_t end)
{
	if (start >= end)
		return;
	cut_range(p, start, end);
	clear_pages(p, start, end);
}

int model_remap(struct proc *p, uint64_t old, uint64_t old_len, uint64_t new, uint64_t new_len,
		bool keep_old)
{
	struct mapping *moved[64], **list = moved, *last = NULL;
	size_t n = 0, cap = 64, i;
	struct itree_node *nd;
	int err = 0;

	if (new_len < old_len) {
		model_unmap(p, old + new_len, old + old_len);
		old_len = new_len;
	}
	if (old_len == 0)
		return -EINVAL;
	if (new == old) {
		/* Grown in place: the pages beyond the old end are new and untouched. */
		struct mapping *m = model_find(p, old + old_len - 1);

		if (!m)
			return -ENOENT;
		if (new_len > old_len) {
			model_unmap(p, old + old_len, old + new_len);
			err = model_set_end(p, m, old + new_len);
		}
		return err;
	}
	err = split_range(p, old, old + old_len);
	if (err)
		return err;
	/* The destination is replaced (MREMAP_FIXED) and the pages travel with the mapping:
	 * mremap moves page table entries, it does not copy or fault. */
	model_unmap(p, new, new + new_len);
	for (i = 0; i < MODEL_NTRACKED; i++)
		pageset_move_range(p->set[model_tracked[i]], old, old + old_len, new);
	model_changed(p);

	while ((nd = itree_first_overlap(&p->maps, old, old + old_len - 1))) {
		struct mapping *m = node_map(nd);

		if (n == cap) {
			struct mapping **bigger = malloc(2 * cap * sizeof(*bigger));

			if (!bigger) {
				err = -ENOMEM;
				break;
			}
			memcpy(bigger, list, n * sizeof(*bigger));
			if (list != moved)
				free(list);
			list = bigger;
			cap *= 2;
		}
		remove_mapping(p, m);
		list[n++] = m;
	}
	for (i = 0; i < n; i++) {
		struct mapping *m = list[i];

		if (keep_old) {
			struct mapping *stay = mapping_dup(m);

			if (stay)
				insert_mapping(p, stay);
		}
		m->node.start = m->node.start - old + new;
		m->node.last = m->node.last - old + new;
		insert_mapping(p, m);
		if (!last || m->node.last > last->node.last)
			last = m;
	}
	if (list != moved)
		free(list);
	if (last && new_len > old_len)
		err = model_set_end(p, last, new + new_len);
	return err;
}

static int change_range(struct proc *p, uint64_t start, uint64_t end, bool set_perms,
			uint32_t perms, uint32_t set, uint32_t clear)
{
	struct itree_node *nd;
	int err;

	if (start >= end)
		return 0;
	err = split_range(p, start, end);
	if (err)
		return err;
	for (nd = itree_first_overlap(&p->maps, start, end - 1); nd;
	     nd = itree_next_overlap(nd, start, end - 1)) {
		struct mapping *m = node_map(nd);

		if (set_perms)
			m->perms = (m->perms & MP_SHARED) | (perms & ~MP_SHARED);
		m->flags = (m->flags | set) & ~clear;
	}
	model_changed(p);
	/* The kernel merges VMAs that became alike; merging frees nodes, so walk again from
	 * each merged result. */
	nd = itree_first_overlap(&p->maps, start, end - 1);
	while (nd) {
		struct mapping *m = try_merge(p, node_map(nd));

		if (m->node.last + 1 >= end)
			break;
		nd = itree_first_overlap(&p->maps, m->node.last + 1, end - 1);
	}
	return 0;
}

int model_protect(struct proc *p, uint64_t start, uint64_t end, uint32_t perms)
{
	return change_range(p, start, end, true, perms, 0, 0);
}

int model_set_flags(struct proc *p, uint64_t start, uint64_t end, uint32_t set, uint32_t clear)
{
	return change_range(p, start, end, false, 0, set, clear);
}

void model_grow_down(struct proc *p, struct mapping *m, uint64_t page)
{
	if (page >= m->node.start)
		return;
	model_unmap(p, page, m->node.start);
	remove_mapping(p, m);
	m->node.start = page;
	insert_mapping(p, m);
}

int model_set_end(struct proc *p, struct mapping *m, uint64_t end)
{
	if (end <= m->node.start) {
		model_unmap(p, m->node.start, m->node.last + 1);
		return 0;
	}
	if (end < m->node.last + 1) {
		clear_pages(p, end, m->node.last + 1);
	} else if (end > m->node.last + 1) {
		uint64_t old_end = m->node.last + 1;

		/* Whatever sat in the way is gone (the kernel only grows into free space). */
		if (itree_first_overlap(&p->maps, old_end, end - 1)) {
			cut_range(p, old_end, end);
		}
		clear_pages(p, old_end, end);
	}
	remove_mapping(p, m);
	m->node.last = end - 1;
	insert_mapping(p, m);
	return 0;
}

/* --- page states --- */

const char *model_page_state_name(enum page_state s)
{
	static const char *names[PS_COUNT] = {
		[PS_NOT_RESIDENT] = "not_resident", [PS_RESIDENT] = "resident",
		[PS_SWAPPED] = "swapped", [PS_UNTRACKED] = "untracked",
	};
	return s < PS_COUNT ? names[s] : "?";
}

void model_set_state(struct proc *p, uint64_t start, uint64_t end, enum page_state s)
{
	size_t i;

	if (start >= end)
		return;
	for (i = 0; i < MODEL_NTRACKED; i++)
		if (model_tracked[i] != s)
			pageset_remove_range(p->set[model_tracked[i]], start, end);
	if (s != PS_NOT_RESIDENT)
		pageset_add_range(p->set[s], start, end);
	model_changed(p);
}

void model_set_page(struct proc *p, uint64_t page, enum page_state s)
{
	size_t i;

	if (s != PS_NOT_RESIDENT && pageset_contains(p->set[s], page))
		return;
	for (i = 0; i < MODEL_NTRACKED; i++)
		if (model_tracked[i] != s && pageset_contains(p->set[model_tracked[i]], page))
			pageset_remove_range(p->set[model_tracked[i]], page, page + 1);
	if (s != PS_NOT_RESIDENT)
		pageset_add(p->set[s], page);
	model_changed(p);
}

enum page_state model_page_state(const struct proc *p, uint64_t page)
{
	size_t i;

	for (i = 0; i < MODEL_NTRACKED; i++)
		if (pageset_contains(p->set[model_tracked[i]], page))
			return model_tracked[i];
	return PS_NOT_RESIDENT;
}

uint64_t model_count(const struct proc *p, enum page_state s, uint64_t start, uint64_t end)
{
	if (s == PS_NOT_RESIDENT || s >= PS_COUNT || start >= end)
		return 0;
	return pageset_count_range(p->set[s], start, end);
}

/* The walk struct proc's figs stand for.  A cache, not a change of p: written under the
 * lock the reader holds, hence the cast. */
static const struct proc_figs *figs(const struct proc *p)
{
	struct proc_figs *f = (struct proc_figs *)&p->figs;
	struct itree_node *n;
	size_t i;

	if (f->stamp == p->gen + 1)
		return f;
	f->layout_bytes = 0;
	f->anon_resident = 0;
	for (n = itree_min(&p->maps); n; n = itree_next(n)) {
		const struct mapping *m = node_map(n);

		f->layout_bytes += sizeof(*m) + (m->path ? strlen(m->path) + 1 : 0);
		if (map_kind_private_anon(m->kind))
			f->anon_resident += model_count(p, PS_RESIDENT, mapping_start(m),
							mapping_end(m));
	}
	for (i = 0; i < MODEL_NTRACKED; i++)
		f->layout_bytes += pageset_bytes(p->set[model_tracked[i]]);
	f->stamp = p->gen + 1;
	return f;
}

size_t model_layout_bytes(const struct proc *p)
{
	return figs(p)->layout_bytes;
}

uint64_t model_anon_resident(const struct proc *p)
{
	return figs(p)->anon_resident;
}

void model_totals(const struct proc *p, uint64_t counts[PS_COUNT])
{
	size_t i;

	struct proc_figs *f = (struct proc_figs *)&p->figs;	/* a cache: as figs() */

	if (f->counts_stamp != p->gen + 1) {
		for (i = 0; i < MODEL_NTRACKED; i++)
			f->counts[i] = pageset_count(p->set[model_tracked[i]]);
		f->counts_stamp = p->gen + 1;
	}
	counts[PS_NOT_RESIDENT] = p->mapped_pages;
	for (i = 0; i < MODEL_NTRACKED; i++) {
		counts[model_tracked[i]] = f->counts[i];
		counts[PS_NOT_RESIDENT] -= f->counts[i];
	}
}

/* Heat for pages that became resident: spread over the blocks of the run. */
static void warm_scanned_pages(struct proc *p, const struct scan_run *r, uint64_t now_ns)
{
	uint64_t len = r->end - r->start, fresh, b, b0, b1;

	fresh = len - pageset_count_range(p->set[PS_RESIDENT], r->start, r->end);
	if (!fresh)
		return;
	b0 = r->start >> HEAT_BLOCK_SHIFT;
	b1 = (r->end - 1) >> HEAT_BLOCK_SHIFT;
	for (b = b0; b <= b1; b++) {
		uint64_t s = b << HEAT_BLOCK_SHIFT, t = s + (1ULL << HEAT_BLOCK_SHIFT);

		if (s < r->start)
			s = r->start;
		if (t > r->end)
			t = r->end;
		heat_add(&p->heat, s, (float)fresh * (t - s) / len, now_ns);
	}
}

uint64_t model_apply_scan(struct proc *p, uint64_t start, uint64_t end,
			  const struct scan_run *runs, size_t n, uint64_t heat_now_ns)
{
	uint64_t old_total = 0, new_total = 0, both, same = 0;
	size_t i, k;

	if (start >= end)
		return 0;
	for (k = 0; k < MODEL_NTRACKED; k++)
		old_total += pageset_count_range(p->set[model_tracked[k]], start, end);
	for (i = 0; i < n; i++) {
		new_total += runs[i].end - runs[i].start;
		if (runs[i].state != PS_NOT_RESIDENT)
			same += pageset_count_range(p->set[runs[i].state], runs[i].start,
						    runs[i].end);
	}
	/* The common case, a rescan that finds what the model already says: one rank query
	 * per run and nothing rewritten. */
	if (old_total == new_total && same == new_total)
		return 0;
	if (heat_now_ns)
		for (i = 0; i < n; i++)
			if (runs[i].state == PS_RESIDENT)
				warm_scanned_pages(p, &runs[i], heat_now_ns);
	/* Pages whose state differs = |old ∪ new| - |same|, over pages not "not resident":
	 * |old ∪ new| = |old| + |new| - |old ∩ new|. */
	both = same;
	for (i = 0; i < n; i++)
		for (k = 0; k < MODEL_NTRACKED; k++)
			if (model_tracked[k] != runs[i].state)
				both += pageset_count_range(p->set[model_tracked[k]], runs[i].start,
							    runs[i].end);
	clear_pages(p, start, end);
	for (i = 0; i < n; i++)
		if (runs[i].state != PS_NOT_RESIDENT)
			pageset_add_range(p->set[runs[i].state], runs[i].start, runs[i].end);
	return old_total + new_total - both - same;
}

int model_runs(const struct proc *p, uint64_t from, uint64_t to, model_run_fn fn, void *arg)
{
	uint64_t rs[MODEL_NTRACKED], re[MODEL_NTRACKED], cur = from;
	bool have[MODEL_NTRACKED];
	size_t k, best;
	int err;

	for (k = 0; k < MODEL_NTRACKED; k++)
		have[k] = pageset_next_run(p->set[model_tracked[k]], cur, to, &rs[k], &re[k]);
	for (;;) {
		best = MODEL_NTRACKED;
		for (k = 0; k < MODEL_NTRACKED; k++)
			if (have[k] && (best == MODEL_NTRACKED || rs[k] < rs[best]))
				best = k;
		if (best == MODEL_NTRACKED)
			return 0;
		err = fn(rs[best], re[best], model_tracked[best], arg);
		if (err)
			return err;
		cur = re[best];
		have[best] = pageset_next_run(p->set[model_tracked[best]], cur, to, &rs[best],
					      &re[best]);
	}
}

int model_heat_per_mapping(const struct proc *p, uint64_t now_ns, float *out, size_t n)
{
	const struct heat *h = &p->heat;
	const struct mapping *m, **ms;
	size_t i, k;

	memset(out, 0, n * sizeof(*out));
	if (!h->used || !n)
		return 0;
	ms = malloc(n * sizeof(*ms));
	if (!ms)
		return -ENOMEM;
	for (k = 0, m = model_first(p); m && k < n; m = model_next(m))
		ms[k++] = m;
	n = k;
	for (i = 0; i < h->cap; i++) {
		const struct heat_entry *e = &h->slots[i];
		uint64_t s, t;
		size_t lo = 0, hi = n;
		float v;

		if (!e->block)
			continue;
		s = (e->block - 1) << HEAT_BLOCK_SHIFT;
		t = s + (1u << HEAT_BLOCK_SHIFT);
		v = heat_entry_value(e, now_ns);
		while (lo < hi) {		/* the first mapping ending after s */
			size_t mid = (lo + hi) / 2;

			if (mapping_end(ms[mid]) <= s)
				lo = mid + 1;
			else
				hi = mid;
		}
		/* As heat_range: a block counts for every mapping it overlaps. */
		for (k = lo; k < n && mapping_start(ms[k]) < t; k++)
			out[k] += v;
	}
	free(ms);
	return 0;
}
