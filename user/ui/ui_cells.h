/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the process heatmap (ui_heatmap.c) and the file heatmap (ui_fileheat.c) draw alike
 * (ui_cells.c): a line of painted cells with the cursor on one of them, the zoom steps and
 * their header text, and a readout line cut until it fits.
 */
#ifndef MEVITOP_UI_CELLS_H
#define MEVITOP_UI_CELLS_H

#include <stddef.h>
#include <stdint.h>
#include "ui/ui_state.h"

/*
 * Draws chars characters of cells (cpc paints each: top, then bottom with half blocks) at
 * (row, col), clipped to the screen; the cursor is on character cursor_char (-1: none), on
 * its cell cursor_half (1 top, 2 bottom; 1 without half blocks).
 */
void cells_draw(struct ui *ui, int row, int col, const uint8_t *cells, int chars, int cpc,
		int cursor_char, int cursor_half);
/* The next zoom (pages per cell) in (dir > 0: halved) or out (dir < 0: doubled). */
uint64_t cells_zoom_step(uint64_t zoom, int dir);
/* The header's zoom field: "1 page/cell auto", "64 pages/cell (256K)" (the size when
 * wide). */
void cells_zoom_text(char *buf, size_t len, uint64_t zoom, bool is_auto, bool wide);
/*
 * The cursor line: text(cut) for cut = 0, 1, ... until it fits ui->cols (the last cut
 * regardless); returns the length of buf.  text writes into buf (size) and returns its
 * length.
 */
size_t cells_fit_line(const struct ui *ui, int ncuts, char *buf, size_t size,
		      size_t (*text)(const struct ui *ui, int cut, char *buf, size_t size));

#endif
