// SPDX-License-Identifier: GPL-2.0
#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include "ui/ui_canvas.h"

/* Forget what the screen shows: the next flush rewrites every row. */
static void canvas_invalidate(struct ui_canvas *c)
{
	int r;

	for (r = 0; r < c->rows; r++)
		c->dirty_all[r] = true;
}

int canvas_resize(struct ui_canvas *c, int rows, int cols)
{
	size_t n = (size_t)(rows > 0 ? rows : 0) * (cols > 0 ? cols : 0);
	struct ui_cell *cur = calloc(n ? n : 1, sizeof(*cur));
	struct ui_cell *prev = calloc(n ? n : 1, sizeof(*prev));
	bool *dirty = calloc(rows > 0 ? rows : 1, sizeof(*dirty));

	if (!cur || !prev || !dirty) {
		free(cur);
		free(prev);
		free(dirty);
		return -1;
	}
	canvas_free(c);
	c->rows = rows > 0 ? rows : 0;
	c->cols = cols > 0 ? cols : 0;
	c->cur = cur;
	c->prev = prev;
	c->dirty_all = dirty;
	canvas_invalidate(c);
	canvas_clear(c);
	return 0;
}

void canvas_free(struct ui_canvas *c)
{
	free(c->cur);
	free(c->prev);
	free(c->dirty_all);
	memset(c, 0, sizeof(*c));
}

void canvas_clear(struct ui_canvas *c)
{
	long i, n = (long)c->rows * c->cols;

	for (i = 0; i < n; i++)
		c->cur[i] = (struct ui_cell){ .ch = ' ' };
}

static bool inside(const struct ui_canvas *c, int row, int col)
{
	return row >= 0 && row < c->rows && col >= 0 && col < c->cols;
}

void canvas_put(struct ui_canvas *c, int row, int col, uint32_t ch, struct ui_look look)
{
	if (inside(c, row, col))
		*canvas_at(c, row, col) = (struct ui_cell){ ch, look.attr, look.pair };
}

void canvas_fill(struct ui_canvas *c, int row, int col, int n, uint32_t ch, struct ui_look look)
{
	int i;

	for (i = 0; i < n; i++)
		canvas_put(c, row, col + i, ch, look);
}

/* Next character of s (UTF-8 in a UTF-8 locale), as one printable column; advances *s. */
static uint32_t next_char(const char **s, mbstate_t *st)
{
	unsigned char b = (unsigned char)**s;
	wchar_t wc;
	size_t n;

	if (b < 0x80) {
		(*s)++;
		return b >= 0x20 && b != 0x7f ? b : '?';
	}
	n = mbrtowc(&wc, *s, MB_CUR_MAX, st);
	if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
		memset(st, 0, sizeof(*st));
		(*s)++;
		return '?';
	}
	*s += n;
	return wcwidth(wc) == 1 ? (uint32_t)wc : '?';
}

int canvas_text(struct ui_canvas *c, int row, int col, int maxw, struct ui_look look,
		const char *s)
{
	mbstate_t st;
	int w = 0;

	memset(&st, 0, sizeof(st));
	while (s && *s && w < maxw) {
		uint32_t ch = next_char(&s, &st);

		canvas_put(c, row, col + w, ch, look);
		w++;
	}
	return w;
}

int canvas_text_width(const char *s)
{
	mbstate_t st;
	int w = 0;

	memset(&st, 0, sizeof(st));
	while (s && *s) {
		next_char(&s, &st);
		w++;
	}
	return w;
}

int canvas_printf(struct ui_canvas *c, int row, int col, int maxw, struct ui_look look,
		  const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return canvas_text(c, row, col, maxw, look, buf);
}

void canvas_flush(struct ui_canvas *c)
{
	cchar_t *line = malloc((size_t)(c->cols > 0 ? c->cols : 1) * sizeof(*line));
	int r, k;

	if (!line)
		return;
	for (r = 0; r < c->rows; r++) {
		struct ui_cell *cur = c->cur + (long)r * c->cols;
		struct ui_cell *prev = c->prev + (long)r * c->cols;

		if (!c->dirty_all[r] && !memcmp(cur, prev, c->cols * sizeof(*cur)))
			continue;
		for (k = 0; k < c->cols; k++) {
			wchar_t w[2] = { (wchar_t)cur[k].ch, 0 };

			setcchar(&line[k], w, cur[k].attr, (short)cur[k].pair, NULL);
		}
		mvadd_wchnstr(r, 0, line, c->cols);
		memcpy(prev, cur, c->cols * sizeof(*cur));
		c->dirty_all[r] = false;
	}
	free(line);
}
