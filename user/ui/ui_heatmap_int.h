/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The heatmap view's state, shared by its two files: ui_heatmap.c builds the frame under the
 * lock and handles the keys, ui_heatmap_draw.c draws the frame (data only here).
 */
#ifndef MEVITOP_UI_HEATMAP_INT_H
#define MEVITOP_UI_HEATMAP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "engine/engine.h"
#include "model/model.h"
#include "ui/blockname.h"
#include "ui/overview.h"
#include "ui/ui_maplayout.h"
#include "ui/ui_paint.h"

enum vline_type {
	VL_EMPTY,
	VL_GAP,
	VL_LABEL,
	VL_CELLS,
	VL_BLOCKS,			/* packed: several small mappings side by side */
};

struct hm_vline {
	enum vline_type type;
	size_t map;			/* index in the layout */
	uint64_t row;			/* VL_CELLS: its first cell row */
	int label;			/* VL_LABEL, compact first lines: index in labels, or -1 */
	int block, nblocks;		/* VL_BLOCKS: its blocks in blocks[] (map: the first) */
};

/* A packed block's name, copied under the lock. */
struct hm_block {
	char name[BLOCK_NAME_MAX + 1];
};

struct hm_label {
	uint64_t start, end;		/* pages */
	uint64_t gap_pages;
	uint64_t res, swp, untr;
	float heat;
	uint32_t perms;
	enum map_kind kind;
	char name[256];
};

struct hm_readout {
	bool valid;
	uint64_t start, end;		/* the cursor cell's pages */
	uint64_t map_start, map_end, map_res;
	uint32_t perms;
	uint64_t res, swp, untr;
	float heat;
	enum page_state state;		/* when the cell is one page */
	bool shared_known;		/* --sharing has read the process: cls */
	uint64_t cls[SHC_COUNT];	/* the cell's resident pages by map count */
	uint64_t count;			/* a one-page cell's map count (0: not kept) */
	struct share_who who;		/* live: a shared page's other watched mappers */
	bool collapsed;			/* its object is folded ('c') */
	bool file;			/* a file mapping: Enter opens the file's heatmap */
	uint64_t dev, ino;
	char name[256];
	char touch[320];		/* --stacks: who first touched the cell, or "" */
};

/* --stacks: the pane of the top stacks of the cursor's mapping ('w'). */
#define PANE_MAX 16

struct heatmap {
	pid_t pid;
	/* The process, as of the last frame. */
	bool found;			/* the engine knows it (or knew it: see gone) */
	bool gone;			/* dropped by the engine; the last frame stays */
	bool ready;
	bool exited;
	char comm[16];
	double fault_rate;
	uint64_t totals[PS_COUNT];
	size_t nmaps;
	/* Our own copy of the process: paused, or it exited. */
	struct proc *frozen;
	uint64_t frozen_ns;		/* heat is evaluated at this time */
	bool frozen_exit;		/* the copy is the exited process's last picture */
	/* View. */
	uint64_t zoom;
	bool zoom_auto;
	bool heat;			/* heat layer */
	bool share;			/* sharing layer ('s'; needs --sharing) */
	enum hm_style style;		/* label lines, compact or packed */
	bool style_auto;		/* no style key pressed yet: packed once labels overflow */
	enum hm_filter filter;
	enum hm_order order;		/* 'o' */
	/* 'c': objects folded onto one line, by their first page (oldest dropped when full). */
	uint64_t collapsed[64];
	size_t ncollapsed;
	bool cur_set;
	uint64_t cur_page;		/* a page of the cursor cell */
	int cur_row;			/* the cursor's row in the map area */
	bool center;			/* next frame: put the cursor mid-screen */
	/* A jump the next frame makes (it needs the model: names, resident counts). */
	enum { HJ_NONE, HJ_SEARCH, HJ_BIGGEST } jump;
	char jump_text[64];
	/* The frame. */
	bool have_frame;
	struct hm_layout lay;
	size_t cur_map;			/* the cursor's mapping (index), SIZE_MAX if none */
	uint64_t cur_cell, cur_line;
	int vis_h, gutter;
	struct hm_vline *vl;
	uint8_t *paint;			/* vis_h * per_line */
	uint64_t *scratch;		/* paint_row's counters: 3 * per_line */
	struct hm_label *labels;
	int nlabels;
	struct hm_block *blocks;	/* vis_h * (width / 2 + 1): the most a screen holds */
	uint8_t *row_tmp;		/* per_line: one block's paint */
	int nblocks;
	struct hm_readout ro;
	/* Packed: the overview line (ui/overview.h). */
	bool ov;
	int ov_w, ov_c0, ov_c1;
	uint8_t ov_paint[OVERVIEW_MAX_COLS];
	uint64_t *ov_res;		/* resident pages per mapping */
	size_t ov_cap;
	size_t buf_h, buf_w;		/* allocated sizes of vl/paint/labels */
	struct stacks *stacks;		/* set while the frame is built under the lock */
	bool pane;			/* 'w': top first-touch stacks of the mapping */
	int npane;
	char pane_lines[PANE_MAX][320];
};

#endif
