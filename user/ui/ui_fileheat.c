// SPDX-License-Identifier: GPL-2.0
/*
 * A file's heatmap: its pages in file order, a cell per `zoom` pages, painted cached
 * (the share of the cell's pages in the page cache, on the process heatmap's gradient),
 * dirty, under writeback, or not cached.  The heat layer (t) shows adds and evictions per
 * second instead: this view keeps the page set of the last refresh and files what changed
 * into two heat tables (model.h's, 16-page blocks, 2 s half-life), so a block being read in
 * glows red to yellow and one being evicted blue.
 *
 * Its page sets are the engine's (model/fcache.h: a file the view opens is watched from the
 * next refresh on); ui_fcache.c copies them when they change, so drawing, scrolling and
 * zooming never wait for the engine.  The cursor line names the cursor's page (index and
 * state) and the watched processes that map it, with whether their mapping has it
 * resident, looked up in the process model under the lock.
 */
#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "lib/array.h"
#include "lib/log.h"
#include "ui/ui_cells.h"
#include "ui/ui_draw.h"
#include "ui/ui_fcache.h"
#include "ui/ui_fileheat.h"
#include "ui/ui_maplayout.h"
#include "ui/ui_paint.h"
#include "ui/ui_model.h"

struct fileheat {
	bool set;			/* a file is chosen */
	uint64_t dev, ino;
	enum ui_view back;		/* Esc */
	bool wanted;			/* the engine was asked for its page sets */
	uint64_t drop_dev, drop_ino;	/* the previous file, no longer wanted */
	bool drop;
	struct uf_pages pg;
	struct heat adds, evicts;	/* per 16-page block, from successive page sets */
	bool heat;			/* heat layer */
	uint64_t zoom;
	bool zoom_auto;
	uint64_t cur;			/* the cursor's page */
	int cur_row;			/* its row on the screen */
	/* The frame. */
	uint64_t npages, ncells, nlines, top;
	int width, cpc, per_line, vis_h, gutter;
	uint8_t *paint;			/* vis_h * per_line */
	uint64_t *cnt;			/* 3 * per_line */
	size_t paint_cap, cnt_cap;
	char who[512];			/* processes mapping the cursor's page */
	uint64_t who_page;		/* the page who is for */
};

struct fileheat *fileheat_new(void)
{
	struct fileheat *m = calloc(1, sizeof(*m));

	if (m) {
		m->zoom = 1;
		m->zoom_auto = true;
	}
	return m;
}

void fileheat_free(struct fileheat *m)
{
	if (!m)
		return;
	ui_fcache_pages_free(&m->pg);
	heat_free(&m->adds);
	heat_free(&m->evicts);
	free(m->paint);
	free(m->cnt);
	free(m);
}

void fileheat_show(struct ui *ui, uint64_t dev, uint64_t ino, enum ui_view back)
{
	struct fileheat *m = ui->fmap;

	ui->view = VIEW_FMAP;
	if (back != VIEW_FMAP)
		m->back = back;
	if (m->set && m->dev == dev && m->ino == ino)
		return;
	if (m->set && m->wanted) {
		m->drop = true;
		m->drop_dev = m->dev;
		m->drop_ino = m->ino;
	}
	ui_fcache_pages_free(&m->pg);
	memset(&m->pg, 0, sizeof(m->pg));
	heat_free(&m->adds);
	heat_free(&m->evicts);
	m->set = true;
	m->dev = m->pg.dev = dev;
	m->ino = m->pg.ino = ino;
	m->wanted = false;
	m->cur = 0;
	m->cur_row = 0;
	m->zoom_auto = true;
	m->who[0] = 0;
	m->who_page = UINT64_MAX;
}

int fileheat_show_path(struct ui *ui, const char *path, enum ui_view back)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	fileheat_show(ui, st.st_dev, st.st_ino, back);
	return 0;
}

/* --- under the lock --- */

/* "812 cat (resident), 900 cp (not resident)": the watched processes mapping page. */
static void who_maps(struct ui *ui, struct fileheat *m, uint64_t page)
{
	size_t i, len = 0, n = 0;

	m->who[0] = 0;
	m->who_page = page;
	for (i = 0; i < m->pg.npids; i++) {
		const struct proc *p = ui_model_find(ui, m->pg.pids[i]);
		const struct mapping *mp;

		if (!p || !p->ready)
			continue;
		for (mp = model_first(p); mp; mp = model_next(mp)) {
			uint64_t first = mp->offset >> 12, vp;

			if (mp->ino != m->ino || makedev(mp->dev_major, mp->dev_minor) != m->dev ||
			    page < first || page - first >= mapping_end(mp) - mapping_start(mp))
				continue;
			vp = mapping_start(mp) + (page - first);
			if (len < sizeof(m->who))
				len += snprintf(m->who + len, sizeof(m->who) - len, "%s%d %s (%s)",
						n ? ", " : "", p->pid, p->comm,
						model_page_state_name(model_page_state(p, vp)));
			n++;
			break;
		}
	}
}

void fileheat_update(struct ui *ui)
{
	struct fileheat *m = ui->fmap;
	struct pageset *old = NULL;
	uint64_t now = ui->now_ns;

	if (m->drop) {
		ui_fcache_want_pages(ui, m->drop_dev, m->drop_ino, false);
		m->drop = false;
	}
	if (!m->set || (ui->paused && m->pg.gen))
		return;
	if (!m->wanted)
		m->wanted = !ui_fcache_want_pages(ui, m->dev, m->ino, true);
	if (ui_fcache_pages_update(ui, &m->pg, &old) && old && m->pg.cached_set) {
		heat_add_diff(&m->adds, m->pg.cached_set, old, now);
		heat_add_diff(&m->evicts, old, m->pg.cached_set, now);
		heat_prune(&m->adds, now);
		heat_prune(&m->evicts, now);
	}
	pageset_free(old);
	if (m->pg.npids)
		who_maps(ui, m, m->cur);
	else
		m->who[0] = 0;
}

/* --- the frame (no lock: the sets are our copies) --- */

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* The smallest power-of-two zoom that puts every page on the screen. */
static uint64_t fit_zoom(const struct fileheat *m)
{
	uint64_t z = 1, room = (uint64_t)m->vis_h * m->per_line;

	while (z < 1ULL << 40 && div_up(m->npages ? m->npages : 1, z) > room)
		z <<= 1;
	return z;
}

static uint8_t paint_cell(const struct fileheat *m, uint64_t cs, uint64_t ce, uint64_t c,
			  uint64_t d, uint64_t w, uint64_t now)
{
	if (m->heat) {
		float a = heat_range(&m->adds, cs, ce, now), e = heat_range(&m->evicts, cs, ce, now);

		if (e > a && paint_heat(e, cs, ce, false) != P_NONRES)
			return P_EVICT;
		return paint_heat(a, cs, ce, c > 0);
	}
	if (w)
		return P_WB;
	if (d)
		return P_DIRTY;
	return paint_counts(ce - cs, c, 0, 0);
}

/* Line `line`'s cells into out[0..per_line). */
static void paint_line(struct fileheat *m, uint64_t line, uint8_t *out, uint64_t now)
{
	uint64_t z = m->zoom, rs = line * m->per_line * z, re = rs + (uint64_t)m->per_line * z, k;
	uint64_t *c = m->cnt, *d = c + m->per_line, *w = d + m->per_line, cells;

	if (re > m->npages)
		re = m->npages;
	cells = rs < re ? div_up(re - rs, z) : 0;
	for (k = cells; k < (uint64_t)m->per_line; k++)
		out[k] = P_BLANK;
	if (!cells)
		return;
	pageset_count_cells(m->pg.cached_set, rs, re, z, c);
	pageset_count_cells(m->pg.dirty_set, rs, re, z, d);
	pageset_count_cells(m->pg.wb_set, rs, re, z, w);
	for (k = 0; k < cells; k++) {
		uint64_t cs = rs + k * z, ce = cs + z < re ? cs + z : re;

		out[k] = paint_cell(m, cs, ce, c[k], d[k], w[k], now);
	}
}

static int digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* Lays the pages out for this screen and paints the lines it shows. */
static bool build(struct ui *ui)
{
	struct fileheat *m = ui->fmap;
	uint64_t last = 0, rs, re, cur_line, k;

	if (!m->pg.have_sets || !m->pg.cached_set)
		return false;
	/* Pages past the size can be cached for a moment (a truncate racing the read). */
	if (pageset_next_run(m->pg.cached_set, 0, UINT64_MAX, &rs, &re))
		for (last = re; pageset_next_run(m->pg.cached_set, last, UINT64_MAX, &rs, &re);)
			last = re;
	m->npages = div_up(m->pg.size, 4096);
	if (last > m->npages)
		m->npages = last;
	m->cpc = theme_cells_per_char(&ui->theme);
	m->vis_h = ui->rows - UI_HEADER_ROWS - 3;
	m->gutter = digits(m->npages) + 1;
	if (m->gutter < 6)
		m->gutter = 6;
	m->width = (ui->cols - m->gutter - 1) / 16 * 16;
	if (m->width < 16)
		m->width = 16;
	m->per_line = m->width * m->cpc;
	if (m->vis_h < 1)
		return false;
	if ((size_t)m->vis_h * m->per_line > m->paint_cap) {
		if (array_resize(m->paint, (size_t)m->vis_h * m->per_line))
			return false;
		m->paint_cap = (size_t)m->vis_h * m->per_line;
	}
	if (3 * (size_t)m->per_line > m->cnt_cap) {
		if (array_resize(m->cnt, 3 * (size_t)m->per_line))
			return false;
		m->cnt_cap = 3 * (size_t)m->per_line;
	}
	if (m->zoom_auto)
		m->zoom = fit_zoom(m);
	m->ncells = div_up(m->npages ? m->npages : 1, m->zoom);
	m->nlines = div_up(m->ncells, m->per_line);
	if (m->cur >= m->npages)
		m->cur = m->npages ? m->npages - 1 : 0;
	/* The cursor keeps its screen row. */
	cur_line = m->cur / m->zoom / m->per_line;
	if (m->cur_row >= m->vis_h)
		m->cur_row = m->vis_h - 1;
	if (m->cur_row < 0)
		m->cur_row = 0;
	m->top = cur_line > (uint64_t)m->cur_row ? cur_line - m->cur_row : 0;
	if (m->nlines > (uint64_t)m->vis_h && m->top > m->nlines - m->vis_h)
		m->top = m->nlines - m->vis_h;
	if (m->nlines <= (uint64_t)m->vis_h)
		m->top = 0;
	m->cur_row = (int)(cur_line - m->top);
	for (k = 0; k < (uint64_t)m->vis_h; k++)
		paint_line(m, m->top + k, m->paint + k * m->per_line, ui->now_ns);
	return true;
}

/* --- drawing --- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return path[0] == '/' && slash && slash[1] ? slash + 1 : path;
}

static void draw_header(struct ui *ui)
{
	struct fileheat *m = ui->fmap;
	const struct uf_pages *pg = &m->pg;
	char what[4200], a[32], b[64], zoom[64];
	const char *warn = NULL;
	uint64_t pages = div_up(pg->size, 4096);
	bool wide = ui->cols >= 120;
	int col = 0;

	snprintf(what, sizeof(what), "file %s", pg->name[0] ? pg->name : "...");
	if (!pg->found && pg->gen)
		warn = "NOT CACHED";
	else if (ui->paused)
		warn = "PAUSED";
	else if (ui_model_stale(ui))
		warn = ui_model_stale(ui);
	draw_title(ui, what, warn);
	draw_fmt_pages(a, sizeof(a), pages);
	col = draw_field(ui, 1, col, "size", a, ST_VALUE);
	draw_fmt_pages(a, sizeof(a), pg->cached);
	snprintf(b, sizeof(b), "%s %.0f%%", a, pages ? 100.0 * pg->cached / pages : 0.0);
	col = draw_field(ui, 1, col, "cached", b, ST_VALUE);
	draw_fmt_pages(a, sizeof(a), pg->dirty);
	col = draw_field(ui, 1, col, "dirty", a, ST_VALUE);
	draw_fmt_pages(a, sizeof(a), pg->wb);
	col = draw_field(ui, 1, col, wide ? "writeback" : "wb", a, ST_VALUE);
	draw_fmt_rate(a, sizeof(a), pg->adds);
	col = draw_field(ui, 1, col, "adds/s", a, ST_VALUE);
	draw_fmt_rate(a, sizeof(a), pg->evicts);
	col = draw_field(ui, 1, col, wide ? "evictions/s" : "evict/s", a, ST_VALUE);
	snprintf(a, sizeof(a), "%zu", pg->npids);
	draw_field(ui, 1, col, "mapped by", a, ST_VALUE);

	col = draw_engine_stats(ui, 2, 0);
	cells_zoom_text(zoom, sizeof(zoom), m->zoom, m->zoom_auto, ui->cols >= 100);
	col = draw_field(ui, 2, col, "zoom", zoom, ST_VALUE);
	col = draw_field(ui, 2, col, "layer", m->heat ? "adds/evictions" : "cache", ST_VALUE);
	draw_field(ui, 2, col, "kind", pg->kind ? pg->kind : "?", ST_VALUE);
}

/* How much of the cursor line to leave out so it fits the width, least useful first. */
enum fh_cut { FH_FULL, FH_NO_RATES, FH_BASENAME, FH_NO_NAME, FH_CUTS };

static size_t readout_text(const struct ui *ui, int cut, char *buf, size_t size)
{
	const struct fileheat *m = ui->fmap;
	const char *dot = ui->theme.utf8 ? " \u00b7 " : " - ";
	uint64_t s = m->cur / m->zoom * m->zoom, e = s + m->zoom < m->npages ? s + m->zoom :
							m->npages;
	size_t len = 0;

#define ADD(...) (len += len < size ? (size_t)snprintf(buf + len, size - len, __VA_ARGS__) : 0)
	if (e - s <= 1) {
		const char *st = pageset_contains(m->pg.wb_set, s) ? "writeback" :
				 pageset_contains(m->pg.dirty_set, s) ? "dirty" :
				 pageset_contains(m->pg.cached_set, s) ? "cached" : "not cached";

		ADD("cursor page %" PRIu64 ": %s", s, st);
	} else {
		uint64_t c = pageset_count_range(m->pg.cached_set, s, e);

		ADD("cursor pages %" PRIu64 "-%" PRIu64 ": %" PRIu64 " cached", s, e - 1, c);
		ADD(", %" PRIu64 " dirty", pageset_count_range(m->pg.dirty_set, s, e));
		ADD(", %" PRIu64 " writeback", pageset_count_range(m->pg.wb_set, s, e));
		ADD(", %" PRIu64 " not cached", e - s - c);
	}
	if (cut < FH_NO_RATES) {
		char a[16], v[16];

		draw_fmt_rate(a, sizeof(a), paint_heat_rate(heat_range(&m->adds, s, e, ui->now_ns)));
		draw_fmt_rate(v, sizeof(v), paint_heat_rate(heat_range(&m->evicts, s, e, ui->now_ns)));
		ADD("%sadds %s/s, evictions %s/s", dot, a, v);
	}
	if (m->who_page == m->cur && m->who[0])
		ADD("%smapped by %s", dot, m->who);
	else if (m->pg.npids)
		ADD("%smapped by no watched process here", dot);
	if (cut < FH_NO_NAME)
		ADD("%s%s", dot, cut >= FH_BASENAME ? base_name(m->pg.name) : m->pg.name);
#undef ADD
	return len < size ? len : size - 1;
}

static void draw_gutter(struct ui *ui, int row, uint64_t page)
{
	struct fileheat *m = ui->fmap;

	canvas_printf(&ui->canvas, row, 0, m->gutter - 1, ui->theme.style[ST_GUTTER],
		      "%*" PRIu64, m->gutter - 1, page);
}

void fileheat_draw(struct ui *ui)
{
	struct fileheat *m = ui->fmap;
	char buf[1024];
	int k, base = UI_HEADER_ROWS;

	draw_header(ui);
	if (!build(ui)) {
		canvas_text(&ui->canvas, base, 0, ui->cols, ui->theme.style[ST_DIM],
			    ui->replay ? "a recording carries no page sets of files" :
			    !m->set ? "no file chosen" :
			    m->pg.gen && !m->pg.found ? "this file has no pages in the page cache "
			    "(or the engine does not watch it)" :
			    /* The engine was asked (ui_fcache_want_pages) but keeps none for it. */
			    m->pg.waits >= 3 ? "the engine keeps no page sets for this file: "
			    "watch it with --file PATH" :
			    "waiting for the file's pages (the next refresh)...");
	} else {
		for (k = 0; k < m->vis_h && m->top + k < m->nlines; k++) {
			uint64_t line = m->top + k, cur_line = m->cur / m->zoom / m->per_line;
			uint64_t cell = m->cur / m->zoom % m->per_line;

			draw_gutter(ui, base + k, line * m->per_line * m->zoom);
			cells_draw(ui, base + k, m->gutter, m->paint + (size_t)k * m->per_line,
				   m->width, m->cpc, line == cur_line ? (int)(cell / m->cpc) : -1,
				   (int)(cell % m->cpc) + 1);
		}
		cells_fit_line(ui, FH_CUTS, buf, sizeof(buf), readout_text);
		canvas_text(&ui->canvas, ui->rows - 3, 0, ui->cols, ui->theme.style[ST_NORMAL], buf);
	}
	draw_status_line(ui, ui->rows - 2);
	draw_footer(ui, &fileheat_keymap);
}

/* --- keys (ui/keys.h) --- */

static void move_cells(struct fileheat *m, int64_t d)
{
	int64_t cell = (int64_t)(m->cur / m->zoom) + d, last = (int64_t)m->ncells - 1;
	int64_t lines;

	if (cell < 0)
		cell = 0;
	if (cell > last)
		cell = last;
	lines = cell / m->per_line - (int64_t)(m->cur / m->zoom / m->per_line);
	m->cur_row += (int)(lines > m->vis_h ? m->vis_h : lines < -m->vis_h ? -m->vis_h : lines);
	m->cur = (uint64_t)cell * m->zoom;
}

static bool fh_move(struct ui *ui, int key)
{
	struct fileheat *m = ui->fmap;
	int64_t line = m->per_line, screen = (int64_t)m->per_line * (m->vis_h > 1 ? m->vis_h : 1);

	if (!m->ncells || !m->per_line)
		return false;
	switch (key) {
	case KEY_LEFT:
		move_cells(m, -1);
		break;
	case KEY_RIGHT:
		move_cells(m, 1);
		break;
	case KEY_UP:
		move_cells(m, -line);
		break;
	case KEY_DOWN:
		move_cells(m, line);
		break;
	case KEY_PPAGE:
		move_cells(m, -screen);
		break;
	case KEY_NPAGE:
		move_cells(m, screen);
		break;
	case KEY_HOME:
		move_cells(m, -(int64_t)m->ncells);
		break;
	case KEY_END:
		move_cells(m, (int64_t)m->ncells);
		break;
	}
	return true;
}

static bool fh_zoom(struct ui *ui, int key)
{
	struct fileheat *m = ui->fmap;

	if (key == '=' || key == '0') {
		m->zoom_auto = true;
		return true;
	}
	m->zoom_auto = false;
	m->zoom = cells_zoom_step(m->zoom, key == '+' ? 1 : -1);
	return true;
}

static bool fh_heat(struct ui *ui, int key)
{
	(void)key;
	ui->fmap->heat = !ui->fmap->heat;
	return true;
}

static bool fh_goto(struct ui *ui, int key)
{
	(void)key;
	ui->prompt.kind = PROMPT_PAGE;
	ui->prompt.len = 0;
	ui->prompt.text[0] = 0;
	return true;
}

static bool fh_back(struct ui *ui, int key)
{
	(void)key;
	ui->view = ui->fmap->back == VIEW_MAP || ui->fmap->back == VIEW_LIST ? ui->fmap->back :
		   VIEW_FILES;
	return true;
}

static const struct ui_key fileheat_keys[] = {
	{ { KEY_UP, KEY_DOWN, KEY_LEFT, KEY_RIGHT }, "arrows", "move by one cell", NULL, NULL,
	  fh_move },
	{ { KEY_PPAGE, KEY_NPAGE }, "PgUp PgDn", "a screen up / down", NULL, NULL, fh_move },
	{ { KEY_HOME, KEY_END }, "Home End", "first / last page", NULL, NULL, fh_move },
	{ { '+', '-', '_' }, "+ -", "zoom in / out", "+-", "Zoom", fh_zoom },
	{ { '=', '0' }, "= 0", "zoom to fit (auto)", NULL, NULL, fh_zoom },
	{ { 't' }, "t", "heat: adds/evictions", "t", "Heat", fh_heat },
	{ { 'g' }, "g", "go to a page index", "g", "Go to", fh_goto },
	{ { 27, KEY_BACKSPACE, 127, 8 }, "Esc Backspace", "back", "Esc", "Back", fh_back },
};

const struct ui_keymap fileheat_keymap = UI_KEYMAP("File heatmap", fileheat_keys);

bool fileheat_key(struct ui *ui, int key)
{
	struct fileheat *m = ui->fmap;

	if (ui->prompt.kind == PROMPT_PAGE) {
		int r = draw_prompt_key(&ui->prompt, key);

		if (r > 0) {
			char *end;
			unsigned long long v = strtoull(ui->prompt.text, &end, 0);

			if (end == ui->prompt.text || *end)
				log_warn("not a page index: '%s'", ui->prompt.text);
			else if (m->ncells)
				move_cells(m, (int64_t)(v / m->zoom) - (int64_t)(m->cur / m->zoom));
			m->cur_row = m->vis_h / 2;
		}
		if (r)
			ui->prompt.kind = PROMPT_NONE;
		return true;
	}
	return keys_dispatch(&fileheat_keymap, ui, key);
}
