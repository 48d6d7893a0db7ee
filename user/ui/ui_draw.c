// SPDX-License-Identifier: GPL-2.0
/* Pieces both views draw: title bar, header fields, footer, status line, prompt. */
#include <curses.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "ui/ui_draw.h"
#include "ui/ui_model.h"
#include "ui/ui_status.h"

void draw_fmt_pages(char *buf, size_t len, uint64_t pages)
{
	static const char units[] = "KMGTPE";
	double v = pages * (PAGE_SIZE_4K / 1024.0);
	int i = 0;

	if (!pages) {
		snprintf(buf, len, "0");
		return;
	}
	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	if (i == 0 || v >= 9.95)
		snprintf(buf, len, "%.0f%c", v, units[i]);
	else
		snprintf(buf, len, "%.1f%c", v, units[i]);
}

void draw_fmt_rate(char *buf, size_t len, double r)
{
	if (r < 0.05)
		snprintf(buf, len, "0");
	else if (r < 9.95)
		snprintf(buf, len, "%.1f", r);
	else if (r < 999.5)
		snprintf(buf, len, "%.0f", r);
	else if (r < 9950)
		snprintf(buf, len, "%.1fk", r / 1e3);
	else if (r < 999500)
		snprintf(buf, len, "%.0fk", r / 1e3);
	else
		snprintf(buf, len, "%.1fM", r / 1e6);
}

static const char *sep(const struct ui *ui)
{
	return ui->theme.utf8 ? " \u2502 " : " | ";
}

void draw_title(struct ui *ui, const char *what, const char *warn)
{
	struct ui_look look = ui->theme.style[ST_TITLE];
	char buf[256];
	int col;

	canvas_fill(&ui->canvas, 0, 0, ui->cols, ' ', look);
	col = canvas_printf(&ui->canvas, 0, 0, ui->cols, look, " mevitop %s%s%s",
			    MEVITOP_VERSION, sep(ui), what);
	if (warn) {
		col += canvas_text(&ui->canvas, 0, col, ui->cols - col, look, " ");
		col += canvas_printf(&ui->canvas, 0, col, ui->cols - col,
				     ui->theme.style[ST_TITLE_WARN], " %s ", warn);
	}
	snprintf(buf, sizeof(buf), "%s%s mode%sinterval %" PRIu64 " ms%s%s%.1f fps", sep(ui),
		 ui_model_mode(ui), sep(ui),
		 ui->o->interval_ms * (ui->stats.interval_scale > 1 ? ui->stats.interval_scale : 1),
		 ui->stats.interval_scale > 1 ? " (--max-cpu)" : "", sep(ui), ui->fps);
	canvas_text(&ui->canvas, 0, col, ui->cols - col, look, buf);
}

int draw_field(struct ui *ui, int row, int col, const char *label, const char *value,
	       enum ui_style value_style)
{
	if (col >= ui->cols)
		return col;
	col += canvas_text(&ui->canvas, row, col, ui->cols - col, ui->theme.style[ST_NORMAL],
			   label);
	col += canvas_text(&ui->canvas, row, col, ui->cols - col, ui->theme.style[ST_NORMAL],
			   " ");
	col += canvas_text(&ui->canvas, row, col, ui->cols - col, ui->theme.style[value_style],
			   value);
	col += canvas_text(&ui->canvas, row, col, ui->cols - col, ui->theme.style[ST_NORMAL],
			   "  ");
	return col;
}

int draw_engine_stats(struct ui *ui, int row, int col)
{
	const struct engine_stats *st = &ui->stats;
	char buf[32];

	draw_fmt_rate(buf, sizeof(buf), st->events_per_sec);
	col = draw_field(ui, row, col, "events/s", buf, ST_VALUE);
	snprintf(buf, sizeof(buf), "%" PRIu64, st->lost);
	col = draw_field(ui, row, col, "lost", buf, st->lost ? ST_WARN : ST_VALUE);
	snprintf(buf, sizeof(buf), "%" PRIu64, st->drift_pages);
	col = draw_field(ui, row, col, "drift", buf, st->drift_pages ? ST_WARN : ST_VALUE);
	snprintf(buf, sizeof(buf), "%.1f%%", st->cpu_pct);
	col = draw_field(ui, row, col, "cpu", buf, ST_VALUE);
	return col;
}

static int item_width(const struct ui_key *k)
{
	return k->hint_key ? canvas_text_width(k->hint_key) + canvas_text_width(k->hint) + 1 : 0;
}

/* One "KeyWhat " item; false when it does not fit. */
static bool footer_item(struct ui *ui, int *col, const struct ui_key *k)
{
	int row = ui->rows - 1, need = item_width(k);

	if (!k->hint_key)
		return true;
	if (*col + need > ui->cols)
		return false;
	*col += canvas_text(&ui->canvas, row, *col, ui->cols - *col, ui->theme.style[ST_KEY],
			    k->hint_key);
	*col += canvas_printf(&ui->canvas, row, *col, ui->cols - *col,
			      ui->theme.style[ST_KEYTEXT], "%s ", k->hint);
	return true;
}

void draw_footer(struct ui *ui, const struct ui_keymap *view)
{
	const struct ui_keymap *g = ui->global_keys;
	int col = 0, tail = 0, cols = ui->cols;
	size_t i;
	bool fits;

	canvas_fill(&ui->canvas, ui->rows - 1, 0, ui->cols, ' ', ui->theme.style[ST_KEYTEXT]);
	/* The view's hints stop where the global ones (pause, quit) would no longer fit: a
	 * narrow terminal loses a view hint before it loses quit. */
	for (i = 1; i < g->n; i++)
		tail += item_width(&g->keys[i]);
	fits = footer_item(ui, &col, &g->keys[0]);
	ui->cols = cols - tail;
	for (i = 0; fits && i < view->n; i++)
		fits = footer_item(ui, &col, &view->keys[i]);
	ui->cols = cols;
	for (i = 1; i < g->n; i++)
		footer_item(ui, &col, &g->keys[i]);
}

void draw_status_line(struct ui *ui, int row)
{
	char buf[1024];
	bool err = false;

	if (ui->prompt.kind != PROMPT_NONE) {
		int col = canvas_text(&ui->canvas, row, 0, ui->cols, ui->theme.style[ST_KEY],
				      ui->prompt.kind == PROMPT_FILTER ? "Filter: " :
				      ui->prompt.kind == PROMPT_TIME ? "Go to time (s): " :
				      ui->prompt.kind == PROMPT_SEARCH ? "Search mappings: " :
				      ui->prompt.kind == PROMPT_PAGE ? "Go to page: " :
				      "Go to address: 0x");

		col += canvas_text(&ui->canvas, row, col, ui->cols - col,
				   ui->theme.style[ST_NORMAL], ui->prompt.text);
		canvas_put(&ui->canvas, row, col, ' ',
			   (struct ui_look){ 0, A_REVERSE });
		canvas_text(&ui->canvas, row, col + 2, ui->cols - col - 2,
			    ui->theme.style[ST_DIM], "(Enter: done, Esc: cancel)");
		return;
	}
	if (ui_status(buf, sizeof(buf), &err))
		canvas_text(&ui->canvas, row, 0, ui->cols,
			    ui->theme.style[err ? ST_WARN : ST_STATUS], buf);
}

void draw_too_small(struct ui *ui)
{
	char buf[128];
	int row = ui->rows / 2, w;

	snprintf(buf, sizeof(buf), "terminal too small (%dx%d): mevitop needs %dx%d; q quits",
		 ui->cols, ui->rows, UI_MIN_COLS, UI_MIN_ROWS);
	w = canvas_text_width(buf);
	canvas_text(&ui->canvas, row, w < ui->cols ? (ui->cols - w) / 2 : 0, ui->cols,
		    ui->theme.style[ST_WARN], buf);
}

int draw_prompt_key(struct ui_prompt *p, int key)
{
	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		return 1;
	case 27:
		return -1;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		if (p->len)
			p->text[--p->len] = 0;
		return 0;
	case 21:	/* Ctrl-U */
		p->len = 0;
		p->text[0] = 0;
		return 0;
	}
	if (key >= 32 && key < 127 && p->len + 1 < sizeof(p->text)) {
		p->text[p->len++] = (char)key;
		p->text[p->len] = 0;
	}
	return 0;
}

void draw_menu(struct ui *ui, int top, int n, const char *(*name)(int i), int sel, int cur)
{
	int left = 2, w = 24, i;

	canvas_fill(&ui->canvas, top, left, w, ' ', ui->theme.style[ST_COLHEAD]);
	canvas_text(&ui->canvas, top, left + 1, w - 1, ui->theme.style[ST_COLHEAD], "Sort by");
	for (i = 0; i < n; i++) {
		struct ui_look look = ui->theme.style[i == sel ? ST_POPUP_SEL : ST_POPUP];

		canvas_fill(&ui->canvas, top + 1 + i, left, w, ' ', look);
		canvas_printf(&ui->canvas, top + 1 + i, left + 1, w - 1, look, "%c %s",
			      i == cur ? '*' : ' ', name(i));
	}
}

int draw_menu_key(int *sel, int n, int key)
{
	switch (key) {
	case KEY_UP:
		*sel = (*sel + n - 1) % n;
		return 0;
	case KEY_DOWN:
		*sel = (*sel + 1) % n;
		return 0;
	case '\n':
	case '\r':
	case KEY_ENTER:
		return 1;
	case 27:
	case KEY_F(6):
		return -1;
	}
	return 0;
}
