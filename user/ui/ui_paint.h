/* SPDX-License-Identifier: GPL-2.0 */
/* The heatmap's cells painted: each cell's look from its pages' states, heat, sharing or
 * difference, over a layout (ui_maplayout.h). */
#ifndef MEVITOP_UI_PAINT_H
#define MEVITOP_UI_PAINT_H

#include <stdbool.h>
#include <stdint.h>
#include "ui/ui_maplayout.h"

/* Painting cells: what one cell looks like from its page counts and heat. */
struct hm_paint {
	const struct proc *p;
	uint64_t now_ns;		/* heat decays to this time */
	bool heat;			/* heat layer instead of residency */
	bool share;			/* sharing layer (p->share set): cells by map count */
	const struct proc *ref;		/* diff layer (replay): pages whose state differs
					 * from this earlier model, instead of either */
	bool has_swapped, has_untracked; /* the process has any (skips counting them) */
	uint64_t *scratch;		/* 4 * per_line counters */
};

/* Paints line `row` of mapping m's cells into out[0..per_line): P_BLANK past its end. */
void paint_row(const struct hm_paint *c, const struct hm_layout *l, const struct hm_map *m,
	       uint64_t row, uint8_t *out);
/* The sharing layer's paint for r resident pages of which c[SHC_TWO..] are mapped by 2,
 * 3-8, more (the rest private): the class most of them are in, the more shared on a tie;
 * P_NONRES when none is resident. */
uint8_t paint_share(uint64_t r, const uint64_t c[SHC_COUNT]);
/* The paint for n pages of which r resident, s swapped, u untracked. */
uint8_t paint_counts(uint64_t n, uint64_t r, uint64_t s, uint64_t u);
/* The heat layer's paint for [start, end) with decayed heat h. */
uint8_t paint_heat(float h, uint64_t start, uint64_t end, bool resident);
/* Faults per second that a decayed heat sum stands for (steady state). */
double paint_heat_rate(float h);

#endif
