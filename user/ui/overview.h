/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The packed heatmap's overview: one line for the whole mapped part of the address space
 * (mappings end to end, unmapped gaps left out), each column the resident share of the
 * pages it stands for, with the part the screen shows marked.  No curses here.
 */
#ifndef MEVITOP_UI_OVERVIEW_H
#define MEVITOP_UI_OVERVIEW_H

#include <stddef.h>
#include <stdint.h>
#include "ui/ui_maplayout.h"

#define OVERVIEW_MAX_COLS 1024

/* Paints w (at most OVERVIEW_MAX_COLS) columns into out from res[i], the resident pages of mapping i of l (a mapping's
 * resident pages are spread evenly over its columns: an overview, not a count). */
void overview_paint(const struct hm_layout *l, const uint64_t *res, int w, uint8_t *out);
/* The columns [*c0, *c1) that mappings first..last (inclusive) take in the overview. */
void overview_span(const struct hm_layout *l, size_t first, size_t last, int w, int *c0,
		   int *c1);

#endif
