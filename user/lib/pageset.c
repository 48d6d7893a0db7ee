// SPDX-License-Identifier: GPL-2.0
/*
 * Set of 64-bit page numbers on 32-bit CRoaring bitmaps; see pageset.h.
 *
 * Layout: a sorted array of buckets {hi = page >> 32, lo = bitmap of
 * page & 0xffffffff}, found by binary search.  Empty buckets are freed at
 * once, so "bucket exists" means "bucket has members".  Real processes touch
 * a handful of buckets (a 47-bit address space is 2^35 pages, 8 buckets), so
 * the array stays tiny and inserting into it by memmove is fine.
 *
 * Only the public CRoaring 0.2.66 API is used (but for the bulk counts, which read its
 * containers: see there), with two workarounds:
 *  - roaring_bitmap_contains_range() can answer true when the 64 Ki chunk
 *    holding the range's last value is absent but a later one is present
 *    (it checks the wrong container; fixed upstream after 0.2.66), so
 *    bm_full() first tests that last value by itself;
 *  - there is no "next absent value" query and no bulk offset/shift, so run
 *    ends are found by galloping over contains_range, and moves re-add runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <roaring/roaring.h>

#include "lib/array.h"
#include "lib/pageset.h"

#define BUCKET_SPAN	(UINT64_C(1) << 32)	/* pages per bucket */

/*
 * Mutations a bucket absorbs before it is compacted again (run_optimize +
 * shrink_to_fit).  Without this, clearing every other page of a run one at
 * a time grows run containers to 4 bytes per run (16 bits per page) where a
 * bitset needs 1.  After a compaction the credit is the larger of
 * CREDIT_MIN and 1/64 of the bucket's size, so re-compacting costs O(1)
 * amortised per mutation and the waste in between stays a small fraction.
 */
#define CREDIT_MIN	4096u
#define CREDIT_SHIFT	6

/* Short runs are re-added through roaring_bitmap_add_many in batches. */
#define SHIFT_RUN_MIN	8
#define SHIFT_BATCH	1024
#define WALK_BATCH	256

struct pageset_bucket {
	uint32_t hi;		/* page >> 32 */
	uint32_t credit;	/* mutations left before the next compaction */
	roaring_bitmap_t *lo;	/* low 32 bits of members; never empty */
};

struct pageset {
	struct pageset_bucket *b;	/* sorted by hi, no duplicates */
	size_t n;			/* buckets in use */
	size_t cap;			/* buckets allocated */
};

static inline uint32_t page_hi(uint64_t page)
{
	return (uint32_t)(page >> 32);
}

static inline uint32_t page_lo(uint64_t page)
{
	return (uint32_t)page;
}

static inline uint64_t bucket_base(const struct pageset_bucket *b)
{
	return (uint64_t)b->hi << 32;
}

static _Noreturn void pageset_oom(void)
{
	/* see pageset.h: no partial results, and roaring would crash anyway */
	fputs("mevitop: pageset: out of memory\n", stderr);
	abort();
}

static roaring_bitmap_t *bm_check(roaring_bitmap_t *bm)
{
	if (!bm)
		pageset_oom();
	return bm;
}

/*
 * Are all of [a, b) members?  Requires a < b <= 2^32.  Testing b - 1 on its
 * own first sidesteps the 0.2.66 contains_range bug described above: that
 * bug needs the chunk holding b - 1 to be absent.
 */
static bool bm_full(const roaring_bitmap_t *bm, uint64_t a, uint64_t b)
{
	return roaring_bitmap_contains(bm, (uint32_t)(b - 1)) &&
	       roaring_bitmap_contains_range(bm, a, b);
}

/*
 * First non-member >= e, or cap if [e, cap) are all members; e <= cap <=
 * 2^32.  Gallops (1, 2, 4, ... values) then bisects, so a run of L pages
 * takes O(log L) range checks instead of L lookups.
 */
static uint64_t bm_run_end(const roaring_bitmap_t *bm, uint64_t e, uint64_t cap)
{
	uint64_t step = 1, hi;
	bool growing = true;

	while (e < cap && step) {
		hi = cap - e < step ? cap : e + step;
		if (bm_full(bm, e, hi)) {
			e = hi;
			step = growing ? step << 1 : step >> 1;
		} else {
			/* a non-member lies in [e, hi): bisect from here on */
			growing = false;
			step >>= 1;
		}
	}
	return e;
}

/* Smallest member >= v, if any. */
static bool bm_first_ge(const roaring_bitmap_t *bm, uint32_t v, uint32_t *out)
{
	roaring_uint32_iterator_t it;

	roaring_init_iterator(bm, &it);
	if (!roaring_move_uint32_iterator_equalorlarger(&it, v))
		return false;
	*out = it.current_value;
	return true;
}

/*
 * Run-by-run walk over one bitmap for bulk copies.  Values are read in
 * batches, which is cheapest for short runs; when a run is still going at
 * the end of a batch the walker gallops to its end instead of reading it.
 */
struct bm_walker {
	const roaring_bitmap_t *bm;
	roaring_uint32_iterator_t it;	/* positioned after buf[n - 1] */
	uint32_t n, pos;
	uint32_t buf[WALK_BATCH];
};

static void walker_init(struct bm_walker *w, const roaring_bitmap_t *bm)
{
	w->bm = bm;
	w->n = w->pos = 0;
	roaring_init_iterator(bm, &w->it);
}

/* Next maximal run [*rs, *re) of the bitmap; *re <= 2^32. */
static bool walker_next(struct bm_walker *w, uint64_t *rs, uint64_t *re)
{
	uint64_t s, e;

	if (w->pos == w->n) {
		w->n = roaring_read_uint32_iterator(&w->it, w->buf, WALK_BATCH);
		w->pos = 0;
		if (!w->n)
			return false;
	}
	s = w->buf[w->pos++];
	e = s + 1;
	while (w->pos < w->n && w->buf[w->pos] == e) {
		w->pos++;
		e++;
	}
	if (w->pos == w->n && w->it.has_value && w->it.current_value == e) {
		e = bm_run_end(w->bm, e, BUCKET_SPAN);
		w->n = w->pos = 0;
		if (e < BUCKET_SPAN)
			roaring_move_uint32_iterator_equalorlarger(&w->it, (uint32_t)e);
		else
			w->it.has_value = false;
	}
	*rs = s;
	*re = e;
	return true;
}

/* Index of the first bucket with hi >= hi (n if none). */
static size_t bucket_lower_bound(const struct pageset *s, uint32_t hi)
{
	size_t lo = 0, n = s->n;

	while (n) {
		size_t half = n / 2;

		if (s->b[lo + half].hi < hi) {
			lo += half + 1;
			n -= half + 1;
		} else {
			n = half;
		}
	}
	return lo;
}

static struct pageset_bucket *bucket_find(const struct pageset *s, uint32_t hi)
{
	size_t i = bucket_lower_bound(s, hi);

	return i < s->n && s->b[i].hi == hi ? &s->b[i] : NULL;
}

/* Insert a bucket owning lo at index i (which keeps the order). */
static struct pageset_bucket *bucket_insert(struct pageset *s, size_t i,
					    uint32_t hi, roaring_bitmap_t *lo)
{
	if (array_reserve(s->b, s->n, s->cap, 4))
		pageset_oom();
	memmove(&s->b[i + 1], &s->b[i], (s->n - i) * sizeof(s->b[0]));
	s->n++;
	s->b[i].hi = hi;
	s->b[i].credit = CREDIT_MIN;
	s->b[i].lo = lo;
	return &s->b[i];
}

/* The bucket for hi, created empty if missing; valid until the next insert. */
static struct pageset_bucket *bucket_get(struct pageset *s, uint32_t hi)
{
	size_t i = bucket_lower_bound(s, hi);

	if (i < s->n && s->b[i].hi == hi)
		return &s->b[i];
	return bucket_insert(s, i, hi, bm_check(roaring_bitmap_create()));
}

static void bucket_delete(struct pageset *s, size_t i)
{
	roaring_bitmap_free(s->b[i].lo);
	memmove(&s->b[i], &s->b[i + 1], (s->n - i - 1) * sizeof(s->b[0]));
	s->n--;
}

static void bucket_compact(struct pageset_bucket *b)
{
	size_t sz;

	roaring_bitmap_run_optimize(b->lo);
	roaring_bitmap_shrink_to_fit(b->lo);
	sz = roaring_bitmap_portable_size_in_bytes(b->lo) >> CREDIT_SHIFT;
	b->credit = sz < CREDIT_MIN ? CREDIT_MIN : sz > UINT32_MAX ? UINT32_MAX : (uint32_t)sz;
}

/* Account for n mutations of b; compact once its credit runs out. */
static void bucket_charge(struct pageset_bucket *b, uint64_t n)
{
	if (n < b->credit) {
		b->credit -= (uint32_t)n;
		return;
	}
	bucket_compact(b);
}

struct pageset *pageset_new(void)
{
	return calloc(1, sizeof(struct pageset));
}

void pageset_clear(struct pageset *s)
{
	for (size_t i = 0; i < s->n; i++)
		roaring_bitmap_free(s->b[i].lo);
	free(s->b);
	s->b = NULL;
	s->n = s->cap = 0;
}

void pageset_free(struct pageset *s)
{
	if (!s)
		return;
	pageset_clear(s);
	free(s);
}

struct pageset *pageset_clone(const struct pageset *s)
{
	struct pageset *c = pageset_new();

	if (!c)
		return NULL;
	if (s->n) {
		c->b = malloc(s->n * sizeof(c->b[0]));
		if (!c->b)
			goto cleanup;
		c->cap = s->n;
	}
	for (size_t i = 0; i < s->n; i++) {
		c->b[i] = s->b[i];
		c->b[i].lo = roaring_bitmap_copy(s->b[i].lo);
		if (!c->b[i].lo)
			goto cleanup;
		c->n++;
	}
	return c;

cleanup:
	pageset_free(c);
	return NULL;
}

void pageset_add(struct pageset *s, uint64_t page)
{
	struct pageset_bucket *b = bucket_get(s, page_hi(page));

	roaring_bitmap_add(b->lo, page_lo(page));
	bucket_charge(b, 1);
}

void pageset_add_range(struct pageset *s, uint64_t start, uint64_t end)
{
	uint32_t hi, hi_last;

	if (end <= start)
		return;
	hi = page_hi(start);
	hi_last = page_hi(end - 1);
	for (;;) {
		struct pageset_bucket *b = bucket_get(s, hi);
		uint32_t lo_s = hi == page_hi(start) ? page_lo(start) : 0;
		uint32_t lo_l = hi == hi_last ? page_lo(end - 1) : UINT32_MAX;

		roaring_bitmap_add_range_closed(b->lo, lo_s, lo_l);
		bucket_charge(b, 1);
		if (hi == hi_last)	/* not hi++ first: hi_last may be UINT32_MAX */
			break;
		hi++;
	}
}

void pageset_remove_range(struct pageset *s, uint64_t start, uint64_t end)
{
	uint32_t hi_first, hi_last;
	size_t i;

	if (end <= start)
		return;
	hi_first = page_hi(start);
	hi_last = page_hi(end - 1);
	i = bucket_lower_bound(s, hi_first);
	while (i < s->n && s->b[i].hi <= hi_last) {
		struct pageset_bucket *b = &s->b[i];
		uint32_t lo_s = b->hi == hi_first ? page_lo(start) : 0;
		uint32_t lo_l = b->hi == hi_last ? page_lo(end - 1) : UINT32_MAX;

		if (lo_s != 0 || lo_l != UINT32_MAX)
			roaring_bitmap_remove_range_closed(b->lo, lo_s, lo_l);
		if ((lo_s == 0 && lo_l == UINT32_MAX) ||
		    roaring_bitmap_is_empty(b->lo)) {
			bucket_delete(s, i);
			continue;
		}
		bucket_charge(b, 1);
		i++;
	}
}

bool pageset_contains(const struct pageset *s, uint64_t page)
{
	const struct pageset_bucket *b = bucket_find(s, page_hi(page));

	return b && roaring_bitmap_contains(b->lo, page_lo(page));
}

uint64_t pageset_count(const struct pageset *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += roaring_bitmap_get_cardinality(s->b[i].lo);
	return n;
}

uint64_t pageset_count_range(const struct pageset *s, uint64_t start,
			     uint64_t end)
{
	uint32_t hi_first, hi_last;
	uint64_t n = 0;

	if (end <= start)
		return 0;
	hi_first = page_hi(start);
	hi_last = page_hi(end - 1);
	for (size_t i = bucket_lower_bound(s, hi_first);
	     i < s->n && s->b[i].hi <= hi_last; i++) {
		const struct pageset_bucket *b = &s->b[i];
		uint64_t lo_s = b->hi == hi_first ? page_lo(start) : 0;
		uint64_t lo_e = b->hi == hi_last ? (uint64_t)page_lo(end - 1) + 1 : BUCKET_SPAN;

		n += roaring_bitmap_range_cardinality(b->lo, lo_s, lo_e);
	}
	return n;
}

/*
 * Bulk counting (pageset_count_cells, pageset_count_ranges) reads the containers itself:
 * roaring_bitmap_range_cardinality() ranks a bitset container from its first word, so
 * counting each cell of a fragmented 64 Ki-page container costs up to 1024 popcounts
 * (what made drawing a screen of 1 Mi pages cost milliseconds).  Here a bitset piece costs
 * the words it spans, an array or run piece a binary search plus its runs.  The container
 * structs are CRoaring 0.2.66's, from the headers it installs (roaring.h's own inline
 * functions read the same fields); the unit test checks every answer against a reference.
 */
#define CONTAINER_SPAN	(UINT32_C(1) << 16)

static uint64_t bits_count(const uint64_t *w, uint32_t from, uint32_t to)
{
	uint32_t a = from >> 6, b = (to - 1) >> 6, i;
	uint64_t first = ~UINT64_C(0) << (from & 63), last = ~UINT64_C(0) >> (63 - ((to - 1) & 63));
	uint64_t n;

	if (a == b)
		return (uint64_t)__builtin_popcountll(w[a] & first & last);
	n = (uint64_t)__builtin_popcountll(w[a] & first) + __builtin_popcountll(w[b] & last);
	for (i = a + 1; i < b; i++)
		n += (uint64_t)__builtin_popcountll(w[i]);
	return n;
}

/* Index of the first value >= v in a sorted array of n. */
static uint32_t lower_bound16(const uint16_t *v, int32_t n, uint32_t x)
{
	uint32_t lo = 0, hi = (uint32_t)n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t runs_count(const run_container_t *r, uint32_t from, uint32_t to)
{
	int32_t lo = 0, hi = r->n_runs;
	uint64_t n = 0;

	/* The first run ending at or after from (a run is [value, value + length]). */
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;

		if ((uint32_t)r->runs[mid].value + r->runs[mid].length < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < r->n_runs && r->runs[lo].value < to; lo++) {
		uint32_t s = r->runs[lo].value, e = s + r->runs[lo].length + 1;

		n += (e < to ? e : to) - (s > from ? s : from);
	}
	return n;
}

/* Members of one container in [from, to), 0 <= from < to <= 2^16. */
static uint64_t container_count(const void *c, uint8_t type, uint32_t from, uint32_t to)
{
	if (type == SHARED_CONTAINER_TYPE_CODE) {
		const shared_container_t *sh = c;

		c = sh->container;
		type = sh->typecode;
	}
	switch (type) {
	case BITSET_CONTAINER_TYPE_CODE:
		return bits_count(((const bitset_container_t *)c)->array, from, to);
	case ARRAY_CONTAINER_TYPE_CODE: {
		const array_container_t *a = c;

		return lower_bound16(a->array, a->cardinality, to) -
		       lower_bound16(a->array, a->cardinality, from);
	}
	case RUN_CONTAINER_TYPE_CODE:
		return runs_count(c, from, to);
	}
	return 0;
}

/* A container's piece of a query: its members are counted in [from, to) (pages). */
struct piece {
	const void *c;
	uint8_t type;
	uint64_t base;			/* the container's first page */
};

/* Calls fn for each container holding members of [start, end), with the part of the range
 * it covers, in page order. */
static void sweep(const struct pageset *s, uint64_t start, uint64_t end,
		  void (*fn)(const struct piece *pc, uint64_t from, uint64_t to, void *arg),
		  void *arg)
{
	uint32_t hi_first, hi_last;

	if (end <= start)
		return;
	hi_first = page_hi(start);
	hi_last = page_hi(end - 1);
	for (size_t i = bucket_lower_bound(s, hi_first);
	     i < s->n && s->b[i].hi <= hi_last; i++) {
		const struct pageset_bucket *b = &s->b[i];
		const roaring_array_t *ra = &b->lo->high_low_container;
		uint64_t base = bucket_base(b);
		uint64_t lo_s = b->hi == hi_first ? page_lo(start) : 0;
		uint64_t lo_e = b->hi == hi_last ? (uint64_t)page_lo(end - 1) + 1 : BUCKET_SPAN;
		int32_t k = (int32_t)lower_bound16(ra->keys, ra->size, (uint32_t)(lo_s >> 16));

		for (; k < ra->size && ((uint64_t)ra->keys[k] << 16) < lo_e; k++) {
			uint64_t cb = (uint64_t)ra->keys[k] << 16, ce = cb + CONTAINER_SPAN;
			struct piece pc = { ra->containers[k], ra->typecodes[k], base + cb };

			fn(&pc, base + (lo_s > cb ? lo_s : cb), base + (lo_e < ce ? lo_e : ce), arg);
		}
	}
}

static uint64_t piece_count(const struct piece *pc, uint64_t from, uint64_t to)
{
	return container_count(pc->c, pc->type, (uint32_t)(from - pc->base),
			       (uint32_t)(to - pc->base));
}

struct cells {
	uint64_t start, cell, *cnt;
};

/* Splits a piece at cell edges, in offsets from start so cells at the top of the page
 * space do not wrap. */
static void piece_to_cells(const struct piece *pc, uint64_t from, uint64_t to, void *arg)
{
	const struct cells *c = arg;
	uint64_t oa = from - c->start, ob = to - c->start, k = oa / c->cell, cs = k * c->cell;

	for (; cs < ob; k++, cs += c->cell) {
		uint64_t ce = ob - cs < c->cell ? ob : cs + c->cell, a = oa > cs ? oa : cs;

		c->cnt[k] += piece_count(pc, c->start + a, c->start + ce);
	}
}

void pageset_count_cells(const struct pageset *s, uint64_t start, uint64_t end,
			 uint64_t cell, uint64_t *cnt)
{
	struct cells c = { .start = start, .cell = cell, .cnt = cnt };

	if (end <= start || !cell)
		return;
	memset(cnt, 0, ((end - start) / cell + ((end - start) % cell != 0)) * sizeof(*cnt));
	sweep(s, start, end, piece_to_cells, &c);
}

struct ranges {
	const struct pageset_range *r;
	size_t n, at;			/* the first range not wholly before the last piece */
	uint64_t *cnt;
};

static void piece_to_ranges(const struct piece *pc, uint64_t from, uint64_t to, void *arg)
{
	struct ranges *q = arg;
	size_t i;

	while (q->at < q->n && q->r[q->at].end <= from)
		q->at++;
	for (i = q->at; i < q->n && q->r[i].start < to; i++) {
		uint64_t a = q->r[i].start > from ? q->r[i].start : from;
		uint64_t e = q->r[i].end < to ? q->r[i].end : to;

		if (e > a)
			q->cnt[i] += piece_count(pc, a, e);
	}
}

void pageset_count_ranges(const struct pageset *s, const struct pageset_range *r, size_t n,
			  uint64_t *cnt)
{
	struct ranges q = { .r = r, .n = n, .cnt = cnt };

	memset(cnt, 0, n * sizeof(*cnt));
	if (n)
		sweep(s, r[0].start, r[n - 1].end, piece_to_ranges, &q);
}

bool pageset_next_run(const struct pageset *s, uint64_t from, uint64_t limit,
		      uint64_t *rs, uint64_t *re)
{
	if (from >= limit)
		return false;
	for (size_t i = bucket_lower_bound(s, page_hi(from)); i < s->n; i++) {
		const struct pageset_bucket *b = &s->b[i];
		uint64_t base = bucket_base(b), cap, start, end;
		uint32_t v;

		if (base >= limit)
			return false;
		if (!bm_first_ge(b->lo, from > base ? page_lo(from) : 0, &v))
			continue;
		start = base + v;
		if (start >= limit)
			return false;
		/*
		 * limit <= UINT64_MAX keeps cap below 2^32 in the last bucket,
		 * so base + cap never wraps.
		 */
		cap = limit - base < BUCKET_SPAN ? limit - base : BUCKET_SPAN;
		end = base + bm_run_end(b->lo, (uint64_t)v + 1, cap);

		/* A run reaching the bucket's end may go on in the next one. */
		while (end - base == BUCKET_SPAN && end < limit &&
		       i + 1 < s->n && s->b[i + 1].hi == b->hi + 1) {
			b = &s->b[++i];
			base = end;
			cap = limit - base < BUCKET_SPAN ? limit - base : BUCKET_SPAN;
			end = base + bm_run_end(b->lo, 0, cap);
		}
		*rs = start;
		*re = end;
		return true;
	}
	return false;
}

void pageset_copy_range(struct pageset *dst, const struct pageset *src,
			uint64_t start, uint64_t end)
{
	uint32_t hi_first, hi_last;

	if (dst == src || end <= start)
		return;
	pageset_remove_range(dst, start, end);
	hi_first = page_hi(start);
	hi_last = page_hi(end - 1);
	for (size_t i = bucket_lower_bound(src, hi_first);
	     i < src->n && src->b[i].hi <= hi_last; i++) {
		const struct pageset_bucket *sb = &src->b[i];
		uint64_t lo_s = sb->hi == hi_first ? page_lo(start) : 0;
		uint64_t lo_e = sb->hi == hi_last ? (uint64_t)page_lo(end - 1) + 1 : BUCKET_SPAN;
		roaring_bitmap_t *part, *range;
		size_t j;

		if (lo_s == 0 && lo_e == BUCKET_SPAN) {
			part = bm_check(roaring_bitmap_copy(sb->lo));
		} else {
			/* a range bitmap is a few run containers: cheap to AND */
			range = bm_check(roaring_bitmap_from_range(lo_s, lo_e, 1));
			part = bm_check(roaring_bitmap_and(sb->lo, range));
			roaring_bitmap_free(range);
		}
		if (roaring_bitmap_is_empty(part)) {
			roaring_bitmap_free(part);
			continue;
		}
		j = bucket_lower_bound(dst, sb->hi);
		if (j < dst->n && dst->b[j].hi == sb->hi) {
			roaring_bitmap_or_inplace(dst->b[j].lo, part);
			roaring_bitmap_free(part);
			bucket_charge(&dst->b[j], 1);
		} else {
			bucket_insert(dst, j, sb->hi, part);
		}
	}
}

/* Values of short runs, collected per destination bucket for add_many. */
struct shift_batch {
	uint32_t hi;
	uint32_t n;
	uint32_t lo[SHIFT_BATCH];
};

static void batch_flush(struct pageset *s, struct shift_batch *sb)
{
	struct pageset_bucket *b;

	if (!sb->n)
		return;
	b = bucket_get(s, sb->hi);
	roaring_bitmap_add_many(b->lo, sb->n, sb->lo);
	bucket_charge(b, sb->n);
	sb->n = 0;
}

static void batch_add(struct pageset *s, struct shift_batch *sb, uint64_t page)
{
	if (sb->n && (sb->hi != page_hi(page) || sb->n == SHIFT_BATCH))
		batch_flush(s, sb);
	sb->hi = page_hi(page);
	sb->lo[sb->n++] = page_lo(page);
}

/* Add every member of src, shifted by delta (mod 2^64), to s. */
static void shift_add(struct pageset *s, const struct pageset *src,
		      uint64_t delta)
{
	struct shift_batch sb = { .n = 0 };
	struct bm_walker w;
	uint64_t rs, re;

	for (size_t i = 0; i < src->n; i++) {
		uint64_t base = bucket_base(&src->b[i]) + delta;

		walker_init(&w, src->b[i].lo);
		while (walker_next(&w, &rs, &re)) {
			if (re - rs >= SHIFT_RUN_MIN) {
				pageset_add_range(s, base + rs, base + re);
				continue;
			}
			for (uint64_t p = rs; p < re; p++)
				batch_add(s, &sb, base + p);
		}
	}
	batch_flush(s, &sb);
}

void pageset_move_range(struct pageset *s, uint64_t start, uint64_t end,
			uint64_t dst)
{
	struct pageset *taken;
	uint64_t len, keep;

	if (end <= start || dst == start)
		return;
	len = end - start;
	/* only the part landing at or below UINT64_MAX - 1 survives */
	keep = dst > UINT64_MAX - len ? UINT64_MAX - dst : len;

	/*
	 * Take the members out first: with overlapping ranges, adding in
	 * place would read pages that were already moved.
	 */
	taken = pageset_new();
	if (!taken)
		pageset_oom();
	pageset_copy_range(taken, s, start, start + keep);
	pageset_remove_range(s, start, end);
	pageset_remove_range(s, dst, dst + keep);
	shift_add(s, taken, dst - start);
	pageset_free(taken);
}

/* Estimated heap bytes of one roaring bitmap (see pageset.h). */
static size_t bm_bytes(const roaring_bitmap_t *bm)
{
	const roaring_array_t *ra = &bm->high_low_container;

	/*
	 * portable size = payloads + 4-byte key/cardinality headers; add the
	 * index arrays (container pointer, key, typecode per slot) and the
	 * per-container struct (cardinality/capacity + payload pointer).
	 */
	return sizeof(*bm) + roaring_bitmap_portable_size_in_bytes(bm) +
	       (size_t)ra->allocation_size * (sizeof(void *) + sizeof(uint16_t) + sizeof(uint8_t)) +
	       (size_t)ra->size * 2 * sizeof(void *);
}

size_t pageset_bytes(const struct pageset *s)
{
	size_t bytes = sizeof(*s) + s->cap * sizeof(s->b[0]);

	for (size_t i = 0; i < s->n; i++)
		bytes += bm_bytes(s->b[i].lo);
	return bytes;
}

void pageset_optimize(struct pageset *s)
{
	struct pageset_bucket *b;

	for (size_t i = 0; i < s->n; i++)
		bucket_compact(&s->b[i]);
	if (s->cap > s->n) {
		if (!s->n) {
			free(s->b);
			s->b = NULL;
			s->cap = 0;
		} else if ((b = realloc(s->b, s->n * sizeof(*b)))) {
			/* a failed shrink just keeps the old array */
			s->b = b;
			s->cap = s->n;
		}
	}
}

struct pageset *pageset_xor(const struct pageset *a, const struct pageset *b)
{
	struct pageset *x = pageset_new();
	size_t i = 0, j = 0;

	if (!x)
		return NULL;
	while (i < a->n || j < b->n) {
		const struct pageset_bucket *ba = i < a->n ? &a->b[i] : NULL;
		const struct pageset_bucket *bb = j < b->n ? &b->b[j] : NULL;
		roaring_bitmap_t *lo;
		uint32_t hi;

		if (ba && (!bb || ba->hi < bb->hi)) {
			hi = ba->hi;
			lo = roaring_bitmap_copy(ba->lo);
			i++;
		} else if (!ba || bb->hi < ba->hi) {
			hi = bb->hi;
			lo = roaring_bitmap_copy(bb->lo);
			j++;
		} else {
			hi = ba->hi;
			lo = roaring_bitmap_xor(ba->lo, bb->lo);
			i++;
			j++;
		}
		if (!lo) {
			pageset_free(x);
			return NULL;
		}
		if (roaring_bitmap_is_empty(lo))	/* buckets are never empty */
			roaring_bitmap_free(lo);
		else
			bucket_insert(x, x->n, hi, lo);
	}
	return x;
}

bool pageset_equal(const struct pageset *a, const struct pageset *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		if (a->b[i].hi != b->b[i].hi ||
		    !roaring_bitmap_equals(a->b[i].lo, b->b[i].lo))
			return false;
	}
	return true;
}
