// SPDX-License-Identifier: GPL-2.0
#include <curses.h>
#include <stdio.h>
#include <string.h>
#include "ui/ui_theme.h"

/* 256-colour palette for half blocks (-1: the terminal's background). */
static const short hb_color[P_COUNT] = {
	[P_BLANK] = -1,
	[P_NONRES] = 238,	/* dark grey */
	[P_RES1] = 22,		/* green, darker to brighter */
	[P_RES2] = 28,
	[P_RES3] = 34,
	[P_RES4] = 46,
	[P_SWAP] = 33,		/* blue */
	[P_UNTR] = 130,		/* brown */
	[P_MIXED] = 201,	/* magenta: a marker */
	[P_COLD] = 22,
	[P_HEAT1] = 88,		/* dark red to yellow */
	[P_HEAT2] = 160,
	[P_HEAT3] = 208,
	[P_HEAT4] = 226,
	[P_CURSOR] = 231,	/* white */
	[P_DIRTY] = 214,	/* orange */
	[P_WB] = 196,		/* red */
	[P_EVICT] = 39,		/* blue */
};

/* One cell per character: colour (8 colours) and glyphs. */
static const short shade_color[P_COUNT] = {
	[P_BLANK] = -1, [P_NONRES] = -1,
	[P_RES1] = COLOR_GREEN, [P_RES2] = COLOR_GREEN, [P_RES3] = COLOR_GREEN,
	[P_RES4] = COLOR_GREEN, [P_SWAP] = COLOR_BLUE, [P_UNTR] = COLOR_YELLOW,
	[P_MIXED] = COLOR_MAGENTA, [P_COLD] = COLOR_GREEN, [P_HEAT1] = COLOR_RED,
	[P_HEAT2] = COLOR_RED, [P_HEAT3] = COLOR_YELLOW, [P_HEAT4] = COLOR_YELLOW,
	[P_CURSOR] = -1, [P_DIRTY] = COLOR_YELLOW, [P_WB] = COLOR_RED, [P_EVICT] = COLOR_BLUE,
};

static const uint32_t glyph_utf8[P_COUNT] = {
	[P_BLANK] = ' ', [P_NONRES] = 0x00b7 /* · */,
	[P_RES1] = 0x2591 /* ░ */, [P_RES2] = 0x2592 /* ▒ */, [P_RES3] = 0x2593 /* ▓ */,
	[P_RES4] = 0x2588 /* █ */, [P_SWAP] = 'S', [P_UNTR] = '?', [P_MIXED] = '*',
	[P_COLD] = '-', [P_HEAT1] = 0x2591, [P_HEAT2] = 0x2592, [P_HEAT3] = 0x2593,
	[P_HEAT4] = 0x2588, [P_CURSOR] = 0x2588, [P_DIRTY] = 'D', [P_WB] = 'W', [P_EVICT] = 'e',
};

static const uint32_t glyph_ascii[P_COUNT] = {
	[P_BLANK] = ' ', [P_NONRES] = '.', [P_RES1] = ':', [P_RES2] = '+', [P_RES3] = '%',
	[P_RES4] = '#', [P_SWAP] = 'S', [P_UNTR] = '?', [P_MIXED] = '&', [P_COLD] = '-',
	[P_HEAT1] = '~', [P_HEAT2] = 'o', [P_HEAT3] = 'O', [P_HEAT4] = '@', [P_CURSOR] = '#',
	[P_DIRTY] = 'D', [P_WB] = 'W', [P_EVICT] = 'e',
};

static const uint32_t eighths[7] = { 0x258f, 0x258e, 0x258d, 0x258c, 0x258b, 0x258a, 0x2589 };

struct chrome {
	short fg, bg;		/* 8-colour pair, -1 default */
	uint32_t attr;		/* with colours */
	uint32_t mono;		/* without */
};

static const struct chrome chrome[ST_COUNT] = {
	[ST_NORMAL] = { -1, -1, 0, 0 },
	[ST_TITLE] = { COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE },
	[ST_TITLE_WARN] = { COLOR_WHITE, COLOR_RED, A_BOLD, A_BOLD },
	[ST_VALUE] = { COLOR_CYAN, -1, A_BOLD, A_BOLD },
	[ST_WARN] = { COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	[ST_DIM] = { -1, -1, A_DIM, A_DIM },
	[ST_COLHEAD] = { COLOR_BLACK, COLOR_GREEN, 0, A_REVERSE },
	[ST_COLHEAD_SORT] = { COLOR_BLACK, COLOR_CYAN, A_BOLD, A_REVERSE | A_BOLD | A_UNDERLINE },
	[ST_SELECT] = { COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE },
	[ST_EXITED] = { COLOR_RED, -1, A_DIM, A_DIM },
	[ST_LABEL] = { COLOR_CYAN, -1, A_BOLD, A_BOLD },
	[ST_LABEL_CUR] = { COLOR_YELLOW, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	[ST_GUTTER] = { -1, -1, A_DIM, 0 },
	[ST_KEY] = { -1, -1, A_BOLD, A_BOLD },
	[ST_KEYTEXT] = { COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE },
	[ST_STATUS] = { COLOR_YELLOW, -1, 0, A_BOLD },
	[ST_POPUP] = { COLOR_BLACK, COLOR_WHITE, 0, 0 },
	[ST_POPUP_SEL] = { COLOR_BLACK, COLOR_CYAN, A_BOLD, A_REVERSE },
	[ST_BAR] = { COLOR_GREEN, -1, 0, 0 },
	/* htop's memory meter: used green, cache yellow; shmem magenta, kernel red. */
	[ST_MEM_ANON] = { COLOR_GREEN, -1, 0, 0 },
	[ST_MEM_SHMEM] = { COLOR_MAGENTA, -1, 0, 0 },
	[ST_MEM_CACHE] = { COLOR_YELLOW, -1, 0, 0 },
	[ST_MEM_KERNEL] = { COLOR_RED, -1, 0, 0 },
	[ST_MEM_OTHER] = { COLOR_BLUE, -1, 0, 0 },
};

void theme_init(struct ui_theme *t, bool utf8)
{
	int i, j, pair = 1, ncolors = 0;
	short bg = -1;

	memset(t, 0, sizeof(*t));
	t->utf8 = utf8;
	if (has_colors() && start_color() == OK && COLORS >= 8) {
		ncolors = COLORS >= 256 ? 256 : 8;
		if (use_default_colors() != OK)
			bg = COLOR_BLACK;
	}
	t->colors = ncolors;
	for (i = 0; i < ST_COUNT; i++) {
		if (ncolors && pair < COLOR_PAIRS) {
			init_pair(pair, chrome[i].fg < 0 && bg >= 0 ? COLOR_WHITE : chrome[i].fg,
				  chrome[i].bg < 0 ? bg : chrome[i].bg);
			t->style[i] = (struct ui_look){ pair++, chrome[i].attr };
		} else {
			t->style[i] = (struct ui_look){ 0, chrome[i].mono };
		}
	}
	for (i = 0; i < P_COUNT; i++) {
		t->glyph[i] = utf8 ? glyph_utf8[i] : glyph_ascii[i];
		if (ncolors && shade_color[i] >= 0 && pair < COLOR_PAIRS) {
			init_pair(pair, shade_color[i], bg);
			t->paint[i] = (struct ui_look){ pair++, i == P_HEAT4 || i == P_MIXED ||
								i == P_SWAP || i == P_WB ? A_BOLD : 0 };
		} else {
			t->paint[i] = (struct ui_look){ 0, i == P_NONRES || i == P_COLD ? A_DIM : 0 };
		}
	}
	t->halfblock = utf8 && ncolors == 256 && pair + P_COUNT * P_COUNT < COLOR_PAIRS;
	if (t->halfblock) {
		t->hb_base = pair;
		for (i = 0; i < P_COUNT; i++)
			for (j = 0; j < P_COUNT; j++)
				init_pair(pair++, hb_color[i] < 0 ? bg : hb_color[i],
					  hb_color[j] < 0 ? bg : hb_color[j]);
	}
	t->upper_half = 0x2580;
	t->bar_full = utf8 ? 0x2588 : '|';
	t->bar_empty = utf8 ? 0x00b7 : ' ';
	t->bar_eighths = utf8 ? eighths : NULL;
	t->arrow_up = utf8 ? 0x25b2 : '^';
	t->arrow_down = utf8 ? 0x25bc : 'v';
	snprintf(t->name, sizeof(t->name), "%s, %s",
		 t->halfblock ? "half blocks" : utf8 ? "shading" : "ASCII",
		 ncolors == 256 ? "256 colours" : ncolors ? "8 colours" : "no colour");
}

struct ui_cell theme_cell(const struct ui_theme *t, uint8_t top, uint8_t bottom, int cursor)
{
	struct ui_cell c;

	if (t->halfblock) {
		if (cursor == 1)
			top = P_CURSOR;
		else if (cursor == 2)
			bottom = P_CURSOR;
		if (top == P_BLANK && bottom == P_BLANK)
			return (struct ui_cell){ ' ', 0, 0 };
		return (struct ui_cell){ t->upper_half, 0, t->hb_base + top * P_COUNT + bottom };
	}
	c = (struct ui_cell){ t->glyph[top], t->paint[top].attr, t->paint[top].pair };
	if (cursor)
		c.attr = (c.attr & ~(uint32_t)A_DIM) | A_REVERSE;
	return c;
}

struct ui_cell theme_swatch(const struct ui_theme *t, uint8_t paint)
{
	return theme_cell(t, paint, paint, 0);
}
