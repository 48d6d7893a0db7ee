/* SPDX-License-Identifier: GPL-2.0 */
/* The figures of the sharing pass (model/share.h) for a range, a mapping, a process:
 * spans as read, resident pages no span covers as private (share_figs.c). */
#ifndef MEVITOP_SHARE_FIGS_H
#define MEVITOP_SHARE_FIGS_H

#include <stdbool.h>
#include <stdint.h>

/* Bytes. */
struct share_figs {
	uint64_t uss, pss, shared;
	uint64_t ksm;			/* KSM pages among the shared ones */
	uint64_t thp;			/* share_totals: mapped by a PMD (model/share.h) */
	bool thp_known;
};

struct proc;
/* The figures of [start, end) (a mapping, pages) from p->share: spans inside it, a span
 * cut by it pro rata, resident pages no span covers as private (all of them when p->share
 * is NULL). */
void share_range(const struct proc *p, uint64_t start, uint64_t end, struct share_figs *out);
struct mapping;
/* Does m count (not raw PFNs, vvar, vsyscall or hugetlb, which smaps leaves out)? */
bool share_counted(const struct mapping *m);
/* share_range of a mapping, zero for one that does not count. */
void share_mapping(const struct proc *p, const struct mapping *m, struct share_figs *out);
/* The sum over p's mappings. */
void share_totals(const struct proc *p, struct share_figs *out);

#endif
