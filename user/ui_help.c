// SPDX-License-Identifier: GPL-2.0
/* The help screen: keys of both views and the legend, drawn with this terminal's glyphs. */
#include <curses.h>
#include <stdio.h>
#include "ui_state.h"

struct help_line {
	const char *keys, *what;
};

static const struct help_line list_keys[] = {
	{ "Up Dn PgUp PgDn", "select" },
	{ "Home End", "first / last" },
	{ "Enter", "heatmap of the process" },
	{ "/ F3 F4", "filter name/pid/user" },
	{ "Esc", "clear the filter" },
	{ "F6", "sort menu" },
	{ "< >", "sort column left/right" },
	{ "M P F", "sort: res pid faults/s" },
	{ "N S V", "sort: name swap mapped" },
	{ "R U", "sort: res% user" },
	{ "I", "invert the order" },
	{ "t F5", "tree view" },
	{ "- +", "fold / unfold subtree" },
	{ "*", "unfold all / fold all" },
};

static const struct help_line map_keys[] = {
	{ "arrows", "move by one cell" },
	{ "PgUp PgDn", "a screen up / down" },
	{ "Home End", "first / last cell" },
	{ "[ ] n N", "previous / next mapping" },
	{ "+ -", "zoom in / out" },
	{ "= 0", "zoom to fit (auto)" },
	{ "t", "heat layer (faults)" },
	{ "f F", "cycle the kinds shown" },
	{ "l", "label lines / compact" },
	{ "p", "packed: side by side" },
	{ "/", "search name/address" },
	{ "B", "most resident mapping" },
	{ "g", "go to an address" },
	{ "w", "who first touched (--stacks)" },
	{ "Tab S-Tab", "next / previous process" },
	{ "Esc Bksp", "back to the list" },
};

static int keys_block(struct ui *ui, int row, int col, int width, const char *title,
		      const struct help_line *l, size_t n)
{
	size_t i;

	canvas_text(&ui->canvas, row++, col, width, ui->theme.style[ST_LABEL], title);
	for (i = 0; i < n; i++, row++) {
		canvas_text(&ui->canvas, row, col + 1, 15, ui->theme.style[ST_KEY], l[i].keys);
		canvas_text(&ui->canvas, row, col + 17, width - 17, ui->theme.style[ST_NORMAL],
			    l[i].what);
	}
	return row;
}

/* "X name  " with X drawn exactly as the map draws it; returns the next column. */
static int swatch(struct ui *ui, int row, int col, uint8_t paint, const char *name)
{
	if (col >= ui->cols)
		return col;
	*canvas_at(&ui->canvas, row, col) = theme_swatch(&ui->theme, paint);
	return col + 2 + canvas_printf(&ui->canvas, row, col + 2, ui->cols - col - 2,
				       ui->theme.style[ST_NORMAL], "%s   ", name);
}

void help_draw(struct ui *ui)
{
	int half = ui->cols / 2, row, r2, col;

	canvas_clear(&ui->canvas);
	draw_title(ui, "help", "any key returns");
	row = keys_block(ui, 2, 0, half - 1, "Process list", list_keys,
			 sizeof(list_keys) / sizeof(list_keys[0]));
	r2 = keys_block(ui, 2, half, ui->cols - half, "Heatmap", map_keys,
			sizeof(map_keys) / sizeof(map_keys[0]));
	row = (row > r2 ? row : r2) + 1;
	col = canvas_text(&ui->canvas, row, 0, ui->cols, ui->theme.style[ST_LABEL], "Anywhere ");
	canvas_text(&ui->canvas, row, col, ui->cols - col, ui->theme.style[ST_NORMAL],
		    "h ? F1 help   Space pause   q F10 Ctrl-C quit");
	if (ui->replay) {
		col = canvas_text(&ui->canvas, ++row, 0, ui->cols, ui->theme.style[ST_LABEL],
				  "Replay ");
		canvas_text(&ui->canvas, row, col, ui->cols - col, ui->theme.style[ST_NORMAL],
			    ", . frame back/forth   { } 10 s   T go to a time   Space play/pause   "
			    "1 2 3 speed 1x 10x 100x   m mark   d diff since the mark");
	}
	row += 2;
	canvas_printf(&ui->canvas, row++, 0, ui->cols, ui->theme.style[ST_LABEL],
		      "Legend (%s): a cell is `zoom` pages%s", ui->theme.name,
		      ui->theme.halfblock ? ", a character two cells (top, bottom)" : "");
	col = swatch(ui, row, 1, P_NONRES, "not resident");
	col = swatch(ui, row, col, P_RES1, "<1/3");
	col = swatch(ui, row, col, P_RES2, "<2/3");
	col = swatch(ui, row, col, P_RES3, "<all");
	swatch(ui, row++, col, P_RES4, "all pages resident");
	col = swatch(ui, row, 1, P_SWAP, "swapped");
	col = swatch(ui, row, col, P_UNTR, "untracked (not in pagemap)");
	swatch(ui, row++, col, P_MIXED, "mixed states");
	col = swatch(ui, row, 1, P_COLD, "heat layer: resident, cold");
	col = swatch(ui, row, col, P_HEAT1, "");
	col = swatch(ui, row, col - 3, P_HEAT2, "");
	col = swatch(ui, row, col - 3, P_HEAT3, "");
	swatch(ui, row++, col - 3, P_HEAT4, "faulted recently (half-life 2 s)");
	if (ui->theme.halfblock)
		col = swatch(ui, row, 1, P_CURSOR, "the cursor cell (read out above the footer)");
	else
		canvas_text(&ui->canvas, row, 1, ui->cols - 1, ui->theme.style[ST_NORMAL],
			    "reverse video: the cursor cell (read out above the footer)");
	row += 2;
	canvas_text(&ui->canvas, row, 0, ui->cols, ui->theme.style[ST_DIM],
		    "Labels: range, perms, name, resident/mapped, recent faults/s.");
}
