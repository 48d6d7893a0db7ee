// SPDX-License-Identifier: GPL-2.0
/*
 * Section 7, a process's sharing pass:
 *   varint at_ns (0: no pass, nothing follows), varint pages_read, varint nspans,
 *   nspans x { varint gap from the previous span's end, varint length, varint uss,
 *              varint shared, varint ksm, varint pss },
 *   for each class by 2, 3-8, 9+: varint nruns, nruns x { varint gap, varint length }.
 * Section 8, what section 7 lacks (a section of its own: section 7's readers refuse
 * trailing bytes, and readers skip kinds they do not know):
 *   varint thp + 1 (0: not known),
 *   varint n, n x { varint gap (page minus the previous one's + 1), varint count - 3 }
 *   (the exact counts of the pass's pages mapped by 3 or more).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include "rec/rec_format.h"
#include "rec/rec_share.h"

void rec_put_share(struct rbuf *b, const struct share *s)
{
	uint64_t at = 0, rs, re;
	size_t i;
	int k;

	if (!s) {
		rbuf_varint(b, 0);
		return;
	}
	rbuf_varint(b, s->at_ns ? s->at_ns : 1);
	rbuf_varint(b, s->pages_read);
	rbuf_varint(b, s->n);
	for (i = 0; i < s->n; i++) {
		const struct share_span *sp = &s->spans[i];

		rbuf_varint(b, sp->start - at);
		rbuf_varint(b, sp->end - sp->start);
		rbuf_varint(b, sp->uss);
		rbuf_varint(b, sp->shared);
		rbuf_varint(b, sp->ksm);
		rbuf_varint(b, sp->pss);
		at = sp->end;
	}
	for (k = SHC_TWO; k < SHC_COUNT; k++) {
		struct rbuf runs = { 0 };
		uint64_t n = 0;

		for (at = 0, rs = 0; pageset_next_run(s->cls[k], rs, REC_MAX_PAGE, &rs, &re);
		     rs = re, n++) {
			rbuf_varint(&runs, rs - at);
			rbuf_varint(&runs, re - rs);
			at = re;
		}
		rbuf_varint(b, n);
		rbuf_bytes(b, runs.p, runs.len);
		b->oom |= runs.oom;
		rbuf_free(&runs);
	}
}

static int bad(char *why, size_t whylen, const char *what)
{
	snprintf(why, whylen, "bad sharing section: %s", what);
	return -EBADMSG;
}

/* *shared: the pages the spans say are shared, which the class runs must not exceed (a
 * hostile file cannot make the page sets grow past what its counts claim). */
static int get_spans(struct rcur *c, struct share *s, uint64_t *shared, char *why,
		     size_t whylen)
{
	uint64_t n = rcur_varint(c), at = 0, i;

	/* Each span takes at least 6 bytes. */
	if (c->bad || n > rcur_left(c) / 6)
		return bad(why, whylen, "span count");
	for (i = 0; i < n; i++) {
		uint64_t gap = rcur_varint(c), len = rcur_varint(c);
		struct share_span *sp;

		if (c->bad || !len || gap > REC_MAX_PAGE - at || len > REC_MAX_PAGE - at - gap)
			return bad(why, whylen, "span range");
		if (!(sp = share_add_span(s, at + gap, at + gap + len)))
			return -ENOMEM;
		sp->uss = rcur_varint(c);
		sp->shared = rcur_varint(c);
		sp->ksm = rcur_varint(c);
		sp->pss = rcur_varint(c);
		if (c->bad || sp->uss > len || sp->shared > len - sp->uss || sp->ksm > len ||
		    sp->pss > (len << 24))
			return bad(why, whylen, "span counts");
		*shared += sp->shared;
		if (*shared > REC_MAX_STATE_PAGES)
			return bad(why, whylen, "too many shared pages");
		at = sp->end;
	}
	return 0;
}

int rec_get_share(struct rcur *c, struct share **out, char *why, size_t whylen)
{
	uint64_t at_ns = rcur_varint(c), shared = 0, marked = 0;
	struct share *s;
	int k, err;

	*out = NULL;
	if (c->bad)
		return bad(why, whylen, "cut short");
	if (!at_ns)
		return rcur_left(c) ? bad(why, whylen, "bytes after none") : 0;
	if (!(s = share_new()))
		return -ENOMEM;
	s->at_ns = at_ns;
	s->pages_read = rcur_varint(c);
	err = get_spans(c, s, &shared, why, whylen);
	for (k = SHC_TWO; k < SHC_COUNT && !err; k++) {
		uint64_t n = rcur_varint(c), at = 0, i;

		if (c->bad || n > rcur_left(c) / 2)
			err = bad(why, whylen, "run count");
		for (i = 0; i < n && !err; i++) {
			uint64_t gap = rcur_varint(c), len = rcur_varint(c);

			if (c->bad || !len || gap > REC_MAX_PAGE - at ||
			    len > REC_MAX_PAGE - at - gap)
				err = bad(why, whylen, "run range");
			else if ((marked += len) > shared)
				err = bad(why, whylen, "more pages in runs than shared");
			else
				pageset_add_range(s->cls[k], at + gap, at + gap + len);
			at += gap + len;
		}
	}
	if (!err && rcur_left(c))
		err = bad(why, whylen, "trailing bytes");
	if (err) {
		share_free(s);
		return err;
	}
	*out = s;
	return 0;
}

#define COUNT_BASE	3	/* counts are kept from 3 up (by 2 is its class) */

bool rec_put_share_counts(struct rbuf *b, const struct share *s)
{
	uint64_t at = 0;
	size_t i;

	if (!s || (!s->ncounts && !s->thp_known))
		return false;
	rbuf_varint(b, s->thp_known ? s->thp + 1 : 0);
	rbuf_varint(b, s->ncounts);
	for (i = 0; i < s->ncounts; i++) {
		uint64_t page = s->counts[i] >> SHARE_COUNT_BITS;

		rbuf_varint(b, page - at);
		rbuf_varint(b, (s->counts[i] & SHARE_COUNT_MAX) - COUNT_BASE);
		at = page + 1;
	}
	return true;
}

int rec_get_share_counts(struct rcur *c, struct share *s, char *why, size_t whylen)
{
	uint64_t thp = rcur_varint(c), n = rcur_varint(c), at = 0, i;

	/* Each row takes at least 2 bytes. */
	if (!s)
		return bad(why, whylen, "details without a pass");
	if (c->bad || s->ncounts || s->thp_known || n > rcur_left(c) / 2)
		return bad(why, whylen, "count rows");
	if (thp > REC_MAX_PAGE)
		return bad(why, whylen, "huge pages");
	s->thp_known = thp > 0;
	s->thp = thp ? thp - 1 : 0;
	for (i = 0; i < n; i++) {
		uint64_t gap = rcur_varint(c), count = rcur_varint(c), page = at + gap;

		if (c->bad || gap >= REC_MAX_PAGE - at || count > SHARE_COUNT_MAX - COUNT_BASE)
			return bad(why, whylen, "count row");
		count += COUNT_BASE;
		/* In its class's set: no more counts than shared pages. */
		if (share_page_class(s, page) != share_class_of(count))
			return bad(why, whylen, "a count its page's class does not have");
		if (share_mark(s, page, count))
			return -ENOMEM;
		at = page + 1;
	}
	return rcur_left(c) ? bad(why, whylen, "trailing bytes") : 0;
}
