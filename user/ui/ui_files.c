// SPDX-License-Identifier: GPL-2.0
/*
 * The Files view: every file with pages in the page cache, one row each, like the process
 * list (Tab switches between them): sort, filter and tree keys work as there.
 *
 * The table changes once per refresh (ui_fcache.c copies it then); filtering, sorting and
 * the tree are redone only when the copy, the filter, the sort or a fold changed, so a
 * frame of 100,000 files costs what the screen shows.  The selection follows its file
 * (dev, ino) or directory (path), so rows moving around it do not move it.
 *
 * The tree (t, F5) is by directory (ui_filetree.h): a directory's row sums the files under
 * it, what /var/log holds in the cache.
 */
#include <curses.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "lib/array.h"
#include "ui/ui_draw.h"
#include "ui/ui_fcache.h"
#include "ui/ui_files.h"
#include "ui/ui_filetree.h"
#include "ui/ui_listnav.h"
#include "ui/ui_memsum.h"
#include "ui/ui_model.h"
#include "ui/treeview.h"

enum fl_col {
	FL_CACHED,
	FL_PCT,
	FL_DIRTY,
	FL_WB,
	FL_ADDS,
	FL_EVICTS,
	FL_EVICTED,
	FL_SIZE,
	FL_MAPPED,
	FL_PATH,
	FL_COUNT,
};

struct fl_coldef {
	const char *title;
	const char *name;		/* in the sort menu */
	int width;			/* FL_PATH: the least it gets */
	int prio;			/* shown when the width allows this priority (0 always) */
	bool desc;			/* sorts biggest first by default */
	int key;			/* direct sort key, 0 if none */
};

static const struct fl_coldef coldefs[FL_COUNT] = {
	[FL_CACHED] = { "CACHED", "cached", 7, 0, true, 'M' },
	[FL_PCT] = { "CACHE%", "cached % of size", 6, 2, true, 'R' },
	[FL_DIRTY] = { "DIRTY", "dirty", 6, 0, true, 'D' },
	[FL_WB] = { "WB", "writeback", 5, 0, true, 'W' },
	[FL_ADDS] = { "ADDS/s", "adds/s", 6, 0, true, 'A' },
	[FL_EVICTS] = { "EVICT/s", "evictions/s", 7, 0, true, 'E' },
	[FL_EVICTED] = { "EVICTED", "evicted (total)", 7, 3, true, 0 },
	[FL_SIZE] = { "SIZE", "size", 7, 2, true, 'S' },
	[FL_MAPPED] = { "MAPPED-BY", "mapped by (count)", 12, 0, true, 0 },
	[FL_PATH] = { "PATH", "path", 24, 0, false, 'N' },
};

struct fl_pid {
	pid_t pid;
	char comm[16];
};

struct files {
	struct uf_snap snap;
	struct uf_mem mem;
	struct fl_pid *pids;		/* every process's comm, for MAPPED-BY (by pid) */
	size_t npids, pids_cap;
	bool stale;			/* the lines must be rebuilt */
	char applied[64];		/* the filter the lines were built with */
	size_t *match;			/* the files passing the filter */
	size_t nmatch, match_cap;
	struct ftree ft;		/* the tree view's directories */
	struct ft_line *lines;		/* shown */
	struct fl_key *keys;		/* the flat list's sort */
	size_t keys_cap;
	size_t nlines, lines_cap;
	/* Totals over the filtered files. */
	struct ft_vals total;
	enum fl_col sort;
	bool desc;
	bool tree;
	char filter[64];
	bool menu;
	int menu_sel;
	/* Selection. */
	bool sel_dir;
	uint64_t sel_dev, sel_ino;
	char sel_path[512];
	size_t sel, top;
};

struct files *files_new(void)
{
	struct files *f = calloc(1, sizeof(*f));

	if (f) {
		f->sort = FL_CACHED;
		f->desc = true;
		f->stale = true;
	}
	return f;
}

void files_free(struct files *f)
{
	if (!f)
		return;
	ui_fcache_snap_free(&f->snap);
	free(f->pids);
	free(f->match);
	free(f->lines);
	free(f->keys);
	filetree_free(&f->ft);
	free(f);
}

/* Under the lock: the file table when it changed, the processes' names with it. */
void files_update(struct ui *ui)
{
	struct files *f = ui->files;
	struct proc **procs;
	size_t n, i;

	if (ui->paused && f->snap.gen)
		return;
	ui_fcache_memory(ui, &f->mem);
	if (!ui_fcache_snap_update(ui, &f->snap))
		return;
	f->stale = true;
	procs = ui_model_procs(ui, &n);	/* sorted by pid */
	if (n > f->pids_cap) {
		if (array_resize(f->pids, n))
			return;
		f->pids_cap = n;
	}
	for (i = 0; i < n; i++) {
		f->pids[i].pid = procs[i]->pid;
		memcpy(f->pids[i].comm, procs[i]->comm, sizeof(f->pids[i].comm));
		f->pids[i].comm[sizeof(f->pids[i].comm) - 1] = 0;
	}
	f->npids = n;
}

static const char *comm_of(const struct files *f, pid_t pid)
{
	size_t lo = 0, hi = f->npids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->pids[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->npids && f->pids[lo].pid == pid ? f->pids[lo].comm : "?";
}

static const char *filter_text(const struct ui *ui)
{
	return ui->prompt.kind == PROMPT_FILTER ? ui->prompt.text : ui->files->filter;
}

/* --- arranging: filter, sort, tree --- */

static struct ft_vals line_vals(const struct files *f, const struct ft_line *ln)
{
	return ln->dir ? f->ft.dirs[ln->idx].v : filetree_file_vals(&f->snap.v[ln->idx]);
}

static int cmp_num(double a, double b)
{
	return (a > b) - (a < b);
}

static double pct(const struct ft_vals *v)
{
	return v->size ? 100.0 * v->cached * 4096 / (double)v->size : 0;
}

/* What a column sorts by (PATH: nothing, the names decide). */
static double sort_value(enum fl_col col, const struct ft_vals *v)
{
	switch (col) {
	case FL_CACHED:
		return v->cached;
	case FL_PCT:
		return pct(v);
	case FL_DIRTY:
		return v->dirty;
	case FL_WB:
		return v->wb;
	case FL_ADDS:
		return v->adds;
	case FL_EVICTS:
		return v->evicts;
	case FL_EVICTED:
		return v->evicted;
	case FL_SIZE:
		return v->size;
	case FL_MAPPED:
		return v->npids;
	default:
		return 0;
	}
}

/* By the sort value (biggest first when desc), ties and the path column by name. */
static int cmp_key(const struct files *f, double x, double y, const char *na, const char *nb)
{
	int c = f->desc ? cmp_num(y, x) : cmp_num(x, y);

	if (!c) {
		c = strcmp(na, nb);
		if (f->sort == FL_PATH && f->desc)
			c = -c;
	}
	return c;
}

/* The tree's siblings. */
static int cmp_lines(const struct files *f, const struct ft_line *a, const struct ft_line *b)
{
	struct ft_vals x = line_vals(f, a), y = line_vals(f, b);

	return cmp_key(f, sort_value(f->sort, &x), sort_value(f->sort, &y),
		       filetree_name(&f->ft, &f->snap, a), filetree_name(&f->ft, &f->snap, b));
}

static struct files *sort_files;	/* qsort has no context argument; UI thread only */

/* The flat list sorts keys made once per file, not the files' rows (a third of the time
 * with 30,000 files). */
struct fl_key {
	double v;
	const char *name;
	size_t idx;
};

static int qcmp_keys(const void *pa, const void *pb)
{
	const struct fl_key *a = pa, *b = pb;

	return cmp_key(sort_files, a->v, b->v, a->name, b->name);
}

static int tree_cmp(const struct ft_line *a, const struct ft_line *b, void *ctx)
{
	return cmp_lines(ctx, a, b);
}

/* Rebuilds the lines when something they depend on changed. */
static void arrange(struct ui *ui)
{
	struct files *f = ui->files;
	const char *flt = filter_text(ui);
	size_t i, need;

	if (!f->stale && !strcmp(flt, f->applied))
		return;
	snprintf(f->applied, sizeof(f->applied), "%s", flt);
	f->stale = false;
	f->nmatch = f->nlines = 0;
	memset(&f->total, 0, sizeof(f->total));
	/* The tree: every file, and directories with files or forks (fewer than 2 per file). */
	need = f->snap.n * 3 + 1;
	if (f->snap.n + 1 > f->match_cap) {
		if (array_resize(f->match, f->snap.n + 1))
			return;
		f->match_cap = f->snap.n + 1;
	}
	if (need > f->lines_cap) {
		if (array_resize(f->lines, need))
			return;
		f->lines_cap = need;
	}
	for (i = 0; i < f->snap.n; i++) {
		const struct uf_file *u = &f->snap.v[i];
		struct ft_vals v = filetree_file_vals(u);

		if (*flt && !strcasestr(uf_name(&f->snap, u), flt))
			continue;
		f->match[f->nmatch++] = i;
		filetree_vals_add(&f->total, &v, true);
	}
	if (f->tree && !filetree_build(&f->ft, &f->snap, f->match, f->nmatch, tree_cmp, f, f->lines,
				       &f->nlines))
		return;
	for (i = 0; i < f->nmatch; i++)
		f->lines[i] = (struct ft_line){ .idx = f->match[i] };
	f->nlines = f->nmatch;
	f->tree = false;	/* flat, or the tree failed (no memory): flat */
	if (f->nlines > f->keys_cap) {
		if (array_resize(f->keys, f->nlines))
			return;		/* unsorted this time */
		f->keys_cap = f->nlines;
	}
	for (i = 0; i < f->nlines; i++) {
		const struct uf_file *u = &f->snap.v[f->lines[i].idx];
		struct ft_vals v = filetree_file_vals(u);

		f->keys[i] = (struct fl_key){ sort_value(f->sort, &v), uf_name(&f->snap, u),
					      f->lines[i].idx };
	}
	sort_files = f;
	if (f->nlines)
		qsort(f->keys, f->nlines, sizeof(*f->keys), qcmp_keys);
	for (i = 0; i < f->nlines; i++)
		f->lines[i].idx = f->keys[i].idx;
}

static bool is_selected(const struct files *f, const struct ft_line *ln)
{
	if (ln->dir != f->sel_dir)
		return false;
	if (ln->dir)
		return !strcmp(ftree_path(&f->ft, ln->idx), f->sel_path);
	return f->snap.v[ln->idx].dev == f->sel_dev && f->snap.v[ln->idx].ino == f->sel_ino;
}

static void select_line(struct files *f, size_t i)
{
	const struct ft_line *ln;

	if (!f->nlines)
		return;
	f->sel = i < f->nlines ? i : f->nlines - 1;
	ln = &f->lines[f->sel];
	f->sel_dir = ln->dir;
	if (ln->dir) {
		snprintf(f->sel_path, sizeof(f->sel_path), "%s", ftree_path(&f->ft, ln->idx));
	} else {
		f->sel_dev = f->snap.v[ln->idx].dev;
		f->sel_ino = f->snap.v[ln->idx].ino;
	}
}

/* The selection's line (it follows its file or directory), and the scroll position. */
static void place(struct files *f, int visible)
{
	size_t i;
	bool found = false;

	for (i = 0; i < f->nlines; i++) {
		if (is_selected(f, &f->lines[i])) {
			f->sel = i;
			found = true;
			break;
		}
	}
	if (!found)
		select_line(f, f->sel);
	if (visible < 1)
		visible = 1;
	if (f->sel < f->top)
		f->top = f->sel;
	if (f->sel >= f->top + visible)
		f->top = f->sel - visible + 1;
	if (f->top + visible > f->nlines)
		f->top = f->nlines > (size_t)visible ? f->nlines - visible : 0;
}

/* --- drawing --- */

static int header_rows(const struct ui *ui)
{
	return UI_HEADER_ROWS + memsum_rows(ui, &ui->files->mem);
}

static int list_rows(const struct ui *ui)
{
	return ui->rows - header_rows(ui) - 1 - 2;	/* column header; status, footer */
}

/* A column's width: MAPPED-BY takes what a wide terminal has to spare, up to 20 more. */
static int col_width(const struct ui *ui, int col)
{
	int extra = ui->cols - 140;

	if (col != FL_MAPPED || extra <= 0)
		return coldefs[col].width;
	return coldefs[col].width + (extra < 20 ? extra : 20);
}

/* The columns this width shows: the highest priority whose columns leave PATH its least. */
static int shown_prio(const struct ui *ui)
{
	int p, i, w;

	for (p = 3; p > 0; p--) {
		for (w = 0, i = 0; i < FL_COUNT; i++)
			if (coldefs[i].prio <= p)
				w += coldefs[i].width + 1;
		if (w <= ui->cols)
			return p;
	}
	return 0;
}

static void draw_header(struct ui *ui)
{
	struct files *f = ui->files;
	char a[32], b[64];
	int col = 0;

	draw_title(ui, "page cache", ui->paused ? "PAUSED" : ui_model_stale(ui));
	snprintf(a, sizeof(a), "%zu", f->nmatch);
	if (f->nmatch != f->snap.n)
		snprintf(a + strlen(a), sizeof(a) - strlen(a), " of %zu", f->snap.n);
	col = draw_field(ui, 1, col, "files", a, ST_VALUE);
	draw_fmt_pages(a, sizeof(a), f->total.cached);
	col = draw_field(ui, 1, col, "cached", a, ST_VALUE);
	draw_fmt_pages(a, sizeof(a), f->total.dirty);
	col = draw_field(ui, 1, col, "dirty", a, ST_VALUE);
	draw_fmt_pages(a, sizeof(a), f->total.wb);
	col = draw_field(ui, 1, col, "writeback", a, ST_VALUE);
	draw_fmt_rate(a, sizeof(a), f->total.adds);
	col = draw_field(ui, 1, col, "adds/s", a, ST_VALUE);
	draw_fmt_rate(a, sizeof(a), f->total.evicts);
	draw_field(ui, 1, col, "evictions/s", a, ST_VALUE);

	col = draw_engine_stats(ui, 2, 0);
	snprintf(b, sizeof(b), "%s %s", coldefs[f->sort].name, f->desc ? "desc" : "asc");
	col = draw_field(ui, 2, col, "sort", b, ST_VALUE);
	if (f->tree)
		col = draw_field(ui, 2, col, "view", "by directory", ST_VALUE);
	if (*filter_text(ui))
		draw_field(ui, 2, col, "filter", filter_text(ui), ST_VALUE);
	memsum_draw(ui, UI_HEADER_ROWS, &f->mem);
}

static void draw_colheads(struct ui *ui, int row, int prio)
{
	struct files *f = ui->files;
	int col = 0, i;

	canvas_fill(&ui->canvas, row, 0, ui->cols, ' ', ui->theme.style[ST_COLHEAD]);
	for (i = 0; i < FL_COUNT; i++) {
		const struct fl_coldef *d = &coldefs[i];
		bool s = (int)f->sort == i, right = i != FL_PATH && i != FL_MAPPED;
		struct ui_look look = ui->theme.style[s ? ST_COLHEAD_SORT : ST_COLHEAD];
		int w = canvas_text_width(d->title), width = i == FL_PATH ? ui->cols - col :
							    col_width(ui, i);

		if (d->prio > prio)
			continue;
		canvas_text(&ui->canvas, row, right ? col + width - w : col, w, look, d->title);
		if (s)
			canvas_put(&ui->canvas, row, right ? col + width - w - 1 : col + w,
				   f->desc ? ui->theme.arrow_down : ui->theme.arrow_up, look);
		col += width + 1;
	}
}

/* path cut to width columns from the left, keeping its end: "…/log/syslog". */
static void fit_left(char *out, size_t len, const char *path, int width, bool utf8)
{
	const char *p = path;

	if (canvas_text_width(path) <= width) {
		snprintf(out, len, "%s", path);
		return;
	}
	while (*p && canvas_text_width(p) > width - 1)
		for (p++; (*p & 0xc0) == 0x80; p++)	/* a whole UTF-8 character */
			;
	snprintf(out, len, "%s%s", utf8 ? "\u2026" : "~", p);
}

static void mapped_by(const struct files *f, const struct ft_line *ln, char *buf, size_t len)
{
	const struct uf_file *u;

	if (ln->dir) {
		snprintf(buf, len, "%zu file%s", f->ft.dirs[ln->idx].v.npids,
			 f->ft.dirs[ln->idx].v.npids == 1 ? "" : "s");
		return;
	}
	u = &f->snap.v[ln->idx];
	if (!u->npids) {
		snprintf(buf, len, "-");
		return;
	}
	if (u->npids == 1)
		snprintf(buf, len, "%d %s", f->snap.pids[u->pid0],
			 comm_of(f, f->snap.pids[u->pid0]));
	else
		snprintf(buf, len, "%d %s +%zu", f->snap.pids[u->pid0],
			 comm_of(f, f->snap.pids[u->pid0]), u->npids - 1);
}

static void draw_line(struct ui *ui, int row, const struct ft_line *ln, bool selected, int prio)
{
	struct files *f = ui->files;
	struct ft_vals v = line_vals(f, ln);
	struct ui_look look = ui->theme.style[selected ? ST_SELECT : ST_NORMAL];
	char cell[FL_COUNT][600], guides[160], label[512];
	int col = 0, i;

	draw_fmt_pages(cell[FL_CACHED], sizeof(cell[0]), v.cached);
	snprintf(cell[FL_PCT], sizeof(cell[0]), "%.1f", pct(&v) > 100 ? 100.0 : pct(&v));
	draw_fmt_pages(cell[FL_DIRTY], sizeof(cell[0]), v.dirty);
	draw_fmt_pages(cell[FL_WB], sizeof(cell[0]), v.wb);
	draw_fmt_rate(cell[FL_ADDS], sizeof(cell[0]), v.adds);
	draw_fmt_rate(cell[FL_EVICTS], sizeof(cell[0]), v.evicts);
	draw_fmt_pages(cell[FL_EVICTED], sizeof(cell[0]), v.evicted);
	draw_fmt_pages(cell[FL_SIZE], sizeof(cell[0]), (v.size + 4095) / 4096);
	mapped_by(f, ln, cell[FL_MAPPED], sizeof(cell[0]));
	canvas_fill(&ui->canvas, row, 0, ui->cols, ' ', look);
	for (i = 0; i < FL_PATH; i++) {
		const struct fl_coldef *d = &coldefs[i];
		int w = canvas_text_width(cell[i]);

		int width = col_width(ui, i);

		if (d->prio > prio)
			continue;
		if (w > width)
			w = width;
		canvas_text(&ui->canvas, row, i == FL_MAPPED ? col : col + width - w, w,
			    ln->dir && i != FL_MAPPED ? ui->theme.style[selected ? ST_SELECT :
									ST_LABEL] : look,
			    cell[i]);
		col += width + 1;
	}
	if (col >= ui->cols)
		return;
	guides[0] = 0;
	if (f->tree) {
		treeview_guides(guides, sizeof(guides), &f->ft.pt.rows[ln->trow], ui->theme.utf8,
			    (ui->cols - col) / 2);
		filetree_label(&f->ft, &f->snap, ln, label, sizeof(label));
	} else {
		snprintf(label, sizeof(label), "%s", uf_name(&f->snap, &f->snap.v[ln->idx]));
	}
	col += canvas_text(&ui->canvas, row, col, ui->cols - col, look, guides);
	fit_left(cell[FL_PATH], sizeof(cell[0]), label, ui->cols - col, ui->theme.utf8);
	canvas_text(&ui->canvas, row, col, ui->cols - col,
		    ln->dir ? ui->theme.style[selected ? ST_SELECT : ST_LABEL] : look,
		    cell[FL_PATH]);
}

static const char *sort_name(int i)
{
	return coldefs[i].name;
}

/* Why there is nothing to list. */
static const char *empty_why(const struct ui *ui)
{
	const struct files *f = ui->files;

	if (ui->replay)
		return "a recording carries no file table: the Files view is live only";
	if (!f->snap.have)
		return "no file table: --no-files, or this mode watches no page cache";
	if (f->snap.n)
		return "no file matches the filter";
	return f->snap.gen ? "no file in the page cache" : "reading the page cache...";
}

void files_draw(struct ui *ui)
{
	struct files *f = ui->files;
	int visible = list_rows(ui), base = header_rows(ui), prio = shown_prio(ui), k;

	arrange(ui);
	place(f, visible);
	draw_header(ui);
	draw_colheads(ui, base, prio);
	for (k = 0; k < visible && f->top + k < f->nlines; k++)
		draw_line(ui, base + 1 + k, &f->lines[f->top + k], f->top + k == f->sel, prio);
	if (!f->nlines)
		canvas_text(&ui->canvas, base + 1, 1, ui->cols - 1, ui->theme.style[ST_DIM],
			    empty_why(ui));
	if (f->menu)
		draw_menu(ui, base + 1, FL_COUNT, sort_name, f->menu_sel, f->sort);
	draw_status_line(ui, ui->rows - 2);
	draw_footer(ui, &files_keymap);
}

/* --- keys (ui/keys.h) --- */

static void set_sort(struct files *f, int col)
{
	if ((int)f->sort == col) {
		f->desc = !f->desc;
	} else {
		f->sort = col;
		f->desc = coldefs[col].desc;
	}
	f->stale = true;
}

static bool fl_move(struct ui *ui, int key)
{
	struct files *f = ui->files;
	size_t s = f->sel;

	if (!listnav_move(&s, f->nlines, (size_t)list_rows(ui), key))
		return false;
	select_line(f, s);
	return true;
}

/* Enter: a file's heatmap; on a directory, folds or unfolds it. */
static bool fl_open(struct ui *ui, int key)
{
	struct files *f = ui->files;
	const struct ft_line *ln;

	(void)key;
	if (!f->nlines)
		return true;
	ln = &f->lines[f->sel];
	if (ln->dir) {
		filetree_fold(&f->ft, ftree_path(&f->ft, ln->idx), !filetree_folded(&f->ft, ln->idx));
		f->stale = true;
		return true;
	}
	ui->open_file = (struct ui_open_file){ true, f->snap.v[ln->idx].dev,
					       f->snap.v[ln->idx].ino, VIEW_FILES };
	return true;
}

static bool fl_filter(struct ui *ui, int key)
{
	(void)key;
	listnav_filter_open(ui, ui->files->filter);
	return true;
}

static bool fl_clear(struct ui *ui, int key)
{
	(void)key;
	ui->files->filter[0] = 0;
	return true;
}

static bool fl_menu(struct ui *ui, int key)
{
	(void)key;
	ui->files->menu = true;
	ui->files->menu_sel = ui->files->sort;
	return true;
}

static bool fl_column(struct ui *ui, int key)
{
	struct files *f = ui->files;
	int d = key == '<' || key == ',' ? FL_COUNT - 1 : 1;

	f->sort = (f->sort + d) % FL_COUNT;
	f->desc = coldefs[f->sort].desc;
	f->stale = true;
	return true;
}

static bool fl_invert(struct ui *ui, int key)
{
	(void)key;
	ui->files->desc = !ui->files->desc;
	ui->files->stale = true;
	return true;
}

static bool fl_sort_by(struct ui *ui, int key)
{
	int i;

	for (i = 0; i < FL_COUNT; i++)
		if (coldefs[i].key == key) {
			set_sort(ui->files, i);
			return true;
		}
	return false;
}

static bool fl_tree(struct ui *ui, int key)
{
	(void)key;
	ui->files->tree = !ui->files->tree;
	ui->files->stale = true;
	return true;
}

/* - folds the directory under the cursor (a file's: its directory), + unfolds it, * unfolds
 * all (or, when nothing is folded, folds every directory shown). */
static bool fl_fold(struct ui *ui, int key)
{
	struct files *f = ui->files;
	const struct ft_line *ln;
	size_t i, d;

	if (!f->tree || !f->nlines)
		return true;
	f->stale = true;
	if (key == '*') {
		if (f->ft.nfolds) {
			filetree_unfold_all(&f->ft);
			return true;
		}
		for (i = 0; i < f->nlines; i++)
			if (f->lines[i].dir)
				filetree_fold(&f->ft, ftree_path(&f->ft, f->lines[i].idx), true);
		return true;
	}
	ln = &f->lines[f->sel];
	d = ln->dir ? ln->idx : filetree_parent_dir(&f->ft, ln->trow);
	if (d == SIZE_MAX)
		return true;
	if (!ln->dir) {		/* a file: its directory, which takes the cursor */
		f->sel_dir = true;
		snprintf(f->sel_path, sizeof(f->sel_path), "%s", ftree_path(&f->ft, d));
	}
	filetree_fold(&f->ft, ftree_path(&f->ft, d), key == '-');
	return true;
}

static bool fl_procs(struct ui *ui, int key)
{
	(void)key;
	ui->view = VIEW_LIST;
	return true;
}

static const struct ui_key files_keys[] = {
	{ { KEY_UP, KEY_DOWN, KEY_PPAGE, KEY_NPAGE }, "Up Dn PgUp PgDn", "select", NULL, NULL,
	  fl_move },
	{ { KEY_HOME, KEY_END }, "Home End", "first / last", NULL, NULL, fl_move },
	{ { '\n', '\r', KEY_ENTER }, "Enter", "file heatmap, dir fold", "Enter", "Heatmap",
	  fl_open },
	{ { '\t', KEY_BTAB }, "Tab Shift-Tab", "the process list", "Tab", "Procs", fl_procs },
	{ { '/', KEY_F(3), KEY_F(4) }, "/ F3 F4", "filter by path", "/", "Filter", fl_filter },
	{ { 27 }, "Esc", "clear the filter", NULL, NULL, fl_clear },
	{ { KEY_F(6) }, "F6", "sort menu", "F6", "Sort", fl_menu },
	{ { 't', KEY_F(5) }, "t F5", "tree by directory", "t", "Tree", fl_tree },
	{ { '<', '>', ',', '.' }, "< >", "sort column left/right", "<>", "Column", fl_column },
	{ { 'M', 'D', 'W' }, "M D W", "sort: cached dirty wb", NULL, NULL, fl_sort_by },
	{ { 'A', 'E' }, "A E", "sort: adds/s evict/s", NULL, NULL, fl_sort_by },
	{ { 'S', 'R', 'N' }, "S R N", "sort: size cache% path", NULL, NULL, fl_sort_by },
	{ { 'I' }, "I", "invert the order", "I", "Invert", fl_invert },
	{ { '-', '+' }, "- +", "fold / unfold dir", NULL, NULL, fl_fold },
	{ { '*' }, "*", "unfold all / fold all", NULL, NULL, fl_fold },
	{ { KEY_MOUSE }, "wheel", "scroll", NULL, NULL, fl_move },
};

const struct ui_keymap files_keymap = UI_KEYMAP("Files", files_keys);

bool files_key(struct ui *ui, int key)
{
	struct files *f = ui->files;
	int chosen;

	if (listnav_modal_key(ui, key, &f->menu, &f->menu_sel, FL_COUNT, &chosen, f->filter,
			      sizeof(f->filter))) {
		if (chosen >= 0 && chosen != (int)f->sort)
			set_sort(f, chosen);
		return true;
	}
	return keys_dispatch(&files_keymap, ui, key);
}
