// SPDX-License-Identifier: GPL-2.0
/* USS, PSS and shared bytes of a range, a mapping and a process (model/share_figs.h). */
#include <string.h>
#include "lib/page.h"
#include "model/model.h"
#include "model/share_figs.h"

/* The first span ending after page (binary search), or s->n. */
static size_t first_span(const struct share *s, uint64_t page)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->spans[mid].end <= page)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void add_private(const struct proc *p, uint64_t start, uint64_t end,
			struct share_figs *out)
{
	uint64_t n = start < end ? model_count(p, PS_RESIDENT, start, end) : 0;

	out->uss += n * PAGE_SIZE_4K;
	out->pss += n * PAGE_SIZE_4K;
}

/* A span's part [a, b): whole, or pro rata when the mapping cuts it (it moved or shrank
 * since the pass), never more private and shared pages than the model has resident in
 * [a, b) (a span's pages need not be spread evenly: the part may hold none of them). */
static void add_span(const struct proc *p, const struct share_span *sp, uint64_t a,
		     uint64_t b, struct share_figs *out)
{
	uint64_t len = sp->end - sp->start, part = b - a, uss, shared, ksm, res, pss;

	if (part == len) {
		out->uss += sp->uss * PAGE_SIZE_4K;
		out->shared += sp->shared * PAGE_SIZE_4K;
		out->ksm += sp->ksm * PAGE_SIZE_4K;
		out->pss += sp->pss >> SHARE_PSS_SHIFT;
		return;
	}
	uss = sp->uss * part / len;
	shared = sp->shared * part / len;
	ksm = sp->ksm * part / len;
	pss = (uint64_t)((unsigned __int128)sp->pss * part / len);
	res = model_count(p, PS_RESIDENT, a, b);
	if (uss + shared > res) {
		uint64_t all = uss + shared;

		pss = (uint64_t)((unsigned __int128)pss * res / all);
		uss = uss * res / all;
		shared = res - uss;
		ksm = ksm < shared ? ksm : shared;
	}
	out->uss += uss * PAGE_SIZE_4K;
	out->shared += shared * PAGE_SIZE_4K;
	out->ksm += ksm * PAGE_SIZE_4K;
	out->pss += pss >> SHARE_PSS_SHIFT;
}

void share_range(const struct proc *p, uint64_t start, uint64_t end, struct share_figs *out)
{
	const struct share *s = p->share;
	uint64_t at = start;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!s) {
		add_private(p, start, end, out);
		return;
	}
	for (i = first_span(s, start); i < s->n && s->spans[i].start < end; i++) {
		const struct share_span *sp = &s->spans[i];
		uint64_t a = sp->start > start ? sp->start : start;
		uint64_t b = sp->end < end ? sp->end : end;

		add_private(p, at, a, out);	/* the gap before it */
		add_span(p, sp, a, b, out);
		at = b;
	}
	add_private(p, at, end, out);
}

bool share_counted(const struct mapping *m)
{
	/* Raw PFNs and hugetlb pages: smaps counts none of these in Pss or Private. */
	return m->kind != MK_VVAR && m->kind != MK_VSYSCALL &&
	       !(m->flags & (MF_PFNMAP | MF_HUGETLB));
}

void share_mapping(const struct proc *p, const struct mapping *m, struct share_figs *out)
{
	if (share_counted(m))
		share_range(p, mapping_start(m), mapping_end(m), out);
	else
		memset(out, 0, sizeof(*out));
}

void share_totals(const struct proc *p, struct share_figs *out)
{
	struct share *s = p->share;	/* its cache is written: under the lock p is read under */
	const struct mapping *m;

	memset(out, 0, sizeof(*out));
	if (s && s->totals_stamp == p->gen + 1) {
		out->uss = s->totals[0];
		out->pss = s->totals[1];
		out->shared = s->totals[2];
		out->ksm = s->totals[3];
		m = NULL;	/* cached: no walk */
	} else {
		m = model_first(p);
	}
	for (; m; m = model_next(m)) {
		struct share_figs f;

		share_mapping(p, m, &f);
		out->uss += f.uss;
		out->pss += f.pss;
		out->shared += f.shared;
		out->ksm += f.ksm;
	}
	if (s && s->totals_stamp != p->gen + 1) {
		s->totals[0] = out->uss;
		s->totals[1] = out->pss;
		s->totals[2] = out->shared;
		s->totals[3] = out->ksm;
		s->totals_stamp = p->gen + 1;
	}
	if (p->share && p->share->thp_known) {
		out->thp = p->share->thp * PAGE_SIZE_4K;
		out->thp_known = true;
	}
}
