/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How things look on this terminal: colours and glyphs chosen once from its capabilities.
 *
 *   UTF-8 and 256 colours   half blocks: each character shows two heatmap cells (▀ with a
 *                           foreground and a background colour) on a green gradient
 *   UTF-8, 8 colours or none  one cell per character, shading ░▒▓█ (coloured if possible)
 *   no UTF-8 (TERM=vt100, LANG=C)  the same with ASCII: . : + % #
 *
 * Swapped, untracked and mixed cells always have their own colour and, without half
 * blocks, their own letter, so the map stays readable in monochrome.
 */
#ifndef MEVITOP_UI_THEME_H
#define MEVITOP_UI_THEME_H

#include <stdbool.h>
#include <stdint.h>
#include "ui/ui_canvas.h"

enum ui_style {
	ST_NORMAL,
	ST_TITLE,		/* top bar */
	ST_TITLE_WARN,		/* EXITED / PAUSED in the top bar */
	ST_VALUE,		/* numbers in the header */
	ST_WARN,		/* lost events, drift, errors */
	ST_DIM,
	ST_COLHEAD,		/* table column headers */
	ST_COLHEAD_SORT,	/* the sort column's header */
	ST_SELECT,		/* selected row */
	ST_EXITED,		/* a process that exited (tombstone) */
	ST_LABEL,		/* a mapping's label line */
	ST_LABEL_CUR,		/* the label of the mapping under the cursor */
	ST_GUTTER,		/* row addresses left of the cells */
	ST_KEY,			/* footer: key */
	ST_KEYTEXT,		/* footer: what it does */
	ST_STATUS,		/* messages */
	ST_POPUP,
	ST_POPUP_SEL,
	ST_BAR,			/* residency bar */
	ST_MEM_ANON,		/* memory summary: anonymous pages */
	ST_MEM_SHMEM,		/* shmem (tmpfs, /dev/shm, memfd, SysV) */
	ST_MEM_CACHE,		/* the page cache of files */
	ST_MEM_KERNEL,		/* the kernel's own */
	ST_MEM_OTHER,		/* the rest (hugetlb, drivers, ...) */
	ST_COUNT
};

/* What one heatmap cell shows. */
enum ui_paint {
	P_BLANK,		/* no cell (past a mapping's end) */
	P_NONRES,		/* mapped, nothing resident */
	P_RES1,			/* resident fraction (0, 1/3] */
	P_RES2,			/* (1/3, 2/3] */
	P_RES3,			/* (2/3, 1) */
	P_RES4,			/* all resident */
	P_SWAP,			/* swapped (some or all), nothing else */
	P_UNTR,			/* untracked (some or all), nothing else */
	P_MIXED,		/* pages in two or more of resident/swapped/untracked */
	P_COLD,			/* heat layer: resident, not faulted recently */
	P_HEAT1,		/* heat layer: faulted recently, increasing */
	P_HEAT2,
	P_HEAT3,
	P_HEAT4,
	P_CURSOR,		/* half blocks: the cursor cell */
	P_DIRTY,		/* file heatmap: a dirty page (some or all), none in writeback */
	P_WB,			/* file heatmap: under writeback */
	P_EVICT,		/* file heatmap's heat layer: evicted recently, more than added */
	P_COUNT
};

struct ui_theme {
	bool utf8;
	bool halfblock;			/* two cells per character */
	int colors;			/* 0, 8 or 256 (what is used, not what the terminal has) */
	struct ui_look style[ST_COUNT];
	uint32_t glyph[P_COUNT];	/* one cell per character */
	struct ui_look paint[P_COUNT];
	int hb_base;			/* half blocks: pair(top, bottom) = hb_base + top*P_COUNT + bottom */
	uint32_t upper_half;		/* ▀ */
	uint32_t bar_full, bar_empty;	/* residency bar */
	const uint32_t *bar_eighths;	/* partial bar glyphs 1/8..7/8, or NULL */
	uint32_t arrow_up, arrow_down;	/* sort direction */
	char name[48];			/* "half blocks, 256 colours", for the help screen */
};

/* After curses is initialised; utf8: the locale's codeset is UTF-8. */
void theme_init(struct ui_theme *t, bool utf8);
/* Cell rows per character: 2 with half blocks. */
static inline int theme_cells_per_char(const struct ui_theme *t)
{
	return t->halfblock ? 2 : 1;
}
/* The character for heatmap cell(s): top and bottom (bottom ignored without half blocks);
 * cursor: 0 none, 1 on top, 2 on bottom. */
struct ui_cell theme_cell(const struct ui_theme *t, uint8_t top, uint8_t bottom, int cursor);
/* A one-line legend entry's glyph for a paint (what the map shows for it). */
struct ui_cell theme_swatch(const struct ui_theme *t, uint8_t paint);

#endif
