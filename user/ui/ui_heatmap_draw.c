// SPDX-License-Identifier: GPL-2.0
/*
 * The heatmap view's drawing (ui_heatmap.h): header, label lines, cells, packed blocks, the
 * overview line, the cursor line and the --stacks pane, all from the frame ui_heatmap.c built
 * (ui_heatmap_int.h), without the engine lock.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <curses.h>
#include "stacks/stacks.h"
#include "ui/ui_cells.h"
#include "ui/ui_draw.h"
#include "ui/ui_heatmap.h"
#include "ui/ui_heatmap_int.h"
#include "ui/ui_model.h"
#include "ui/ui_paint.h"
#include "ui/ui_replay.h"

/* The sharing layer's legend: each class's cell, then its name. */
static int draw_share_legend(struct ui *ui, int row, int col)
{
	static const struct {
		uint8_t paint;
		const char *name;
	} legend[] = {
		{ P_RES4, "private" }, { P_HEAT1, "by 2" }, { P_HEAT2, "3-8" }, { P_HEAT4, "9+" },
	};
	size_t i;

	for (i = 0; i < sizeof(legend) / sizeof(legend[0]) && col + 12 < ui->cols; i++) {
		struct ui_cell c = theme_cell(&ui->theme, legend[i].paint, legend[i].paint, 0);
		struct ui_look look = { .pair = (int16_t)c.pair, .attr = c.attr };

		canvas_put(&ui->canvas, row, col, c.ch, look);
		canvas_text(&ui->canvas, row, col + 1, ui->cols - col - 1,
			    ui->theme.style[ST_VALUE], legend[i].name);
		col += 2 + canvas_text_width(legend[i].name) + 1;
	}
	return col + 1;
}

static void draw_header(struct ui *ui)
{
	struct heatmap *m = ui->map;
	char what[64], a[32], b[400], zoom[64];
	const char *warn = NULL;
	int col = 0, row = 1;
	uint64_t mapped = m->totals[PS_NOT_RESIDENT] + m->totals[PS_RESIDENT] +
			  m->totals[PS_SWAPPED] + m->totals[PS_UNTRACKED];

	snprintf(what, sizeof(what), "pid %d %s", m->pid, m->comm);
	if (!m->found && !m->gone)
		warn = "NOT WATCHED";
	else if (m->gone)
		warn = "GONE";
	else if (m->exited)
		warn = "EXITED";
	else if (ui->paused)
		warn = "PAUSED";
	else if (ui_model_stale(ui))
		warn = ui_model_stale(ui);
	else if (!m->ready)
		warn = "SCANNING";
	draw_title(ui, what, warn);

	draw_fmt_pages(a, sizeof(a), mapped);
	col = draw_field(ui, row, col, "mapped", a, ST_VALUE);
	draw_fmt_pages(a, sizeof(a), m->totals[PS_RESIDENT]);
	snprintf(b, sizeof(b), "%s %.0f%%", a,
		 mapped ? 100.0 * m->totals[PS_RESIDENT] / mapped : 0.0);
	col = draw_field(ui, row, col, "resident", b, ST_VALUE);
	draw_fmt_pages(a, sizeof(a), m->totals[PS_SWAPPED]);
	col = draw_field(ui, row, col, "swapped", a, ST_VALUE);
	draw_fmt_pages(a, sizeof(a), m->totals[PS_UNTRACKED]);
	col = draw_field(ui, row, col, "untracked", a, ST_VALUE);
	snprintf(a, sizeof(a), "%zu", m->nmaps);
	col = draw_field(ui, row, col, "maps", a, ST_VALUE);
	draw_fmt_rate(a, sizeof(a), m->fault_rate);
	draw_field(ui, row, col, "faults/s", a, ST_VALUE);

	row = 2;
	col = draw_engine_stats(ui, row, 0);
	cells_zoom_text(zoom, sizeof(zoom), m->lay.zoom, m->zoom_auto, ui->cols >= 100);
	col = draw_field(ui, row, col, "zoom", zoom, ST_VALUE);
	if (ui->replay && ui_replay_diff_since(ui->replay) >= 0) {
		char since[48];

		snprintf(since, sizeof(since), "diff since %.1fs",
			 ui_replay_diff_since(ui->replay));
		col = draw_field(ui, row, col, "layer", since, ST_VALUE);
	} else if (m->share) {
		col = draw_field(ui, row, col, "layer", m->ro.shared_known || !m->ro.valid ?
				 "sharing" : "sharing (needs --sharing)", ST_VALUE);
		col = draw_share_legend(ui, row, col);
	} else {
		col = draw_field(ui, row, col, "layer", m->heat ? "heat" : "residency", ST_VALUE);
	}
	col = draw_field(ui, row, col, "kinds", maplayout_filter_name(m->filter), ST_VALUE);
	draw_field(ui, row, col, "order", maplayout_order_name(m->lay.order), ST_VALUE);
}

static void draw_label(struct ui *ui, int row, const struct hm_label *lb, bool current)
{
	struct heatmap *m = ui->map;
	struct ui_look look = ui->theme.style[current ? ST_LABEL_CUR : ST_LABEL];
	char left[512], right[160], res[16], map[16], perms[5], tmp[32];
	int d = m->lay.addr_digits, rw;
	size_t n;

	mapping_perms_str(lb->perms, perms);
	snprintf(left, sizeof(left), "%0*" PRIx64 "-%0*" PRIx64 " %s %s", d,
		 lb->start << PAGE_SHIFT_4K, d, lb->end << PAGE_SHIFT_4K, perms, lb->name);
	draw_fmt_pages(res, sizeof(res), lb->res);
	draw_fmt_pages(map, sizeof(map), lb->end - lb->start);
	snprintf(tmp, sizeof(tmp), "%s/%s", res, map);
	n = snprintf(right, sizeof(right), "res %13s %3.0f%%", tmp,
		     100.0 * lb->res / (lb->end - lb->start));
	if (lb->swp && n < sizeof(right)) {
		draw_fmt_pages(tmp, sizeof(tmp), lb->swp);
		n += snprintf(right + n, sizeof(right) - n, "  swap %s", tmp);
	}
	if (lb->untr && n < sizeof(right)) {
		draw_fmt_pages(tmp, sizeof(tmp), lb->untr);
		n += snprintf(right + n, sizeof(right) - n, "  untracked %s", tmp);
	}
	if (n < sizeof(right)) {
		draw_fmt_rate(tmp, sizeof(tmp), paint_heat_rate(lb->heat));
		snprintf(right + n, sizeof(right) - n, "  %6s f/s", tmp);
	}
	rw = canvas_text_width(right);
	canvas_text(&ui->canvas, row, 0, ui->cols - rw - 2, look, left);
	canvas_text(&ui->canvas, row, ui->cols - rw, rw, look, right);
}

/* A line's address in the gutter. */
static void draw_gutter_addr(struct ui *ui, int row, uint64_t addr)
{
	struct heatmap *m = ui->map;
	int d = m->lay.addr_digits;

	if (d < 16 && addr >> (4 * d))
		/* Too long for the gutter ([vsyscall]): its low digits after an ellipsis. */
		canvas_printf(&ui->canvas, row, 0, m->gutter, ui->theme.style[ST_GUTTER],
			      "%s%0*" PRIx64, ui->theme.utf8 ? "\u2026" : "~", d - 1,
			      addr & (((uint64_t)1 << (4 * (d - 1))) - 1));
	else
		canvas_printf(&ui->canvas, row, 0, m->gutter, ui->theme.style[ST_GUTTER],
			      "%0*" PRIx64, d, addr);
}

static void draw_cells(struct ui *ui, int row, int k, const struct hm_vline *v)
{
	struct heatmap *m = ui->map;
	const struct hm_layout *l = &m->lay;
	const struct hm_map *h = &l->maps[v->map];
	int cpc = l->cpc, cursor_col = -1, cursor_half = 0;
	uint64_t addr = (h->start + v->row * l->per_line * h->zoom) << PAGE_SHIFT_4K;
	const uint8_t *cells = m->paint + (size_t)k * l->per_line;

	if (v->label >= 0 && m->labels[v->label].kind != MK_ANON) {
		/* Compact: the mapping's name where its label line would be (anonymous ones
		 * keep their address, in the label's style). */
		canvas_text(&ui->canvas, row, 0, m->gutter - 1,
			    ui->theme.style[v->map == m->cur_map ? ST_LABEL_CUR : ST_LABEL],
			    m->labels[v->label].name);
	} else if (v->label >= 0) {
		canvas_printf(&ui->canvas, row, 0, m->gutter - 1,
			      ui->theme.style[v->map == m->cur_map ? ST_LABEL_CUR : ST_LABEL],
			      "%0*" PRIx64, l->addr_digits, addr);
	} else {
		draw_gutter_addr(ui, row, addr);
	}
	if (v->map == m->cur_map && m->cur_line == hm_cells_line(l, h) + v->row) {
		cursor_col = (int)(m->cur_cell % l->per_line / cpc);
		cursor_half = (int)(m->cur_cell % cpc) + 1;
	}
	cells_draw(ui, row, m->gutter, cells, l->width, cpc, cursor_col, cursor_half);
}

/* "overview [cells of the shown part] other cells". */
static void draw_overview(struct ui *ui, int row)
{
	struct heatmap *m = ui->map;
	int c, x = m->gutter;

	canvas_text(&ui->canvas, row, 0, m->gutter - 1, ui->theme.style[ST_LABEL], "overview");
	for (c = 0; c < m->ov_w && x < ui->cols; c++) {
		if (c == m->ov_c0)
			canvas_text(&ui->canvas, row, x++, 1, ui->theme.style[ST_KEY], "[");
		*canvas_at(&ui->canvas, row, x++) =
			theme_cell(&ui->theme, m->ov_paint[c], m->ov_paint[c], 0);
		if (c + 1 == m->ov_c1 && x < ui->cols)
			canvas_text(&ui->canvas, row, x++, 1, ui->theme.style[ST_KEY], "]");
	}
}

/* A packed line: per block a separator (a space when it touches the previous mapping, a
 * dotted bar across unmapped pages), its short name unless it continues an object, its
 * cells. */
static void draw_blocks(struct ui *ui, int row, int k, const struct hm_vline *v)
{
	struct heatmap *m = ui->map;
	const struct hm_layout *l = &m->lay;
	const uint8_t *cells = m->paint + (size_t)k * l->per_line;
	int cpc = l->cpc, b;

	draw_gutter_addr(ui, row, l->maps[v->map].start << PAGE_SHIFT_4K);
	for (b = 0; b < v->nblocks; b++) {
		size_t i = v->map + b;
		const struct hm_map *h = &l->maps[i];
		int x = m->gutter + (int)h->col, chars = (int)((h->ncells + cpc - 1) / cpc);
		bool cur = i == m->cur_map;

		if (b && h->apart)
			canvas_text(&ui->canvas, row, x - h->label_w - 1, 1, ui->theme.style[ST_DIM],
				    ui->theme.utf8 ? "\u2506" : "|");
		if (h->label_w)
			canvas_text(&ui->canvas, row, x - h->label_w, h->label_w - 1,
				    ui->theme.style[cur ? ST_LABEL_CUR : ST_LABEL],
				    m->blocks[v->block + b].name);
		cells_draw(ui, row, x, cells + (size_t)h->col * cpc, chars, cpc,
			   cur ? (int)(m->cur_cell / cpc) : -1, (int)(m->cur_cell % cpc) + 1);
	}
}

/* How much of the cursor line to leave out so it fits the width, least useful first. */
enum ro_cut {
	RO_FULL,
	RO_NO_COLD,			/* heat when it is 0 f/s */
	RO_NO_NONRES,			/* the cell's not-resident count */
	RO_BASENAME,			/* a path by its base name: …/libc.so.6 */
	RO_NO_HEAT,
	RO_NO_PAGE,			/* "page N of": the name alone */
	RO_NO_RANGE,			/* the mapping's range (its perms and resident stay) */
	RO_CUTS,
};

/* Which other watched processes map the cursor's page: "also pid 1234 (comm)", "also
 * pids 1234 1240 +3", "no other watched process"; "+?" when the engine's reads ran out. */
static void readout_who(const struct share_who *w, char *buf, size_t size, size_t *len)
{
	uint32_t i;

#define WHO(...) (*len += *len < size ? (size_t)snprintf(buf + *len, size - *len, __VA_ARGS__) : 0)
	if (!w->n)
		WHO(" (%s)", w->cut ? "no other watched process found" : "no other watched process");
	else if (w->n == 1)
		WHO(" (also pid %d %s%s)", (int)w->pids[0], w->comm, w->cut ? " +?" : "");
	else
		WHO(" (also pids");
	for (i = 0; w->n > 1 && i < w->n && i < SHARE_WHO_MAX; i++)
		WHO(" %d", (int)w->pids[i]);
	if (w->n > SHARE_WHO_MAX)
		WHO(" +%u", w->n - SHARE_WHO_MAX);
	if (w->n > 1)
		WHO("%s)", w->cut ? " +?" : "");
#undef WHO
}

/* The sharing layer's part of the cursor line: a page's map count (its class when the
 * count was not kept), or the cell's resident pages by class. */
static void readout_sharing(const struct hm_readout *ro, uint64_t n, char *buf, size_t size,
			    size_t *len)
{
	static const char *const by[SHC_COUNT] = {
		[SHC_PRIVATE] = "private", [SHC_TWO] = "by 2", [SHC_FEW] = "by 3-8",
		[SHC_MANY] = "by 9+",
	};
	int k;

	if (*len >= size)
		return;
	if (n == 1) {
		for (k = SHC_COUNT - 1; k > SHC_PRIVATE && !ro->cls[k]; k--)
			;
		if (ro->res && ro->count >= 2)
			*len += snprintf(buf + *len, size - *len, ", mapped by %" PRIu64, ro->count);
		else if (ro->res)
			*len += snprintf(buf + *len, size - *len, ", mapped %s",
					 k == SHC_PRIVATE ? "once (private)" : by[k]);
		if (ro->res && k != SHC_PRIVATE && ro->who.known)
			readout_who(&ro->who, buf, size, len);
		return;
	}
	for (k = SHC_PRIVATE; k < SHC_COUNT && *len < size; k++)
		if (ro->cls[k])
			*len += snprintf(buf + *len, size - *len, ", %" PRIu64 " %s", ro->cls[k],
					 by[k]);
}

static size_t readout_text(const struct ui *ui, int cut, char *buf, size_t size)
{
	const struct heatmap *m = ui->map;
	const struct hm_readout *ro = &m->ro;
	const char *dot = ui->theme.utf8 ? " \u00b7 " : " - ", *name = ro->name;
	const char *slash = strrchr(ro->name, '/');
	uint64_t n = ro->end - ro->start;
	char rate[32];
	size_t len;

#define ADD(...) (len += len < size ? (size_t)snprintf(buf + len, size - len, __VA_ARGS__) : 0)
	draw_fmt_rate(rate, sizeof(rate), paint_heat_rate(ro->heat));
	len = 0;
	if (n == 1) {
		static const char *const names[PS_COUNT] = {
			[PS_NOT_RESIDENT] = "not resident", [PS_RESIDENT] = "resident",
			[PS_SWAPPED] = "swapped", [PS_UNTRACKED] = "untracked",
		};

		ADD("cursor 0x%" PRIx64 ": %s", ro->start << PAGE_SHIFT_4K,
		    names[ro->state < PS_COUNT ? ro->state : PS_NOT_RESIDENT]);
	} else {
		ADD("cursor 0x%" PRIx64 " +%" PRIu64 " pages: %" PRIu64 " resident",
		    ro->start << PAGE_SHIFT_4K, n, ro->res);
		if (ro->swp)
			ADD(", %" PRIu64 " swapped", ro->swp);
		if (ro->untr)
			ADD(", %" PRIu64 " untracked", ro->untr);
		if (cut < RO_NO_NONRES)
			ADD(", %" PRIu64 " not resident", n - ro->res - ro->swp - ro->untr);
	}
	if (m->share && ro->shared_known)
		readout_sharing(ro, n, buf, size, &len);
	if (cut < RO_NO_HEAT && (cut < RO_NO_COLD || strcmp(rate, "0")))
		ADD("%sheat %s f/s", dot, rate);
	if (cut >= RO_BASENAME && slash && slash != ro->name && slash[1])
		name = slash;	/* "…" + "/libc.so.6" */
	ADD("%s", dot);
	if (cut < RO_NO_PAGE)
		ADD("page %" PRIu64 " of ", ro->start - ro->map_start);
	ADD("%s%s", name == ro->name ? "" : ui->theme.utf8 ? "\u2026" : "...", name);
	if (m->style != HL_LABELS) {
		/* No label lines: the cursor's mapping's label is here. */
		char perms[5], res[16], map[16];

		mapping_perms_str(ro->perms, perms);
		draw_fmt_pages(res, sizeof(res), ro->map_res);
		draw_fmt_pages(map, sizeof(map), ro->map_end - ro->map_start);
		if (cut < RO_NO_RANGE)
			ADD(" (%0*" PRIx64 "-%0*" PRIx64 " %s, res %s/%s%s)", m->lay.addr_digits,
			    ro->map_start << PAGE_SHIFT_4K, m->lay.addr_digits,
			    ro->map_end << PAGE_SHIFT_4K, perms, res, map,
			    ro->collapsed ? ", collapsed" : "");
		else
			ADD(" (%s, res %s/%s%s)", perms, res, map, ro->collapsed ? ", collapsed" : "");
	}
#undef ADD
	return len < size ? len : size - 1;
}

/* The cursor line: everything when it fits, else what fits with the least useful fields
 * left out (the first-touch stack, --stacks, comes last and is cut at the edge). */
static void draw_readout(struct ui *ui, int row)
{
	struct heatmap *m = ui->map;
	const struct hm_readout *ro = &m->ro;
	char buf[768];
	size_t len;

	if (!ro->valid) {
		canvas_text(&ui->canvas, row, 0, ui->cols, ui->theme.style[ST_DIM],
			    m->ready || !m->found ? "no mappings to show" : "scanning...");
		return;
	}
	len = cells_fit_line(ui, RO_CUTS, buf, sizeof(buf), readout_text);
	/* A file mapping: its key, where it fits without cutting anything above. */
	if (ro->file && canvas_text_width(buf) + 20 <= ui->cols && len < sizeof(buf))
		len += snprintf(buf + len, sizeof(buf) - len, " (Enter: the file)");
	if (ro->touch[0] && len < sizeof(buf))
		snprintf(buf + len, sizeof(buf) - len, "%s%s", ui->theme.utf8 ? " \u00b7 " : " - ",
			 ro->touch);
	canvas_text(&ui->canvas, row, 0, ui->cols, ui->theme.style[ST_NORMAL], buf);
}

/* Over the top of the map: the cursor mapping's first-touch stacks by resident pages. */
static void draw_pane(struct ui *ui, int row)
{
	struct heatmap *m = ui->map;
	bool stacks = ui->e && engine_stacks(ui->e);	/* replay: no engine, no stacks */
	int i;

	canvas_text(&ui->canvas, row++, 0, ui->cols, ui->theme.style[ST_LABEL],
		    stacks ? "first touch of this mapping, by resident pages "
		    "(w closes)" : "first touch: start mevitop with --stacks (w closes)");
	for (i = 0; i < m->npane && row < ui->rows - 3; i++, row++)
		canvas_text(&ui->canvas, row, 0, ui->cols, ui->theme.style[ST_NORMAL],
			    m->pane_lines[i]);
	if (!m->npane && stacks && row < ui->rows - 3)
		canvas_text(&ui->canvas, row, 0, ui->cols, ui->theme.style[ST_DIM],
			    "  no stack sampled in this mapping yet");
}

void heatmap_draw(struct ui *ui)
{
	struct heatmap *m = ui->map;
	int k, base = UI_HEADER_ROWS;
	char gap[32];

	draw_header(ui);
	if (m->have_frame && m->ov) {
		draw_overview(ui, base);
		base++;
	}
	if (m->have_frame) {
		/* A frame built before a resize may be taller than the screen now. */
		for (k = 0; k < m->vis_h && base + k < ui->rows - 3; k++) {
			const struct hm_vline *v = &m->vl[k];

			switch (v->type) {
			case VL_EMPTY:
				break;
			case VL_GAP:
				draw_fmt_pages(gap, sizeof(gap), m->lay.maps[v->map].gap_pages);
				canvas_printf(&ui->canvas, base + k, m->gutter, ui->cols - m->gutter,
					      ui->theme.style[ST_DIM], "%s %s unmapped %s",
					      ui->theme.utf8 ? "\u00b7\u00b7\u00b7" : "...", gap,
					      ui->theme.utf8 ? "\u00b7\u00b7\u00b7" : "...");
				break;
			case VL_LABEL:
				draw_label(ui, base + k, &m->labels[v->label], v->map == m->cur_map);
				break;
			case VL_CELLS:
				draw_cells(ui, base + k, k, v);
				break;
			case VL_BLOCKS:
				draw_blocks(ui, base + k, k, v);
				break;
			}
		}
		if (m->pane)
			draw_pane(ui, base);
		draw_readout(ui, ui->rows - 3);
	} else {
		canvas_text(&ui->canvas, base, 0, ui->cols, ui->theme.style[ST_DIM],
			    m->found ? "scanning..." : "waiting for the process...");
	}
	draw_status_line(ui, ui->rows - 2);
	draw_footer(ui, &heatmap_keymap);
}
