/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The heatmap's geometry and cells, computed from the model (no curses here).
 *
 * The address space is a list of mappings in address order (optionally only one kind).
 * Each takes one label line, then its cells: `width` characters per line, each showing
 * `cpc` consecutive cells (2 with half blocks: top, then bottom), so a mapping is a solid
 * bar as long as its size whatever the terminal.  A cell covers `zoom` pages, counted from
 * the mapping's start.  Unmapped gaps of 1 GiB or more get one line saying so; smaller ones
 * take no room at all.  Lines are numbered from 0 over the whole layout; only the visible
 * ones are ever painted, so a frame costs what the screen shows, not what the process maps.
 *
 * Packed (HL_PACKED): no label lines; a mapping whose cells fit on a line is a block
 * "name cells" that flows with its neighbours, several to a line, in address order.  The
 * segments of one object (ui/blockname.h) follow one label, and the object moves to a new
 * line rather than split when it fits on one.  Between blocks one separator column: a space
 * when they touch, a dotted bar when unmapped pages lie between.  A mapping too big for a
 * line starts its own rows, as in the compact layout.
 *
 * Any layout can order its objects by resident pages or heat instead of address
 * (maplayout_order), and fold an object onto one line of cells (collapsed: its cells cover
 * more pages, the smallest power-of-two multiple of the zoom that fits).
 */
#ifndef MEVITOP_UI_MAPLAYOUT_H
#define MEVITOP_UI_MAPLAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"
#include "lib/pageset.h"

enum hm_filter {
	HF_ALL,
	HF_ANON,
	HF_HEAP,
	HF_STACK,
	HF_FILE,
	HF_SHMEM,
	HF_COUNT,
};

#define HM_GAP_MIN_PAGES (1ULL << 18)	/* 1 GiB */

enum hm_style {
	HL_LABELS,			/* a label line above each mapping */
	HL_COMPACT,			/* names in the gutter */
	HL_PACKED,			/* small mappings side by side */
	HL_COUNT,
	HL_AUTO = HL_COUNT,		/* --layout auto: packed when labels overflow a screen */
	HL_INVALID,
};

/* --layout's word: a style, HL_AUTO, or HL_INVALID. */
int maplayout_parse(const char *word);

/* The order of the objects (a mapping and the ones continuing it, ui/blockname.h). */
enum hm_order {
	HO_ADDRESS,			/* address order, gap lines between (the default) */
	HO_RESIDENT,			/* most resident pages first, no gap lines */
	HO_HEAT,			/* most recent faults first, no gap lines */
	HO_COUNT,
};

struct hm_map {
	uint64_t start, end;		/* pages */
	uint64_t zoom;			/* pages per cell: the layout's, coarser when collapsed */
	bool collapsed;			/* its object is folded onto one line of cells */
	uint64_t res;			/* resident pages, once maplayout_count_resident ran */
	uint64_t gap_pages;		/* unmapped pages before it (0: no gap line) */
	uint64_t line;			/* its first line (the gap line, if any) */
	uint64_t ncells;
	uint64_t nrows;			/* lines of cells */
	uint64_t nlines;		/* gap + label + cell lines */
	enum map_kind kind;
	const struct mapping *m;	/* only while the model is held (lock or private copy) */
	/* Packed layouts. */
	bool packed;			/* a block on a shared line (else rows of its own) */
	bool cont;			/* continues the previous mapping's object */
	bool apart;			/* unmapped pages between it and the previous mapping */
	uint8_t name_len;		/* its short name's length */
	uint8_t label_w;		/* columns of its label before the cells (0: none) */
	uint32_t col;			/* column of its first cell in the cell area */
};

struct hm_layout {
	struct hm_map *maps;
	size_t n, cap;
	uint64_t lines;			/* total */
	uint64_t zoom;			/* pages per cell */
	int width;			/* cells per cell row */
	int cpc;			/* cells per character */
	int per_line;			/* cells per line: width * cpc */
	int label_lines;		/* 1: a label line above each mapping; 0: compact */
	enum hm_style style;
	int addr_digits;		/* hex digits of the highest address */
	enum hm_order order;		/* how maps[] is ordered (maplayout_order) */
	struct hm_map *spare;		/* maplayout_order's second buffer (cap entries) */
	struct pageset_range *ranges;	/* maplayout_count_resident's query (cap entries) */
	uint64_t *counts;		/* and its answer */
	bool have_res;			/* maps[].res is filled in */
	/* Objects folded onto one line, by their first page (set by the caller). */
	const uint64_t *collapsed;
	size_t ncollapsed;
};

const char *maplayout_filter_name(enum hm_filter f);
const char *maplayout_order_name(enum hm_order o);

/* Collects p's mappings that pass the filter; -ENOMEM on failure (the old list stays). */
int maplayout_collect(struct hm_layout *l, const struct proc *p, enum hm_filter f);
/* Fills in every mapping's resident pages in one walk over the process's set (in address
 * order: before maplayout_order). */
void maplayout_count_resident(struct hm_layout *l, const struct proc *p);
/* Puts the collected mappings in an order: objects stay whole, biggest first by resident
 * pages or by heat at now_ns, ties in address order; -ENOMEM leaves address order. */
int maplayout_order(struct hm_layout *l, const struct proc *p, enum hm_order o, uint64_t now_ns);
/* The first mapping of the object mapping i belongs to. */
size_t maplayout_object(const struct hm_layout *l, size_t i);
/* Numbers the lines for a zoom (pages per cell), width (characters per line), cpc and a
 * style. */
void maplayout_place(struct hm_layout *l, uint64_t zoom, int width, int cpc, enum hm_style st);
/* The smallest power-of-two zoom that fits every mapping in `lines` lines; when even one
 * cell per mapping would not fit, the one that keeps the largest mapping to a quarter of
 * them. */
uint64_t maplayout_fit_zoom(struct hm_layout *l, int width, int cpc, enum hm_style st,
			    uint64_t lines);
/* Packed layouts: the first mapping whose cells are on line, if a packed block is; else
 * SIZE_MAX.  The blocks of a line are consecutive in the layout. */
size_t maplayout_line_blocks(const struct hm_layout *l, uint64_t line);
/* The mapping and cell under column col (characters, in the cell area) of a line: the
 * nearest block on a packed line; SIZE_MAX on a gap line or past the end. */
size_t maplayout_hit(const struct hm_layout *l, uint64_t line, uint64_t col, uint64_t *cell);
/* The column (characters, in the cell area) of a cell. */
uint64_t maplayout_cell_col(const struct hm_layout *l, const struct hm_map *m, uint64_t cell);
/* The mapping holding page, else the next one by address, else the last; SIZE_MAX when
 * empty. */
size_t maplayout_find_page(const struct hm_layout *l, uint64_t page);
/* The mapping whose lines include line (the last one past the end). */
size_t maplayout_find_line(const struct hm_layout *l, uint64_t line);

static inline uint64_t hm_label_line(const struct hm_map *m)
{
	return m->line + (m->gap_pages ? 1 : 0);
}

/* a / b rounded up: pages to cells, cells to lines (ui_maplayout.c and ui_paint.c). */
static inline uint64_t hm_div_up(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* The line of m's first cells (its label line too, in compact layouts). */
static inline uint64_t hm_cells_line(const struct hm_layout *l, const struct hm_map *m)
{
	return hm_label_line(m) + l->label_lines;
}

/* The cell of mapping m holding page (clamped to the mapping). */
uint64_t maplayout_cell(const struct hm_layout *l, const struct hm_map *m, uint64_t page);
/* The line of a cell; *half: 0 top, 1 bottom (half blocks). */
uint64_t maplayout_cell_line(const struct hm_layout *l, const struct hm_map *m, uint64_t cell,
			     int *half);

#endif
