/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An off-screen grid of character cells.  Views compose a frame into it without calling
 * curses; ui_term flushes it, handing curses only the rows that changed since the last
 * frame (curses then sends only the changed characters), so an unchanged screen costs
 * almost nothing to redraw and nothing flickers.
 */
#ifndef MEVITOP_UI_CANVAS_H
#define MEVITOP_UI_CANVAS_H

#include <stdbool.h>
#include <stdint.h>

struct ui_cell {
	uint32_t ch;			/* one character (UCS-4), printable, one column wide */
	uint32_t attr;			/* curses A_* attributes, colour excluded */
	int32_t pair;			/* curses colour pair (int: no padding, rows compare with memcmp) */
};

/* A colour pair and attributes: how a piece of text looks. */
struct ui_look {
	int16_t pair;
	uint32_t attr;
};

struct ui_canvas {
	int rows, cols;
	struct ui_cell *cur;		/* the frame being composed */
	struct ui_cell *prev;		/* what curses has */
	bool *dirty_all;		/* per row: redraw even if equal (after a clear) */
};

int canvas_resize(struct ui_canvas *c, int rows, int cols);
void canvas_free(struct ui_canvas *c);
/* Blank the frame being composed. */
void canvas_clear(struct ui_canvas *c);

static inline struct ui_cell *canvas_at(struct ui_canvas *c, int row, int col)
{
	return &c->cur[(long)row * c->cols + col];
}

void canvas_put(struct ui_canvas *c, int row, int col, uint32_t ch, struct ui_look look);
void canvas_fill(struct ui_canvas *c, int row, int col, int n, uint32_t ch, struct ui_look look);
/* UTF-8 text, clipped to maxw columns (and the canvas); returns the columns used.
 * Characters that are not printable and one column wide become '?'. */
int canvas_text(struct ui_canvas *c, int row, int col, int maxw, struct ui_look look,
		const char *s);
int canvas_printf(struct ui_canvas *c, int row, int col, int maxw, struct ui_look look,
		  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Columns the text would take (same rules as canvas_text). */
int canvas_text_width(const char *s);

/* Writes the changed rows to stdscr (curses); the caller refreshes. */
void canvas_flush(struct ui_canvas *c);

#endif
