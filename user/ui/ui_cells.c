// SPDX-License-Identifier: GPL-2.0
/* Drawing both heatmaps share (ui_cells.h). */
#include <inttypes.h>
#include <stdio.h>
#include "ui/ui_cells.h"
#include "ui/ui_draw.h"

void cells_draw(struct ui *ui, int row, int col, const uint8_t *cells, int chars, int cpc,
		int cursor_char, int cursor_half)
{
	int c;

	/* A frame built for a taller screen (the lock was missed right after a resize) draws
	 * into this one: rows past the canvas are not there. */
	if (row < 0 || row >= ui->canvas.rows || col < 0)
		return;
	for (c = 0; c < chars && col + c < ui->cols && col + c < ui->canvas.cols; c++)
		*canvas_at(&ui->canvas, row, col + c) =
			theme_cell(&ui->theme, cells[(size_t)c * cpc],
				   cells[(size_t)c * cpc + cpc - 1],
				   c == cursor_char ? cursor_half : 0);
}

uint64_t cells_zoom_step(uint64_t z, int dir)
{
	if (dir > 0 && z > 1)
		return z >> 1;
	if (dir < 0 && z < 1ULL << 40)
		return z << 1;
	return z;
}

void cells_zoom_text(char *buf, size_t len, uint64_t zoom, bool is_auto, bool wide)
{
	char a[32];

	draw_fmt_pages(a, sizeof(a), zoom);
	if (zoom == 1)
		snprintf(buf, len, "1 page/cell%s", is_auto ? " auto" : "");
	else if (wide)
		snprintf(buf, len, "%" PRIu64 " pages/cell (%s)%s", zoom, a, is_auto ? " auto" : "");
	else
		snprintf(buf, len, "%" PRIu64 " pages/cell%s", zoom, is_auto ? " auto" : "");
}

size_t cells_fit_line(const struct ui *ui, int ncuts, char *buf, size_t size,
		      size_t (*text)(const struct ui *ui, int cut, char *buf, size_t size))
{
	int cut = 0;
	size_t len;

	do
		len = text(ui, cut, buf, size);
	while (canvas_text_width(buf) > ui->cols && ++cut < ncuts);
	return len;
}
