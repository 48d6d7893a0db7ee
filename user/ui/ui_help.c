// SPDX-License-Identifier: GPL-2.0
/* The help screen: the key tables (ui/keys.h) and the legend, drawn with this terminal's glyphs. */
#include <curses.h>
#include <stdio.h>
#include "ui/ui_draw.h"
#include "ui/ui_fileheat.h"
#include "ui/ui_files.h"
#include "ui/ui_heatmap.h"
#include "ui/ui_help.h"
#include "ui/ui_proclist.h"
#include "ui/ui_replay.h"

/* A view's table: its title, then "keys  what" per entry; returns the next row. */
static int keys_block(struct ui *ui, int row, int col, int width, const struct ui_keymap *km)
{
	size_t i;

	canvas_text(&ui->canvas, row++, col, width, ui->theme.style[ST_LABEL], km->title);
	for (i = 0; i < km->n; i++, row++) {
		canvas_text(&ui->canvas, row, col + 1, 15, ui->theme.style[ST_KEY],
			    km->keys[i].keys);
		canvas_text(&ui->canvas, row, col + 17, width - 17, ui->theme.style[ST_NORMAL],
			    km->keys[i].help);
	}
	return row;
}

/* "Title keys what   keys what ..." on one line. */
static void keys_line(struct ui *ui, int row, const struct ui_keymap *km)
{
	int col = canvas_printf(&ui->canvas, row, 0, ui->cols, ui->theme.style[ST_LABEL], "%s ",
				km->title);
	size_t i;

	for (i = 0; i < km->n && col < ui->cols; i++) {
		col += canvas_text(&ui->canvas, row, col, ui->cols - col, ui->theme.style[ST_KEY],
				   km->keys[i].keys);
		col += canvas_printf(&ui->canvas, row, col, ui->cols - col,
				     ui->theme.style[ST_NORMAL], " %s   ", km->keys[i].help);
	}
}

/* "X name  " with X drawn exactly as the map draws it; returns the next column. */
static int swatch(struct ui *ui, int row, int col, uint8_t paint, const char *name)
{
	/* A short terminal cuts the legend (the key tables come first). */
	if (col >= ui->cols || row >= ui->rows || col < 0)
		return col;
	*canvas_at(&ui->canvas, row, col) = theme_swatch(&ui->theme, paint);
	return col + 2 + canvas_printf(&ui->canvas, row, col + 2, ui->cols - col - 2,
				       ui->theme.style[ST_NORMAL], "%s   ", name);
}

/* The gradient of shares, none to all, on one row. */
static void gradient(struct ui *ui, int row, const char *none, const char *all)
{
	int col = swatch(ui, row, 1, P_NONRES, none);

	col = swatch(ui, row, col, P_RES1, "<1/3");
	col = swatch(ui, row, col, P_RES2, "<2/3");
	col = swatch(ui, row, col, P_RES3, "<all");
	swatch(ui, row, col, P_RES4, all);
}

/* The heat layer's row: quiet, then the four levels side by side, then what they mean;
 * returns the next column. */
static int heat_scale(struct ui *ui, int row, const char *quiet, const char *hot)
{
	int col = swatch(ui, row, 1, P_COLD, quiet);

	col = swatch(ui, row, col, P_HEAT1, "");
	col = swatch(ui, row, col - 3, P_HEAT2, "");
	col = swatch(ui, row, col - 3, P_HEAT3, "");
	return swatch(ui, row, col - 3, P_HEAT4, hot);
}

/* The Files side's legend: the file heatmap's cells. */
static void files_legend(struct ui *ui, int row)
{
	int col;

	canvas_printf(&ui->canvas, row++, 0, ui->cols, ui->theme.style[ST_LABEL],
		      "Legend (%s): a cell is `zoom` pages of the file, in file order%s",
		      ui->theme.name, ui->theme.halfblock ? ", a character two cells" : "");
	gradient(ui, row++, "not cached", "all pages cached");
	col = swatch(ui, row, 1, P_DIRTY, "dirty (some)");
	swatch(ui, row++, col, P_WB, "under writeback (some)");
	col = heat_scale(ui, row, "heat layer: cached, quiet", "added recently");
	swatch(ui, row++, col, P_EVICT, "evicted recently");
	canvas_text(&ui->canvas, row + 1, 0, ui->cols, ui->theme.style[ST_DIM],
		    "Files: CACHED DIRTY WB as sizes, ADDS/s EVICT/s in pages per second, "
		    "MAPPED-BY the watched processes mapping it.");
}

void help_draw(struct ui *ui)
{
	bool files = ui->view == VIEW_FILES || ui->view == VIEW_FMAP;
	int half = ui->cols / 2, row, r2, col;

	canvas_clear(&ui->canvas);
	draw_title(ui, "help", "any key returns");
	/* This side of the program: the list and its heatmap (processes, or files). */
	row = keys_block(ui, 2, 0, half - 1, files ? &files_keymap : &proclist_keymap);
	r2 = keys_block(ui, 2, half, ui->cols - half, files ? &fileheat_keymap : &heatmap_keymap);
	row = (row > r2 ? row : r2) + 1;
	keys_line(ui, row, ui->global_keys);
	if (ui->replay)
		keys_line(ui, ++row, &replay_keymap);
	row += 2;
	if (files) {
		files_legend(ui, row);
		return;
	}
	canvas_printf(&ui->canvas, row++, 0, ui->cols, ui->theme.style[ST_LABEL],
		      "Legend (%s): a cell is `zoom` pages%s", ui->theme.name,
		      ui->theme.halfblock ? ", a character two cells (top, bottom)" : "");
	gradient(ui, row++, "not resident", "all pages resident");
	col = swatch(ui, row, 1, P_SWAP, "swapped");
	col = swatch(ui, row, col, P_UNTR, "untracked (not in pagemap)");
	swatch(ui, row++, col, P_MIXED, "mixed states");
	heat_scale(ui, row++, "heat layer: resident, cold", "faulted recently (half-life 2 s)");
	if (ui->theme.halfblock)
		col = swatch(ui, row, 1, P_CURSOR, "the cursor cell (read out above the footer)");
	else
		canvas_text(&ui->canvas, row, 1, ui->cols - 1, ui->theme.style[ST_NORMAL],
			    "reverse video: the cursor cell (read out above the footer)");
	row += 2;
	canvas_text(&ui->canvas, row, 0, ui->cols, ui->theme.style[ST_DIM],
		    "Labels: range, perms, name, resident/mapped, recent faults/s.");
}
