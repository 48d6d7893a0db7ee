// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "ui/overview.h"
#include "ui/ui_paint.h"
#include "ui/ui_theme.h"

static uint64_t mapped_pages(const struct hm_layout *l)
{
	uint64_t t = 0;
	size_t i;

	for (i = 0; i < l->n; i++)
		t += l->maps[i].end - l->maps[i].start;
	return t;
}

/* The column of offset o (pages into the mapped part) of t, over w columns. */
static uint64_t column(uint64_t o, uint64_t t, int w)
{
	return (uint64_t)((unsigned __int128)o * (uint64_t)w / t);
}

void overview_paint(const struct hm_layout *l, const uint64_t *res, int w, uint8_t *out)
{
	uint64_t t = mapped_pages(l), o = 0, n[OVERVIEW_MAX_COLS];
	double r[OVERVIEW_MAX_COLS];
	size_t i;
	int c;

	if (w > OVERVIEW_MAX_COLS)
		w = OVERVIEW_MAX_COLS;
	memset(n, 0, sizeof(n));
	memset(r, 0, sizeof(r));
	for (i = 0; t && i < l->n; i++) {
		uint64_t s = l->maps[i].end - l->maps[i].start, a = o, e = o + s;

		/* Each column the mapping overlaps gets its share of the pages. */
		for (c = (int)column(a, t, w); c < w && a < e; c++) {
			uint64_t ce = (uint64_t)(((unsigned __int128)(c + 1) * t + w - 1) / w);
			uint64_t b = ce < e ? ce : e;

			if (b <= a)
				continue;
			n[c] += b - a;
			r[c] += (double)res[i] * (double)(b - a) / (double)s;
			a = b;
		}
		o = e;
	}
	for (c = 0; c < w; c++)
		out[c] = n[c] ? paint_counts(n[c], (uint64_t)(r[c] + 0.5), 0, 0) : P_BLANK;
}

void overview_span(const struct hm_layout *l, size_t first, size_t last, int w, int *c0,
		   int *c1)
{
	uint64_t t = mapped_pages(l), o = 0, a = 0, e = 0;
	size_t i;

	for (i = 0; i < l->n && i <= last; i++) {
		if (i == first)
			a = o;
		o += l->maps[i].end - l->maps[i].start;
		e = o;
	}
	*c0 = t ? (int)column(a, t, w) : 0;
	*c1 = t ? (int)((((unsigned __int128)e * (uint64_t)w) + t - 1) / t) : 0;
	if (*c1 <= *c0)
		*c1 = *c0 + 1;
	if (*c1 > w)
		*c1 = w;
}
