/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who shares a process's pages: per mapping USS, PSS and shared bytes, and each page's
 * map-count class (the heatmap's sharing layer), as the engine's last sharing pass read
 * them (engine/share.c).  Data only.
 *
 * A pass records one span per mapping range it read: that range's private pages (map
 * count 1), shared pages (count >= 2) and PSS (each page's bytes over its map count, in
 * 1/4096ths of a byte, as smaps keeps it).  Resident pages of a mapping no span covers
 * (anonymous memory the engine knows no other process maps, or pages mapped since the
 * pass) count as private: their figures come from the model's resident pages, so they
 * are as current as the model (model/share_figs.h sums them).
 */
#ifndef MEVITOP_SHARE_H
#define MEVITOP_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/pageset.h"

#define SHARE_PSS_SHIFT	12	/* smaps' PSS_SHIFT: PSS kept in bytes << 12 */
#define SHARE_COUNT_BITS	12	/* struct share's counts: page << this | count */
#define SHARE_COUNT_MAX	((1u << SHARE_COUNT_BITS) - 1)

/* A page's map count as the sharing layer shows it. */
enum share_class {
	SHC_PRIVATE,		/* mapped once (resident, in no shared set) */
	SHC_TWO,		/* by 2 */
	SHC_FEW,		/* by 3-8 */
	SHC_MANY,		/* by more than 8 */
	SHC_COUNT,
};

static inline enum share_class share_class_of(uint64_t mapcount)
{
	return mapcount <= 1 ? SHC_PRIVATE : mapcount == 2 ? SHC_TWO :
	       mapcount <= 8 ? SHC_FEW : SHC_MANY;
}

struct share_span {
	uint64_t start, end;		/* pages: the range read */
	uint64_t uss, shared;		/* pages mapped once, by more */
	uint64_t ksm;			/* pages of KSM pages */
	uint64_t pss;			/* bytes << SHARE_PSS_SHIFT */
};

struct share {
	struct share_span *spans;	/* ascending, not overlapping */
	size_t n, cap;
	struct pageset *cls[SHC_COUNT];	/* shared pages by class; cls[SHC_PRIVATE] is NULL */
	/* The exact count of each page mapped by 3 or more (by 2 is its class): page <<
	 * SHARE_COUNT_BITS | count (counts above SHARE_COUNT_MAX saturate), ascending once the
	 * pass is complete. */
	uint64_t *counts;
	size_t ncounts, capcounts;
	/* Pages mapped by a PMD (transparent huge pages whole: smaps' AnonHugePages +
	 * ShmemPmdMapped + FilePmdMapped) in every mapping that counts; read by PAGEMAP_SCAN
	 * (thp_known false without it). */
	uint64_t thp;
	bool thp_known;
	/* share_totals' last answer (bytes: uss, pss, shared, ksm) and the owner's gen + 1
	 * then (0: none): a snapshot of 300 idle processes walks no mappings for it. */
	uint64_t totals[4], totals_stamp;
	/* CLOCK_MONOTONIC when the pass began: it names the figures a process shows
	 * (model_shown), so whatever changes a process's share must move it. */
	uint64_t at_ns;
	uint64_t pages_read;		/* PFNs the pass read */
};

struct share *share_new(void);			/* NULL on ENOMEM */
void share_free(struct share *s);		/* NULL is fine */
struct share *share_clone(const struct share *s);	/* NULL on ENOMEM (s NULL: NULL) */
/* A new span after every other; returns it, or NULL on ENOMEM. */
struct share_span *share_add_span(struct share *s, uint64_t start, uint64_t end);
/* page is shared by mapcount (>= 2) processes.  0, or -ENOMEM (the count is then not kept;
 * the class is). */
int share_mark(struct share *s, uint64_t page, uint64_t mapcount);
/* Sorts the exact counts (the pass is complete). */
void share_finish(struct share *s);
/* A resident page's map count: exact for 3 or more, else 2 for its class, 1 private; 0
 * when a count of 3+ was not kept. */
uint64_t share_page_count(const struct share *s, uint64_t page);
size_t share_bytes(const struct share *s);

/* The class of one resident page (s may be NULL: private). */
enum share_class share_page_class(const struct share *s, uint64_t page);

#endif
