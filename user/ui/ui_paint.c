// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <string.h>
#include "lib/pageset.h"
#include "ui/ui_paint.h"
#include "ui/ui_theme.h"

uint8_t paint_share(uint64_t r, const uint64_t c[SHC_COUNT])
{
	static const uint8_t paint[SHC_COUNT] = {
		[SHC_PRIVATE] = P_RES4, [SHC_TWO] = P_HEAT1, [SHC_FEW] = P_HEAT2,
		[SHC_MANY] = P_HEAT4,
	};
	uint64_t priv = r - c[SHC_TWO] - c[SHC_FEW] - c[SHC_MANY], best = priv;
	int k, cls = SHC_PRIVATE;

	if (!r)
		return P_NONRES;
	for (k = SHC_TWO; k < SHC_COUNT; k++)
		if (c[k] && c[k] >= best) {
			best = c[k];
			cls = k;
		}
	return paint[cls];
}

/* The sharing layer of one row: one walk per class set. */
static void paint_share_row(const struct hm_paint *c, uint64_t rs, uint64_t re, uint64_t z,
			    uint64_t cells, const uint64_t *r, uint64_t *cnt, uint8_t *out)
{
	uint64_t k, v[SHC_COUNT];
	int j;

	for (j = SHC_TWO; j < SHC_COUNT; j++)
		pageset_count_cells(c->p->share->cls[j], rs, re, z, cnt + (j - 1) * cells);
	for (k = 0; k < cells; k++) {
		for (j = SHC_TWO; j < SHC_COUNT; j++)
			v[j] = cnt[(j - 1) * cells + k];
		out[k] = paint_share(r[k], v);
	}
}

uint8_t paint_counts(uint64_t n, uint64_t r, uint64_t s, uint64_t u)
{
	if ((r > 0) + (s > 0) + (u > 0) > 1)
		return P_MIXED;
	if (s)
		return P_SWAP;
	if (u)
		return P_UNTR;
	if (!r)
		return P_NONRES;
	if (r >= n)
		return P_RES4;
	if (3 * r <= n)
		return P_RES1;
	if (3 * r <= 2 * n)
		return P_RES2;
	return P_RES3;
}

/* Heat is kept per 16-page block: intensity is the decayed fault count per page of the
 * blocks the range overlaps.  One fault in a block is 1/16 and fades below the coldest
 * level in about 8 s (half-life 2 s); a block faulted in completely just now is 1. */
uint8_t paint_heat(float h, uint64_t start, uint64_t end, bool resident)
{
	uint64_t blocks = ((end - 1) >> HEAT_BLOCK_SHIFT) - (start >> HEAT_BLOCK_SHIFT) + 1;
	float x = h / (float)(blocks << HEAT_BLOCK_SHIFT);

	if (x < 1.0f / 256)
		return resident ? P_COLD : P_NONRES;
	if (x < 1.0f / 32)
		return P_HEAT1;
	if (x < 1.0f / 8)
		return P_HEAT2;
	if (x < 1.0f / 2)
		return P_HEAT3;
	return P_HEAT4;
}

double paint_heat_rate(float h)
{
	/* A constant rate r gives a steady heat of r * half_life / ln 2. */
	return h * M_LN2 / (HEAT_HALF_LIFE_NS / 1e9);
}

struct diff_cells {
	uint64_t rs, z, cells, *cnt;
};

static int count_diff(uint64_t a, uint64_t b, enum page_state s, void *arg)
{
	struct diff_cells *d = arg;

	for (uint64_t k = (a - d->rs) / d->z; k < d->cells && d->rs + k * d->z < b; k++) {
		uint64_t cs = d->rs + k * d->z, ce = cs + d->z;

		d->cnt[k] += (b < ce ? b : ce) - (a > cs ? a : cs);
	}
	return 0;
}

/* The diff layer's paint: how much of the cell changed state (heat colours), else whether
 * it is resident. */
static uint8_t paint_diff(uint64_t changed, uint64_t n, bool resident)
{
	if (!changed)
		return resident ? P_COLD : P_NONRES;
	if (changed * 4 <= n)
		return P_HEAT1;
	if (changed * 2 <= n)
		return P_HEAT2;
	if (changed * 4 <= n * 3)
		return P_HEAT3;
	return P_HEAT4;
}

void paint_row(const struct hm_paint *c, const struct hm_layout *l, const struct hm_map *m,
	       uint64_t row, uint8_t *out)
{
	uint64_t z = m->zoom, rs = m->start + row * l->per_line * z, re, cells, k;
	uint64_t *r = c->scratch, *sw = r + l->per_line, *u = sw + l->per_line;
	float heat = 0;

	re = rs + (uint64_t)l->per_line * z;
	if (re > m->end || re < rs)
		re = m->end;
	cells = rs < re ? hm_div_up(re - rs, z) : 0;
	for (k = cells; k < (uint64_t)l->per_line; k++)
		out[k] = P_BLANK;
	if (!cells)
		return;
	/* One walk per set and row (pageset_count_cells), not a rank per cell. */
	pageset_count_cells(c->p->set[PS_RESIDENT], rs, re, z, r);
	if (c->ref) {
		struct diff_cells d = { .rs = rs, .z = z, .cells = cells, .cnt = sw };

		memset(sw, 0, cells * sizeof(*sw));
		model_diff(c->p, c->ref, rs, re, count_diff, &d);
		for (k = 0; k < cells; k++) {
			uint64_t cs = rs + k * z, ce = cs + z < re ? cs + z : re;

			out[k] = paint_diff(sw[k], ce - cs, r[k] > 0);
		}
		return;
	}
	if (c->share && c->p->share) {
		paint_share_row(c, rs, re, z, cells, r, sw, out);	/* sw: 3 * per_line */
		return;
	}
	if (c->heat) {
		heat = heat_range(&c->p->heat, rs, re, c->now_ns);
		for (k = 0; k < cells; k++) {
			uint64_t cs = rs + k * z, ce = cs + z < re ? cs + z : re;
			float h = heat > 0 ? heat_range(&c->p->heat, cs, ce, c->now_ns) : 0;

			out[k] = paint_heat(h, cs, ce, r[k] > 0);
		}
		return;
	}
	if (c->has_swapped)
		pageset_count_cells(c->p->set[PS_SWAPPED], rs, re, z, sw);
	else
		memset(sw, 0, cells * sizeof(*sw));
	if (c->has_untracked)
		pageset_count_cells(c->p->set[PS_UNTRACKED], rs, re, z, u);
	else
		memset(u, 0, cells * sizeof(*u));
	for (k = 0; k < cells; k++) {
		uint64_t cs = rs + k * z, ce = cs + z < re ? cs + z : re;

		out[k] = paint_counts(ce - cs, r[k], sw[k], u[k]);
	}
}
