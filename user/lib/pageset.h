/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A set of 64-bit page numbers, e.g. the resident pages of one process.
 *
 * Built on CRoaring, whose bitmaps are 32-bit: the set is a sorted array of
 * buckets, one roaring bitmap per distinct page >> 32.  Memory follows the
 * layout: tens of bytes per run (plus one ~50-byte run container per 64 Ki
 * pages a run spans) for sparse or contiguous sets, and about 1 bit per
 * spanned page for dense fragmented ones.
 *
 * Ranges are half-open [start, end), so the single page UINT64_MAX can be
 * added, tested and counted as a member but is never part of a range or a
 * run reported by pageset_next_run().
 *
 * Memory exhaustion aborts the process: CRoaring 0.2.66 itself does not
 * report allocation failures, so a partial result could not be trusted
 * anyway.  pageset_new() and pageset_clone() are the exceptions and return
 * NULL.  Not thread-safe; a set belongs to one thread at a time.
 */
#ifndef MEVITOP_PAGESET_H
#define MEVITOP_PAGESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pageset;

struct pageset *pageset_new(void);			/* NULL on ENOMEM */
void pageset_free(struct pageset *s);			/* NULL is fine */
struct pageset *pageset_clone(const struct pageset *s);	/* NULL on ENOMEM */
void pageset_clear(struct pageset *s);

void pageset_add(struct pageset *s, uint64_t page);
/* [start, end); may cross 2^32 boundaries; empty if end <= start */
void pageset_add_range(struct pageset *s, uint64_t start, uint64_t end);
void pageset_remove_range(struct pageset *s, uint64_t start, uint64_t end);

bool pageset_contains(const struct pageset *s, uint64_t page);
uint64_t pageset_count(const struct pageset *s);
uint64_t pageset_count_range(const struct pageset *s, uint64_t start,
			     uint64_t end);

/*
 * Members in each cell of [start, end), cells of `cell` pages counted from start (the last
 * one may be shorter): cnt[k] for k < ceil((end - start) / cell), in one walk.  Costs what
 * the members and runs of the range are (values read in batches, long runs skipped by
 * galloping), never a rank per cell: what drawing a fragmented set wants.
 */
void pageset_count_cells(const struct pageset *s, uint64_t start, uint64_t end,
			 uint64_t cell, uint64_t *cnt);

/* Members in each of n ranges sorted by start, not overlapping (empty ones allowed), into
 * cnt[0..n), in one walk from the first range's start to the last one's end. */
struct pageset_range {
	uint64_t start, end;
};
void pageset_count_ranges(const struct pageset *s, const struct pageset_range *r, size_t n,
			  uint64_t *cnt);

/*
 * First maximal run of members intersecting [from, limit), clipped to it:
 * on success *rs, *re = [run start, run end).  false if there is none.
 * Cost is logarithmic in the run length, so a run of millions of pages is
 * found in one call.  Enumerate with from = previous *re.
 */
bool pageset_next_run(const struct pageset *s, uint64_t from, uint64_t limit,
		      uint64_t *rs, uint64_t *re);

/*
 * mremap semantics: take the members of [start, end), clear that range,
 * clear [dst, dst + end - start), then add the taken members shifted by
 * dst - start.  The two ranges may overlap.  Members that would land past
 * UINT64_MAX - 1 are dropped.
 */
void pageset_move_range(struct pageset *s, uint64_t start, uint64_t end,
			uint64_t dst);

/* Clear [start, end) in dst, then copy src's members of that range into it. */
void pageset_copy_range(struct pageset *dst, const struct pageset *src,
			uint64_t start, uint64_t end);

/*
 * Heap bytes in use: our bucket array plus an estimate of each roaring
 * bitmap (container payloads as roaring serialises them, container headers
 * and the bitmap's index arrays).
 */
size_t pageset_bytes(const struct pageset *s);

/*
 * Convert containers to runs where that is smaller (and back), then release
 * spare capacity.  The set also does this by itself, per 2^32-page bucket,
 * after enough mutations, so memory stays near the optimum without calls.
 */
void pageset_optimize(struct pageset *s);

bool pageset_equal(const struct pageset *a, const struct pageset *b);

/* The pages in exactly one of a and b, as a new set (NULL on ENOMEM): where two snapshots
 * of one set differ, computed container by container (CRoaring's xor), so its cost follows
 * the sets' containers, not their runs. */
struct pageset *pageset_xor(const struct pageset *a, const struct pageset *b);

#endif /* MEVITOP_PAGESET_H */
