// SPDX-License-Identifier: GPL-2.0
/*
 * The heatmap view: one process's address space as cells, live.
 *
 * Each frame is built in two steps.  Under the engine lock (ui.c takes it): the layout
 * (every mapping, a few numbers each), then only what the screen shows, copied into this
 * view's buffers (labels, cell paints, the cursor readout).  Without the lock: drawing
 * from those buffers (ui_heatmap_draw.c).
 * While paused, and after the process exits, the view works on its own copy of the
 * process (proc_clone), so scrolling and zooming still work on the frozen picture.
 *
 * The cursor is the anchor: it stays on its page and on its screen row while mappings come
 * and go above it or the zoom changes, so the picture does not jump.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <curses.h>
#include "lib/array.h"
#include "lib/log.h"
#include "stacks/stacks.h"
#include "ui/blockname.h"
#include "ui/overview.h"
#include "ui/ui_maplayout.h"
#include "ui/ui_paint.h"
#include "ui/ui_cells.h"
#include "ui/ui_draw.h"
#include "ui/ui_heatmap.h"
#include "ui/ui_heatmap_int.h"
#include "ui/ui_model.h"
#include "ui/ui_proclist.h"
#include "ui/ui_replay.h"

struct heatmap *heatmap_new(void)
{
	struct heatmap *m = calloc(1, sizeof(*m));

	if (m) {
		m->zoom = 1;
		m->zoom_auto = true;
		m->style_auto = true;
		m->cur_map = SIZE_MAX;
	}
	return m;
}

static void unfreeze(struct heatmap *m)
{
	proc_free(m->frozen);
	m->frozen = NULL;
	m->frozen_exit = false;
}

void heatmap_free(struct heatmap *m)
{
	if (!m)
		return;
	unfreeze(m);
	free(m->lay.maps);
	free(m->lay.spare);
	free(m->lay.ranges);
	free(m->lay.counts);
	free(m->vl);
	free(m->paint);
	free(m->labels);
	free(m->scratch);
	free(m->blocks);
	free(m->row_tmp);
	free(m->ov_res);
	free(m);
}

void heatmap_set_layout(struct heatmap *m, int layout)
{
	m->style_auto = layout == HL_AUTO;
	m->style = m->style_auto ? HL_LABELS : (enum hm_style)layout;
}

void heatmap_show(struct ui *ui, pid_t pid)
{
	struct heatmap *m = ui->map;

	ui->view = VIEW_MAP;
	if (pid == m->pid && (m->found || m->gone))
		return;
	unfreeze(m);
	m->pid = pid;
	m->found = m->gone = m->ready = m->exited = false;
	m->comm[0] = 0;
	m->zoom_auto = true;
	if (m->style_auto)
		m->style = HL_LABELS;
	m->cur_set = false;
	m->cur_row = 0;
	m->have_frame = false;
	m->cur_map = SIZE_MAX;
	m->lay.n = 0;
	m->lay.lines = 0;
}

void heatmap_pause(struct ui *ui, bool paused)
{
	struct heatmap *m = ui->map;

	/* Pausing freezes at the next update; resuming drops a copy made for the pause. */
	if (!paused && m->frozen && !m->frozen_exit)
		unfreeze(m);
}

/* Under the lock. */
static void freeze(struct heatmap *m, const struct proc *p, uint64_t now)
{
	struct proc *c = proc_clone(p, p->pid);

	if (!c)
		return;		/* no memory: stay live */
	heat_copy(&c->heat, &p->heat);	/* a frozen picture keeps its heat (or none) */
	c->exited = p->exited;
	c->fault_rate = p->exited ? 0 : p->fault_rate;
	c->faults = p->faults;
	c->ready = true;
	m->frozen = c;
	m->frozen_ns = p->exited && p->exited_ns ? p->exited_ns : now;
	m->frozen_exit = p->exited;
}

static int ensure_buffers(struct heatmap *m, int h, int w, int cpc)
{
	size_t need_w = (size_t)w * cpc;

	if ((size_t)h <= m->buf_h && need_w <= m->buf_w)
		return 0;
	free(m->vl);
	free(m->paint);
	free(m->labels);
	free(m->scratch);
	free(m->blocks);
	free(m->row_tmp);
	m->vl = calloc(h, sizeof(*m->vl));
	m->paint = calloc((size_t)h * need_w, 1);
	m->labels = calloc(h, sizeof(*m->labels));
	m->scratch = calloc(4 * need_w, sizeof(*m->scratch));
	m->blocks = calloc((size_t)h * (w / 2 + 1), sizeof(*m->blocks));
	m->row_tmp = calloc(need_w, 1);
	if (!m->vl || !m->paint || !m->labels || !m->scratch || !m->blocks || !m->row_tmp) {
		free(m->vl);
		free(m->paint);
		free(m->labels);
		free(m->scratch);
		free(m->blocks);
		free(m->row_tmp);
		m->vl = NULL;
		m->paint = NULL;
		m->labels = NULL;
		m->scratch = NULL;
		m->blocks = NULL;
		m->row_tmp = NULL;
		m->buf_h = m->buf_w = 0;
		return -1;
	}
	m->buf_h = h;
	m->buf_w = need_w;
	return 0;
}

static void map_name(const struct mapping *mp, char *buf, size_t len)
{
	const char *path = mp->path;

	if (path && *path) {
		/* Files by their base name (the readout line has room for the full path). */
		const char *slash = strrchr(path, '/');

		snprintf(buf, len, "%s", path[0] == '/' && slash && slash[1] ? slash + 1 : path);
	} else {
		snprintf(buf, len, "%s", map_kind_name(mp->kind));
	}
}

/* Copies what the process header shows. */
static void copy_info(struct heatmap *m, const struct proc *p)
{
	m->found = true;
	m->gone = false;
	m->ready = p->ready;
	m->exited = p->exited;
	memcpy(m->comm, p->comm, sizeof(m->comm));
	m->comm[sizeof(m->comm) - 1] = 0;
	m->fault_rate = p->exited ? 0 : p->fault_rate;
	if (p->ready) {
		model_totals(p, m->totals);
		m->nmaps = model_count_maps(p);
	}
}

/* Puts the cursor on a mapping and cell of the current layout. */
static void cursor_place(struct heatmap *m)
{
	struct hm_layout *l = &m->lay;
	const struct hm_map *h;

	m->cur_map = SIZE_MAX;
	if (!l->n)
		return;
	if (!m->cur_set) {
		m->cur_page = l->maps[0].start;
		m->cur_set = true;
	}
	m->cur_map = maplayout_find_page(l, m->cur_page);
	h = &l->maps[m->cur_map];
	/* A page that is no longer mapped (or filtered out) snaps to the nearest mapping. */
	if (m->cur_page < h->start)
		m->cur_page = h->start;
	else if (m->cur_page >= h->end)
		m->cur_page = h->end - 1;
	m->cur_cell = maplayout_cell(l, h, m->cur_page);
	m->cur_line = maplayout_cell_line(l, h, m->cur_cell, NULL);
}

/* Chooses the first visible line: the cursor keeps its row; the label of a mapping that
 * fits on the screen stays in view with it. */
static uint64_t scroll_top(struct heatmap *m)
{
	const struct hm_layout *l = &m->lay;
	uint64_t top, max_top = l->lines > (uint64_t)m->vis_h ? l->lines - m->vis_h : 0;

	if (m->cur_map == SIZE_MAX)
		return 0;
	if (m->center)
		m->cur_row = m->vis_h / 2;
	m->center = false;
	if (m->cur_row >= m->vis_h)
		m->cur_row = m->vis_h - 1;
	if (m->cur_row < 0)
		m->cur_row = 0;
	top = m->cur_line > (uint64_t)m->cur_row ? m->cur_line - m->cur_row : 0;
	if (top > max_top)
		top = max_top;
	if (m->cur_line - l->maps[m->cur_map].line < (uint64_t)m->vis_h &&
	    top > l->maps[m->cur_map].line)
		top = l->maps[m->cur_map].line;
	m->cur_row = (int)(m->cur_line - top);
	return top;
}

static void fill_label(struct hm_label *lb, const struct hm_map *h, const struct hm_paint *pc,
		       bool short_name)
{
	const struct proc *p = pc->p;

	lb->start = h->start;
	lb->end = h->end;
	lb->gap_pages = h->gap_pages;
	lb->res = model_count(p, PS_RESIDENT, h->start, h->end);
	lb->swp = pc->has_swapped ? model_count(p, PS_SWAPPED, h->start, h->end) : 0;
	lb->untr = pc->has_untracked ? model_count(p, PS_UNTRACKED, h->start, h->end) : 0;
	lb->heat = heat_range(&p->heat, h->start, h->end, pc->now_ns);
	lb->perms = h->m->perms;
	lb->kind = h->kind;
	if (short_name)
		blockname_of(h->m, lb->name, sizeof(lb->name));
	else
		map_name(h->m, lb->name, sizeof(lb->name));
}

static void fill_readout(struct heatmap *m, const struct hm_paint *pc)
{
	const struct hm_map *h = &m->lay.maps[m->cur_map];
	struct hm_readout *ro = &m->ro;
	const struct proc *p = pc->p;

	ro->valid = true;
	ro->map_start = h->start;
	ro->map_end = h->end;
	ro->perms = h->m->perms;
	ro->map_res = model_count(p, PS_RESIDENT, h->start, h->end);
	ro->start = h->start + m->cur_cell * h->zoom;
	ro->end = ro->start + h->zoom < h->end ? ro->start + h->zoom : h->end;
	ro->res = model_count(p, PS_RESIDENT, ro->start, ro->end);
	ro->swp = model_count(p, PS_SWAPPED, ro->start, ro->end);
	ro->untr = model_count(p, PS_UNTRACKED, ro->start, ro->end);
	ro->heat = heat_range(&p->heat, ro->start, ro->end, pc->now_ns);
	ro->state = model_page_state(p, ro->start);
	ro->shared_known = p->share != NULL;
	if (p->share) {
		uint64_t shared = 0;
		int k;

		for (k = SHC_TWO; k < SHC_COUNT; k++)
			shared += ro->cls[k] = pageset_count_range(p->share->cls[k], ro->start,
								   ro->end);
		ro->cls[SHC_PRIVATE] = ro->res - shared;
		ro->count = share_page_count(p->share, ro->start);
	}
	ro->collapsed = h->collapsed;
	ro->file = h->m->ino && (h->kind == MK_FILE || h->kind == MK_SHMEM);
	ro->dev = makedev(h->m->dev_major, h->m->dev_minor);
	ro->ino = h->m->ino;
	if (h->m->path && *h->m->path)
		snprintf(ro->name, sizeof(ro->name), "%s", h->m->path);
	else
		snprintf(ro->name, sizeof(ro->name), "%s", map_kind_name(h->kind));
}

/* --stacks: the cursor cell's first toucher, and the pane's lines (under the lock). */
static void fill_stacks(struct heatmap *m, const struct hm_paint *pc, const char *sep)
{
	const struct hm_map *h = &m->lay.maps[m->cur_map];
	const struct stack_touch *t = stacks_touch_at(m->stacks, pc->p->pid, m->ro.start);
	struct stack_share *v;
	char frames[256];
	size_t n, i;

	m->ro.touch[0] = 0;
	if (t)
		snprintf(m->ro.touch, sizeof(m->ro.touch), "first touch: tid %u, %.1f s ago, %s",
			 t->tid, pc->now_ns > t->ts ? (pc->now_ns - t->ts) / 1e9 : 0.0,
			 stacks_format(stacks_get(m->stacks, t->stack), sep, frames,
				       sizeof(frames)));
	m->npane = 0;
	if (!m->pane || stacks_shares(m->stacks, pc->p, h->start, h->end, &v, &n))
		return;
	for (i = 0; i < n && m->npane < PANE_MAX; i++)
		snprintf(m->pane_lines[m->npane++], sizeof(m->pane_lines[0]),
			 "%8" PRIu64 " pages  tid %-7u %s  %s", v[i].pages, v[i].tid,
			 v[i].stack->unwind == UNWIND_FP ? "fp" : "ip",
			 stacks_format(v[i].stack, sep, frames, sizeof(frames)));
	free(v);
}

/* A packed line: its blocks' names and cells.  False when line is not one. */
static bool build_blocks(struct heatmap *m, const struct hm_paint *pc, struct hm_vline *v,
			 int k, uint64_t line)
{
	const struct hm_layout *l = &m->lay;
	size_t i = maplayout_line_blocks(l, line);
	uint8_t *out = m->paint + (size_t)k * l->per_line;

	if (i == SIZE_MAX)
		return false;
	v->type = VL_BLOCKS;
	v->map = i;
	v->block = m->nblocks;
	v->nblocks = 0;
	memset(out, P_BLANK, l->per_line);
	for (; i < l->n && l->maps[i].packed && hm_cells_line(l, &l->maps[i]) == line; i++) {
		const struct hm_map *h = &l->maps[i];

		blockname_of(h->m, m->blocks[m->nblocks++].name, sizeof(m->blocks[0].name));
		v->nblocks++;
		paint_row(pc, l, h, 0, m->row_tmp);
		memcpy(out + (size_t)h->col * l->cpc, m->row_tmp, h->ncells);
	}
	return true;
}

static void goto_address(struct ui *ui, const char *text);

/* The mapping whose path (or kind, when it has none) contains text, from the one after the
 * cursor's, wrapping; SIZE_MAX if none. */
static size_t search_name(const struct heatmap *m, const char *text)
{
	const struct hm_layout *l = &m->lay;
	size_t from = m->cur_set ? maplayout_find_page(l, m->cur_page) : 0, k;

	for (k = 1; k <= l->n; k++) {
		const struct hm_map *h = &l->maps[(from + k) % l->n];
		const char *name = h->m->path && *h->m->path ? h->m->path : map_kind_name(h->kind);

		if (strstr(name, text))
			return (from + k) % l->n;
	}
	return SIZE_MAX;
}

/* The mapping with the most resident pages (the first of equals in the layout's order). */
static size_t biggest_resident(const struct hm_layout *l)
{
	uint64_t best = 0;
	size_t i, at = 0;

	for (i = 0; i < l->n; i++) {
		if (l->maps[i].res > best) {
			best = l->maps[i].res;
			at = i;
		}
	}
	return at;
}

/* Makes the jump asked for by a key (under the lock: it reads names and counts). */
static void resolve_jump(struct ui *ui, const struct proc *p)
{
	struct heatmap *m = ui->map;
	size_t i;

	if (m->jump == HJ_NONE || !m->lay.n)
		return;
	if (m->jump == HJ_BIGGEST) {
		i = biggest_resident(&m->lay);
	} else {
		i = search_name(m, m->jump_text);
		if (i == SIZE_MAX) {
			char *end;

			strtoull(m->jump_text, &end, 16);
			if (end != m->jump_text && !*end)
				goto_address(ui, m->jump_text);
			else
				log_warn("no mapping matches '%s'", m->jump_text);
			m->jump = HJ_NONE;
			return;
		}
	}
	m->jump = HJ_NONE;
	m->cur_page = m->lay.maps[i].start;
	m->cur_set = true;
	m->center = true;
}

/* The overview: every mapping's resident pages, and the mappings the screen shows. */
static void build_overview(struct ui *ui)
{
	struct heatmap *m = ui->map;
	const struct hm_layout *l = &m->lay;
	size_t i, first = SIZE_MAX, last = 0;
	int k;

	m->ov = false;
	if (l->n > m->ov_cap) {
		if (array_resize(m->ov_res, l->n))
			return;		/* no overview this frame */
		m->ov_cap = l->n;
	}
	for (i = 0; i < l->n; i++)
		m->ov_res[i] = l->maps[i].res;
	for (k = 0; k < m->vis_h; k++) {
		const struct hm_vline *v = &m->vl[k];

		if (v->type == VL_EMPTY)
			continue;
		if (first == SIZE_MAX)
			first = v->map;
		last = v->type == VL_BLOCKS ? v->map + v->nblocks - 1 : v->map;
	}
	/* Room for the brackets around the shown part. */
	m->ov_w = ui->cols - m->gutter - 2;
	if (m->ov_w > OVERVIEW_MAX_COLS)
		m->ov_w = OVERVIEW_MAX_COLS;
	if (m->ov_w < 1 || first == SIZE_MAX)
		return;
	overview_paint(l, m->ov_res, m->ov_w, m->ov_paint);
	overview_span(l, first, last, m->ov_w, &m->ov_c0, &m->ov_c1);
	m->ov = true;
}

/* Builds the frame from p (held: under the lock, or our private copy). */
static void build(struct ui *ui, const struct proc *p, uint64_t now)
{
	struct heatmap *m = ui->map;
	struct hm_layout *l = &m->lay;
	int cpc = theme_cells_per_char(&ui->theme), width, k;
	struct hm_paint pc = { .p = p, .now_ns = now, .heat = m->heat, .share = m->share,
			       .ref = ui->replay ? ui_replay_ref(ui->replay, p->pid) : NULL };
	size_t mi;
	uint64_t top;

	/* Packed layouts give a line to the overview. */
	m->vis_h = ui->rows - UI_HEADER_ROWS - 3 - (m->style == HL_PACKED);
	if (m->vis_h < 1 || maplayout_collect(l, p, m->filter))
		return;
	/* Resident pages per mapping, in one walk, for what needs them all. */
	if (m->style == HL_PACKED || m->jump == HJ_BIGGEST)
		maplayout_count_resident(l, p);
	maplayout_order(l, p, m->order, now);	/* on failure: address order */
	l->collapsed = m->collapsed;
	l->ncollapsed = m->ncollapsed;
	m->gutter = l->addr_digits + 1;
	width = (ui->cols - m->gutter - 1) / 16 * 16;
	if (width < 16)
		width = 16;
	if (ensure_buffers(m, m->vis_h, width, cpc))
		return;
	if (m->zoom_auto)
		m->zoom = maplayout_fit_zoom(l, width, cpc, m->style, m->vis_h);
	maplayout_place(l, m->zoom, width, cpc, m->style);
	/*
	 * Readable by default: a process whose label layout needs more than one screen even
	 * at the fitting zoom (hundreds of small mappings: a label line each) opens packed,
	 * and stays packed while it is shown, so a growing program does not flip back and
	 * forth.  Once a style key is pressed the person's choice stands.
	 */
	if (m->style_auto && m->zoom_auto && m->style == HL_LABELS && l->lines > (uint64_t)m->vis_h) {
		m->style = HL_PACKED;
		build(ui, p, now);	/* once: the style is packed now */
		return;
	}
	resolve_jump(ui, p);
	cursor_place(m);
	top = scroll_top(m);

	pc.scratch = m->scratch;
	pc.has_swapped = m->totals[PS_SWAPPED] > 0;
	pc.has_untracked = m->totals[PS_UNTRACKED] > 0;
	m->nlabels = 0;
	m->nblocks = 0;
	m->ro.valid = false;
	mi = maplayout_find_line(l, top);
	for (k = 0; k < m->vis_h; k++) {
		struct hm_vline *v = &m->vl[k];
		uint64_t line = top + k, off;
		const struct hm_map *h;

		while (mi != SIZE_MAX && mi + 1 < l->n && l->maps[mi + 1].line <= line)
			mi++;
		if (mi == SIZE_MAX || line >= l->lines) {
			v->type = VL_EMPTY;
			continue;
		}
		if (l->style == HL_PACKED && build_blocks(m, &pc, v, k, line))
			continue;
		h = &l->maps[mi];
		v->map = mi;
		off = line - h->line;
		if (h->gap_pages && off == 0) {
			v->type = VL_GAP;
			continue;
		}
		v->label = -1;
		if (line == hm_label_line(h)) {
			v->label = m->nlabels;
			fill_label(&m->labels[m->nlabels++], h, &pc, l->style == HL_PACKED);
			if (l->label_lines) {
				v->type = VL_LABEL;
				continue;
			}
		}
		v->type = VL_CELLS;
		v->row = line - hm_cells_line(l, h);
		paint_row(&pc, l, h, v->row, m->paint + (size_t)k * l->per_line);
	}
	if (m->cur_map != SIZE_MAX)
		fill_readout(m, &pc);
	if (m->cur_map != SIZE_MAX && m->stacks)
		fill_stacks(m, &pc, ui->theme.utf8 ? " \u2190 " : " <- ");
	else if (!m->stacks)
		m->ro.touch[0] = 0;
	if (l->style == HL_PACKED)
		build_overview(ui);
	else
		m->ov = false;
	m->have_frame = true;
}

void heatmap_update(struct ui *ui, bool locked)
{
	struct heatmap *m = ui->map;
	struct proc *p;
	uint64_t now;

	m->stacks = locked && ui->e ? engine_stacks(ui->e) : NULL;	/* replay: no engine */
	if (m->frozen) {
		build(ui, m->frozen, m->frozen_ns);
		return;
	}
	if (!locked)
		return;		/* the last frame stays until the model can be read */
	p = ui_model_find(ui, m->pid);
	if (!p) {
		/* Never seen, or dropped before we saw it exit: keep the last frame. */
		if (m->found)
			m->gone = true;
		return;
	}
	copy_info(m, p);
	if (!p->ready)
		return;
	/* Replay: heat as it was at the frame. */
	now = ui->replay ? ui_replay_frame(ui->replay)->mono_ns : ui->now_ns;
	if (p->exited || ui->paused)
		freeze(m, p, now);
	build(ui, m->frozen ? m->frozen : p, m->frozen ? m->frozen_ns : now);
	/* Live, one shared page under the cursor: who else maps it (the engine reads now). */
	m->ro.who.known = false;
	if (!m->frozen && ui->e && m->share && m->ro.valid && m->ro.shared_known &&
	    m->ro.end - m->ro.start == 1 && m->ro.res && m->ro.count != 1)
		engine_share_who(ui->e, p->pid, m->ro.start, &m->ro.who);
}

/* --- keys --- */

/* Moves the cursor to a cell of mapping i; the screen row follows by the same number of
 * lines (scrolling when it leaves the screen). */
static void move_to(struct heatmap *m, size_t i, uint64_t cell)
{
	const struct hm_layout *l = &m->lay;
	const struct hm_map *h = &l->maps[i];
	int64_t d;

	if (cell >= h->ncells)
		cell = h->ncells ? h->ncells - 1 : 0;
	d = (int64_t)maplayout_cell_line(l, h, cell, NULL) - (int64_t)m->cur_line;
	m->cur_page = h->start + cell * h->zoom;
	if (d > m->vis_h || d < -m->vis_h)
		m->cur_row += d > 0 ? m->vis_h : -m->vis_h;
	else
		m->cur_row += (int)d;
	m->cur_line = maplayout_cell_line(l, h, cell, NULL);
	m->cur_map = i;
	m->cur_cell = cell;
}

/* Packed layouts: d lines down (up if negative), at the cursor's column, the nearest
 * block there (gap lines are stepped over). */
static void move_lines(struct heatmap *m, int64_t d)
{
	const struct hm_layout *l = &m->lay;
	uint64_t col = maplayout_cell_col(l, &l->maps[m->cur_map], m->cur_cell), cell = 0;
	int64_t line = (int64_t)m->cur_line + d, last = (int64_t)l->lines - 1;
	size_t i;

	if (line < 0)
		line = 0;
	if (line > last)
		line = last;
	while ((i = maplayout_hit(l, (uint64_t)line, col, &cell)) == SIZE_MAX) {
		line += d > 0 ? 1 : -1;
		if (line < 0 || line > last)
			return;
	}
	move_to(m, i, cell);
}

/* The cell at a line and column (a label or gap line means the mapping's first row). */
static void move_to_line(struct heatmap *m, uint64_t line, uint64_t col)
{
	const struct hm_layout *l = &m->lay;
	size_t i;
	const struct hm_map *h;
	uint64_t first, row;

	if (l->style == HL_PACKED) {
		move_lines(m, (int64_t)line - (int64_t)m->cur_line);
		return;
	}
	if (line >= l->lines)
		line = l->lines - 1;
	i = maplayout_find_line(l, line);
	h = &l->maps[i];
	first = hm_cells_line(l, h);
	row = line < first ? 0 : line - first;
	if (row >= h->nrows)
		row = h->nrows - 1;
	move_to(m, i, row * l->per_line + col);
}

static void zoom_by(struct heatmap *m, int dir)
{
	/* From the auto zoom the frame chose; then from the last key's, which several keys
	 * read in one frame must not undo. */
	uint64_t z = m->zoom_auto && m->lay.zoom ? m->lay.zoom : m->zoom;

	m->zoom_auto = false;
	m->zoom = cells_zoom_step(z, dir);
}

static void goto_address(struct ui *ui, const char *text)
{
	struct heatmap *m = ui->map;
	char *end;
	unsigned long long a;

	errno = 0;
	a = strtoull(text, &end, 16);
	if (errno || end == text || *end) {
		log_warn("not an address: '%s' (hex, like 7f12a0000000)", text);
		return;
	}
	m->cur_page = a >> PAGE_SHIFT_4K;
	m->cur_set = true;
	m->center = true;
	if (m->filter != HF_ALL)
		m->filter = HF_ALL;
	/* The cell must start at the page asked for, whatever the zoom. */
	if (m->lay.n) {
		size_t i = maplayout_find_page(&m->lay, m->cur_page);

		if (i != SIZE_MAX && (m->cur_page < m->lay.maps[i].start ||
				      m->cur_page >= m->lay.maps[i].end))
			log_warn("0x%llx is not mapped: showing the nearest mapping", a);
	}
}

/* The keys (ui/keys.h). */

static bool hm_back(struct ui *ui, int key)
{
	(void)key;
	ui->view = VIEW_LIST;
	return true;
}

/* Enter on a file mapping: that file's heatmap (ui.c opens it). */
static bool hm_file(struct ui *ui, int key)
{
	const struct hm_readout *ro = &ui->map->ro;

	(void)key;
	if (!ro->valid || !ro->file)
		return false;
	ui->open_file = (struct ui_open_file){ true, ro->dev, ro->ino, VIEW_MAP };
	return true;
}

static bool hm_next_pid(struct ui *ui, int key)
{
	pid_t next = proclist_next(ui, ui->map->pid, key == '\t' ? 1 : -1);

	if (next)
		heatmap_show(ui, next);
	return true;
}

static bool hm_zoom(struct ui *ui, int key)
{
	if (key == '=' || key == '0')
		ui->map->zoom_auto = true;
	else
		zoom_by(ui->map, key == '+' ? 1 : -1);
	return true;
}

static bool hm_heat(struct ui *ui, int key)
{
	(void)key;
	ui->map->heat = !ui->map->heat;
	ui->map->share = false;
	return true;
}

static bool hm_share(struct ui *ui, int key)
{
	(void)key;
	ui->map->share = !ui->map->share;
	ui->map->heat = false;
	return true;
}

static bool hm_kinds(struct ui *ui, int key)
{
	struct heatmap *m = ui->map;

	m->filter = (m->filter + (key == 'f' ? 1 : HF_COUNT - 1)) % HF_COUNT;
	return true;
}

static bool hm_labels(struct ui *ui, int key)
{
	struct heatmap *m = ui->map;

	(void)key;
	m->style = m->style == HL_LABELS ? HL_COMPACT : HL_LABELS;
	m->style_auto = false;
	return true;
}

static bool hm_pack(struct ui *ui, int key)
{
	struct heatmap *m = ui->map;

	(void)key;
	m->style = m->style == HL_PACKED ? HL_LABELS : HL_PACKED;
	m->style_auto = false;
	return true;
}

static bool hm_pane(struct ui *ui, int key)
{
	(void)key;
	ui->map->pane = !ui->map->pane;
	return true;
}

static bool hm_order_next(struct ui *ui, int key)
{
	(void)key;
	ui->map->order = (ui->map->order + 1) % HO_COUNT;
	return true;
}

/* Folds the cursor's object onto one line, or unfolds it. */
static bool hm_collapse(struct ui *ui, int key)
{
	struct heatmap *m = ui->map;
	uint64_t start;
	size_t i;

	(void)key;
	if (!m->have_frame || m->cur_map >= m->lay.n)
		return false;
	start = m->lay.maps[maplayout_object(&m->lay, m->cur_map)].start;
	for (i = 0; i < m->ncollapsed; i++) {
		if (m->collapsed[i] == start) {
			m->collapsed[i] = m->collapsed[--m->ncollapsed];
			return true;
		}
	}
	if (m->ncollapsed == sizeof(m->collapsed) / sizeof(m->collapsed[0]))
		memmove(m->collapsed, m->collapsed + 1, --m->ncollapsed * sizeof(m->collapsed[0]));
	m->collapsed[m->ncollapsed++] = start;
	/* The cursor stays on the object's first page: its cells just changed size. */
	m->cur_page = start;
	return true;
}

static bool hm_biggest(struct ui *ui, int key)
{
	(void)key;
	ui->map->jump = HJ_BIGGEST;
	return true;
}

static bool hm_prompt(struct ui *ui, int key)
{
	ui->prompt.kind = key == '/' ? PROMPT_SEARCH : PROMPT_GOTO;
	ui->prompt.len = 0;
	ui->prompt.text[0] = 0;
	return true;
}

/* Cursor movement: every key needs a frame with a cursor mapping. */
static bool hm_move(struct ui *ui, int key)
{
	struct heatmap *m = ui->map;
	const struct hm_layout *l = &m->lay;
	const struct hm_map *h;
	uint64_t col;

	if (!m->have_frame || m->cur_map == SIZE_MAX || m->cur_map >= l->n)
		return false;
	h = &l->maps[m->cur_map];
	col = m->cur_cell % l->per_line;
	if (l->style == HL_PACKED && (key == KEY_UP || key == KEY_DOWN)) {
		move_lines(m, key == KEY_UP ? -1 : 1);
		return true;
	}
	switch (key) {
	case KEY_LEFT:
		if (m->cur_cell)
			move_to(m, m->cur_map, m->cur_cell - 1);
		else if (m->cur_map)
			move_to(m, m->cur_map - 1, UINT64_MAX);
		return true;
	case KEY_RIGHT:
		if (m->cur_cell + 1 < h->ncells)
			move_to(m, m->cur_map, m->cur_cell + 1);
		else if (m->cur_map + 1 < l->n)
			move_to(m, m->cur_map + 1, 0);
		return true;
	case KEY_UP:
		if (m->cur_cell >= (uint64_t)l->per_line)
			move_to(m, m->cur_map, m->cur_cell - l->per_line);
		else if (m->cur_map)
			move_to(m, m->cur_map - 1, (l->maps[m->cur_map - 1].nrows - 1) *
				l->per_line + col);
		return true;
	case KEY_DOWN:
		if (m->cur_cell / l->per_line + 1 < h->nrows)
			move_to(m, m->cur_map, m->cur_cell + l->per_line);
		else if (m->cur_map + 1 < l->n)
			move_to(m, m->cur_map + 1, col);
		return true;
	case KEY_NPAGE:
		move_to_line(m, m->cur_line + m->vis_h, col);
		return true;
	case KEY_PPAGE:
		move_to_line(m, m->cur_line > (uint64_t)m->vis_h ? m->cur_line - m->vis_h : 0, col);
		return true;
	case KEY_HOME:
		move_to(m, 0, 0);
		return true;
	case KEY_END:
		move_to(m, l->n - 1, UINT64_MAX);
		return true;
	case ']':
	case 'n':
		if (m->cur_map + 1 < l->n)
			move_to(m, m->cur_map + 1, 0);
		return true;
	case '[':
	case 'N':
		move_to(m, m->cur_cell || !m->cur_map ? m->cur_map : m->cur_map - 1, 0);
		return true;
	case KEY_MOUSE: {
		MEVENT ev;

		if (getmouse(&ev) != OK)
			return false;
		if (ev.bstate & BUTTON4_PRESSED)
			move_to_line(m, m->cur_line > 3 ? m->cur_line - 3 : 0, col);
#ifdef BUTTON5_PRESSED
		else if (ev.bstate & BUTTON5_PRESSED)
			move_to_line(m, m->cur_line + 3, col);
#endif
		return true;
	}
	}
	return false;
}

static const struct ui_key heatmap_keys[] = {
	{ { KEY_UP, KEY_DOWN, KEY_LEFT, KEY_RIGHT }, "arrows", "move by one cell", NULL, NULL,
	  hm_move },
	{ { KEY_PPAGE, KEY_NPAGE }, "PgUp PgDn", "a screen up / down", NULL, NULL, hm_move },
	{ { KEY_HOME, KEY_END }, "Home End", "first / last cell", NULL, NULL, hm_move },
	{ { '[', ']', 'n', 'N' }, "[ ] n N", "previous / next mapping", "[]", "Mapping", hm_move },
	{ { '+', '-', '_' }, "+ -", "zoom in / out", "+-", "Zoom", hm_zoom },
	{ { '=', '0' }, "= 0", "zoom to fit (auto)", NULL, NULL, hm_zoom },
	{ { 't' }, "t", "heat layer (faults)", "t", "Heat", hm_heat },
	{ { 's' }, "s", "sharing layer (--sharing)", NULL, NULL, hm_share },
	{ { 'f', 'F' }, "f F", "cycle the kinds shown", "f", "Kinds", hm_kinds },
	{ { 'l' }, "l", "label lines / compact", "l", "Labels", hm_labels },
	{ { 'p' }, "p", "packed: side by side", "p", "Pack", hm_pack },
	{ { '/' }, "/", "search name/address", "/", "Search", hm_prompt },
	{ { 'B' }, "B", "most resident mapping", NULL, NULL, hm_biggest },
	{ { 'o' }, "o", "order: addr/res/heat", "o", "Order", hm_order_next },
	{ { 'c' }, "c", "fold / unfold object", NULL, NULL, hm_collapse },
	{ { 'g' }, "g", "go to an address", "g", "Go to", hm_prompt },
	{ { 'w' }, "w", "who touched (--stacks)", "w", "Who", hm_pane },
	{ { '\n', '\r', KEY_ENTER }, "Enter", "file mapping: its file", NULL, NULL, hm_file },
	{ { '\t', KEY_BTAB }, "Tab Shift-Tab", "next / previous process", "Tab", "Next pid",
	  hm_next_pid },
	{ { 27, KEY_BACKSPACE, 127, 8 }, "Esc Backspace", "back to the list", "Esc", "List",
	  hm_back },
	{ { KEY_MOUSE }, "wheel", "scroll", NULL, NULL, hm_move },
};

const struct ui_keymap heatmap_keymap = UI_KEYMAP("Heatmap", heatmap_keys);

bool heatmap_key(struct ui *ui, int key)
{
	struct heatmap *m = ui->map;

	if (ui->prompt.kind == PROMPT_GOTO || ui->prompt.kind == PROMPT_SEARCH) {
		int r = draw_prompt_key(&ui->prompt, key);

		if (r > 0 && ui->prompt.kind == PROMPT_GOTO) {
			goto_address(ui, ui->prompt.text);
		} else if (r > 0 && ui->prompt.len) {
			m->jump = HJ_SEARCH;
			snprintf(m->jump_text, sizeof(m->jump_text), "%s", ui->prompt.text);
		}
		if (r)
			ui->prompt.kind = PROMPT_NONE;
		return true;
	}
	return keys_dispatch(&heatmap_keymap, ui, key);
}
