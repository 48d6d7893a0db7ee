// SPDX-License-Identifier: GPL-2.0
/*
 * The process list: one row per watched process, like top/htop.
 *
 * Each frame copies every process's numbers under the engine lock (model_totals is a
 * handful of cardinality reads), then filters, sorts and draws without it.  The selection
 * follows its pid, so rows appearing and vanishing around it do not move it; processes
 * that exited stay for the engine's tombstone delay, dimmed and marked "exited".
 *
 * The tree view (t, F5; the default with -p) draws the same rows as a forest by parent
 * (model/proctree.h), siblings in the current sort.  A folded process's row shows its whole
 * subtree's sums; Tab in the heatmap still walks every process, folded or not.
 */
#include <curses.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "lib/array.h"
#include "model/share_figs.h"
#include "model/proctree.h"
#include "ui/ui_draw.h"
#include "ui/ui_fcache.h"
#include "ui/ui_listnav.h"
#include "ui/ui_memsum.h"
#include "ui/ui_model.h"
#include "ui/ui_proclist.h"
#include "ui/treeview.h"

enum pl_col {
	COL_PID,
	COL_USER,
	COL_COMM,
	COL_MAPPED,
	COL_RES,
	COL_SWAP,
	COL_RESPCT,
	COL_FAULTS,
	COL_USS,	/* --sharing: shown once a sharing pass has read some process */
	COL_PSS,
	COL_COUNT,
};

struct pl_coldef {
	const char *title;
	const char *name;		/* in the sort menu */
	int width;
	bool right;			/* right-aligned (numbers) */
	bool desc;			/* sorts biggest first by default */
	int key;			/* direct sort key, 0 if none */
};

static const struct pl_coldef coldefs[COL_COUNT] = {
	[COL_PID] = { "PID", "pid", 7, true, false, 'P' },
	[COL_USER] = { "USER", "user", 8, false, false, 'U' },
	[COL_COMM] = { "COMMAND", "command (name)", 15, false, false, 'N' },
	[COL_MAPPED] = { "MAPPED", "mapped", 7, true, true, 'V' },
	[COL_RES] = { "RES", "resident", 7, true, true, 'M' },
	[COL_USS] = { "USS", "unique (USS)", 7, true, true, 'X' },
	[COL_PSS] = { "PSS", "proportional (PSS)", 7, true, true, 'Y' },
	[COL_SWAP] = { "SWAP", "swapped", 7, true, true, 'S' },
	[COL_RESPCT] = { "RES%", "resident %", 5, true, true, 'R' },
	[COL_FAULTS] = { "FLT/s", "faults/s", 7, true, true, 'F' },
};

struct pl_row {
	pid_t pid, ppid;
	uint64_t serial;		/* struct proc's: tells a reused pid */
	uid_t uid;
	char comm[16];
	uint64_t mapped, res, swp, untr;
	uint64_t uss, pss;		/* bytes, when sharing */
	bool sharing;			/* a sharing pass has read it */
	double rate;
	bool exited;
	size_t folded_kids;		/* tree view, folded: the sums include this many */
};

struct pl_user {
	uid_t uid;
	char name[32];
};

struct proclist {
	struct pl_row *rows;		/* the last snapshot */
	size_t n, cap;
	size_t *order;			/* rows shown: after the filter, sorted (or in tree order) */
	size_t norder;
	size_t *all;			/* every row after the filter in order, folded ones too */
	size_t nall;
	/* Tree view: the forest of the filtered rows, and each shown row's tree row. */
	bool tree;
	struct ptree pt;
	struct pid_set folds;		/* processes whose subtree the user folded */
	pid_t *tpid, *tppid;		/* the forest's input: items are order[] before the build */
	size_t *items, *trow;
	enum pl_col sort;
	bool desc;
	pid_t sel_pid;
	size_t sel, top;
	char filter[64];		/* accepted filter text */
	bool menu;			/* the F6 sort menu is open */
	int menu_sel;
	size_t nexited;
	uint64_t mapped, res, swp, untr;
	bool sharing;			/* some row has USS and PSS: their columns show */
	struct pl_user users[64];
	size_t nusers;
	struct uf_mem mem;		/* the machine's memory summary (header) */
};

struct proclist *proclist_new(bool tree)
{
	struct proclist *l = calloc(1, sizeof(*l));

	if (l) {
		l->sort = COL_RES;
		l->desc = true;
		l->tree = tree;
	}
	return l;
}

void proclist_free(struct proclist *l)
{
	if (!l)
		return;
	free(l->rows);
	free(l->order);
	free(l->all);
	free(l->tpid);
	free(l->tppid);
	free(l->items);
	free(l->trow);
	proctree_free(&l->pt);
	pid_set_free(&l->folds);
	free(l);
}

static bool still_running(pid_t pid, uint64_t serial, void *ctx)
{
	const struct proclist *l = ctx;

	for (size_t i = 0; i < l->n; i++)
		if (l->rows[i].pid == pid && pid_set_same(serial, l->rows[i].serial))
			return !l->rows[i].exited;
	return false;
}

void proclist_update(struct ui *ui)
{
	struct proclist *l = ui->list;
	struct proc **procs;
	size_t n, i;

	if (ui->paused && l->n)
		return;
	ui_fcache_memory(ui, &l->mem);
	procs = ui_model_procs(ui, &n);
	if (n > l->cap) {
		/* | not ||: each array that can grow does, the next try needs fewer */
		int err = array_resize(l->rows, n) | array_resize(l->order, n) |
			  array_resize(l->all, n) | array_resize(l->items, n) |
			  array_resize(l->trow, n) | array_resize(l->tpid, n) |
			  array_resize(l->tppid, n);

		if (err)
			return;
		l->cap = n;
	}
	l->n = 0;
	l->nexited = 0;
	l->sharing = false;
	l->mapped = l->res = l->swp = l->untr = 0;
	for (i = 0; i < n; i++) {
		const struct proc *p = procs[i];
		struct pl_row *r = &l->rows[l->n];
		uint64_t c[PS_COUNT];

		if (!p->ready)
			continue;
		model_totals(p, c);
		r->pid = p->pid;
		r->serial = p->serial;
		r->ppid = p->ppid;
		r->uid = p->uid;
		memcpy(r->comm, p->comm, sizeof(r->comm));
		r->comm[sizeof(r->comm) - 1] = 0;
		r->mapped = p->mapped_pages;
		r->res = c[PS_RESIDENT];
		r->swp = c[PS_SWAPPED];
		r->untr = c[PS_UNTRACKED];
		r->sharing = p->share != NULL;
		r->uss = r->pss = 0;
		if (p->share) {
			struct share_figs f;

			share_totals(p, &f);
			r->uss = f.uss;
			r->pss = f.pss;
			l->sharing = true;
		}
		r->rate = p->exited ? 0 : p->fault_rate;
		r->exited = p->exited;
		r->folded_kids = 0;
		l->nexited += p->exited;
		if (!p->exited) {
			l->mapped += r->mapped;
			l->res += r->res;
			l->swp += r->swp;
			l->untr += r->untr;
		}
		l->n++;
	}
	/* A fold is the process's, not its pid's: once the process has exited (or is no
	 * longer listed), a new process given the same pid must not start folded - even when
	 * the exit went unseen here, the view paused (the serial tells them apart). */
	pid_set_retain(&l->folds, still_running, l);
}

static const char *user_name(struct proclist *l, uid_t uid)
{
	struct passwd pw, *res = NULL;
	char buf[1024];
	struct pl_user *u;
	size_t i;

	for (i = 0; i < l->nusers; i++)
		if (l->users[i].uid == uid)
			return l->users[i].name;
	u = &l->users[l->nusers < 64 ? l->nusers++ : 63];
	u->uid = uid;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		snprintf(u->name, sizeof(u->name), "%s", pw.pw_name);
	else
		snprintf(u->name, sizeof(u->name), "%u", (unsigned)uid);
	return u->name;
}

static const char *filter_text(const struct ui *ui)
{
	return ui->prompt.kind == PROMPT_FILTER ? ui->prompt.text : ui->list->filter;
}

static bool matches(struct proclist *l, const struct pl_row *r, const char *f)
{
	char pid[16];

	if (!*f)
		return true;
	snprintf(pid, sizeof(pid), "%d", r->pid);
	return strcasestr(r->comm, f) || strstr(pid, f) || strcasestr(user_name(l, r->uid), f);
}

static double respct(const struct pl_row *r)
{
	return r->mapped ? 100.0 * r->res / r->mapped : 0;
}

static struct proclist *sort_list;	/* qsort has no context argument; UI thread only */

static int cmp_num(double a, double b)
{
	return (a > b) - (a < b);
}

static int cmp_row(struct proclist *l, const struct pl_row *a, const struct pl_row *b)
{
	int c = 0;

	switch (l->sort) {
	case COL_PID:
		break;
	case COL_USER:
		c = strcmp(user_name(l, a->uid), user_name(l, b->uid));
		break;
	case COL_COMM:
		c = strcasecmp(a->comm, b->comm);
		break;
	case COL_MAPPED:
		c = cmp_num(a->mapped, b->mapped);
		break;
	case COL_RES:
		c = cmp_num(a->res, b->res);
		break;
	case COL_SWAP:
		c = cmp_num(a->swp, b->swp);
		break;
	case COL_USS:
		c = cmp_num(a->uss, b->uss);
		break;
	case COL_PSS:
		c = cmp_num(a->pss, b->pss);
		break;
	case COL_RESPCT:
		c = cmp_num(respct(a), respct(b));
		break;
	case COL_FAULTS:
		c = cmp_num(a->rate, b->rate);
		break;
	default:
		break;
	}
	if (!c)
		c = cmp_num(a->pid, b->pid);	/* stable: ties keep pid order */
	return l->desc ? -c : c;
}

static int cmp_rows(const void *pa, const void *pb)
{
	struct proclist *l = sort_list;

	return cmp_row(l, &l->rows[*(const size_t *)pa], &l->rows[*(const size_t *)pb]);
}

/* Siblings in the tree view: items are indexes into l->items. */
static int cmp_items(size_t a, size_t b, void *ctx)
{
	struct proclist *l = ctx;

	return cmp_row(l, &l->rows[l->items[a]], &l->rows[l->items[b]]);
}

static bool is_folded(pid_t pid, void *ctx)
{
	return pid_set_has(&((struct proclist *)ctx)->folds, pid);
}

/* The filtered rows (l->order[0..norder)) as a forest: l->all in tree order, l->order the
 * rows not inside a folded subtree, l->trow their tree rows.  Returns the tree row of
 * l->sel_pid (or l->pt.n if it is not there). */
static size_t arrange_tree(struct proclist *l)
{
	struct ptree_in in = { .pid = l->tpid, .ppid = l->tppid, .n = l->norder,
			       .cmp = cmp_items, .folded = is_folded, .ctx = l };
	size_t i, sel = (size_t)-1;

	for (i = 0; i < l->norder; i++) {
		l->items[i] = l->order[i];
		l->tpid[i] = l->rows[l->order[i]].pid;
		l->tppid[i] = l->rows[l->order[i]].ppid;
	}
	if (proctree_build(&l->pt, &in)) {
		l->norder = l->nall = 0;
		return 0;
	}
	l->nall = l->norder = 0;
	for (i = 0; i < l->pt.n; i++) {
		const struct ptree_row *r = &l->pt.rows[i];
		size_t row = l->items[r->item];

		l->all[l->nall++] = row;
		if (l->rows[row].pid == l->sel_pid)
			sel = i;
		if (!r->hidden) {
			l->trow[l->norder] = i;
			l->order[l->norder++] = row;
		}
	}
	return sel == (size_t)-1 ? l->pt.n : sel;
}

/* The position in l->order of tree row k's nearest shown ancestor (k itself if shown). */
static size_t shown_position(const struct proclist *l, size_t k)
{
	k = proctree_shown_ancestor(&l->pt, k);
	return array_lower_bound(l->trow, l->norder, k);	/* trow is increasing */
}

/* Filters, sorts and re-finds the selection. */
static void arrange(struct ui *ui, int visible)
{
	struct proclist *l = ui->list;
	const char *f = filter_text(ui);
	size_t i;
	bool found = false;

	l->norder = 0;
	for (i = 0; i < l->n; i++)
		if (matches(l, &l->rows[i], f))
			l->order[l->norder++] = i;
	if (l->tree) {
		size_t k = arrange_tree(l);

		if (k < l->pt.n) {
			/* Inside a folded subtree (Tab went there): the folded ancestor. */
			l->sel = shown_position(l, k);
			found = l->sel < l->norder;
		}
	} else {
		sort_list = l;
		qsort(l->order, l->norder, sizeof(*l->order), cmp_rows);
		if (l->norder)	/* no arrays yet before the first process */
			memcpy(l->all, l->order, l->norder * sizeof(*l->all));
		l->nall = l->norder;
		for (i = 0; i < l->norder; i++) {
			if (l->rows[l->order[i]].pid == l->sel_pid) {
				l->sel = i;
				found = true;
				break;
			}
		}
	}
	if (!found) {
		/* The selected process vanished (or is filtered out): keep the position. */
		if (l->sel >= l->norder)
			l->sel = l->norder ? l->norder - 1 : 0;
		l->sel_pid = l->norder ? l->rows[l->order[l->sel]].pid : 0;
	}
	if (visible < 1)
		visible = 1;
	if (l->sel < l->top)
		l->top = l->sel;
	if (l->sel >= l->top + visible)
		l->top = l->sel - visible + 1;
	if (l->top + visible > l->norder)
		l->top = l->norder > (size_t)visible ? l->norder - visible : 0;
}

/* The tree view's command column takes what a wide terminal has to spare for the guides. */
static int col_width(const struct ui *ui, int col)
{
	int extra = ui->cols - 100;

	if ((col == COL_USS || col == COL_PSS) && !ui->list->sharing)
		return 0;	/* no --sharing: the list as it always was */
	if (col != COL_COMM || !ui->list->tree || extra <= 0)
		return coldefs[col].width;
	return coldefs[col].width + (extra < 16 ? extra : 16);
}

/* The header's rows: the title, two of numbers, and the memory summary's two when known. */
static int header_rows(const struct ui *ui)
{
	return UI_HEADER_ROWS + memsum_rows(ui, &ui->list->mem);
}

static int list_rows(const struct ui *ui)
{
	return ui->rows - header_rows(ui) - 1 - 2;	/* column header; status, footer */
}

static void draw_bar(struct ui *ui, int row, int col, int width, double frac,
		     struct ui_look look, struct ui_look fill)
{
	const struct ui_theme *t = &ui->theme;
	int inner = width - 2, eighths, k;

	if (inner < 1)
		return;
	if (frac < 0)
		frac = 0;
	if (frac > 1)
		frac = 1;
	eighths = (int)(frac * inner * 8 + 0.5);
	if (!t->bar_eighths)
		eighths = (int)(frac * inner + 0.5) * 8;
	canvas_put(&ui->canvas, row, col, '[', look);
	for (k = 0; k < inner; k++) {
		int e = eighths - 8 * k;

		if (e >= 8)
			canvas_put(&ui->canvas, row, col + 1 + k, t->bar_full, fill);
		else if (e > 0)
			canvas_put(&ui->canvas, row, col + 1 + k, t->bar_eighths[e - 1], fill);
		else
			canvas_put(&ui->canvas, row, col + 1 + k, ' ', look);
	}
	canvas_put(&ui->canvas, row, col + 1 + inner, ']', look);
}

static void draw_header(struct ui *ui)
{
	struct proclist *l = ui->list;
	char a[32], b[64];
	int col = 0;

	draw_title(ui, ui->o->npids ? "watched processes" : "all processes",
		   ui->paused ? "PAUSED" : ui_model_stale(ui));
	snprintf(a, sizeof(a), "%zu", l->n - l->nexited);
	if (l->nexited)
		snprintf(a + strlen(a), sizeof(a) - strlen(a), " (+%zu exited)", l->nexited);
	col = draw_field(ui, 1, col, "processes", a, ST_VALUE);
	draw_fmt_pages(a, sizeof(a), l->mapped);
	col = draw_field(ui, 1, col, "mapped", a, ST_VALUE);
	draw_fmt_pages(a, sizeof(a), l->res);
	col = draw_field(ui, 1, col, "resident", a, ST_VALUE);
	draw_fmt_pages(a, sizeof(a), l->swp);
	col = draw_field(ui, 1, col, "swapped", a, ST_VALUE);
	draw_fmt_pages(a, sizeof(a), l->untr);
	draw_field(ui, 1, col, "untracked", a, ST_VALUE);

	col = draw_engine_stats(ui, 2, 0);
	draw_fmt_pages(a, sizeof(a), (ui->engine_bytes + PAGE_SIZE_4K - 1) / PAGE_SIZE_4K);
	col = draw_field(ui, 2, col, "model", a, ST_VALUE);
	snprintf(b, sizeof(b), "%s %s", coldefs[l->sort].name, l->desc ? "desc" : "asc");
	col = draw_field(ui, 2, col, "sort", b, ST_VALUE);
	if (l->tree)
		col = draw_field(ui, 2, col, "view", "tree", ST_VALUE);
	if (*filter_text(ui))
		draw_field(ui, 2, col, "filter", filter_text(ui), ST_VALUE);
	memsum_draw(ui, UI_HEADER_ROWS, &l->mem);
}

static void draw_colheads(struct ui *ui, int row)
{
	struct proclist *l = ui->list;
	int col = 0, i;

	canvas_fill(&ui->canvas, row, 0, ui->cols, ' ', ui->theme.style[ST_COLHEAD]);
	for (i = 0; i < COL_COUNT; i++) {
		const struct pl_coldef *d = &coldefs[i];
		bool s = (int)l->sort == i;
		struct ui_look look = ui->theme.style[s ? ST_COLHEAD_SORT : ST_COLHEAD];
		int w = canvas_text_width(d->title), width = col_width(ui, i);

		if (!width)
			continue;
		canvas_text(&ui->canvas, row, d->right ? col + width - w : col, w, look,
			    d->title);
		if (s)
			canvas_put(&ui->canvas, row, d->right ? col + width - w - 1 : col + w,
				   l->desc ? ui->theme.arrow_down : ui->theme.arrow_up, look);
		col += width + 1;
	}
	canvas_text(&ui->canvas, row, col, ui->cols - col, ui->theme.style[ST_COLHEAD],
		    "RESIDENCY");
}

/* A folded process's row: its numbers summed over its subtree (exited ones left out). */
static struct pl_row subtree_sums(const struct proclist *l, size_t k)
{
	const struct ptree_row *t = &l->pt.rows[k];
	struct pl_row sum = l->rows[l->all[k]];
	size_t j;

	sum.folded_kids = t->end - k - 1;
	for (j = k + 1; j < t->end; j++) {
		const struct pl_row *r = &l->rows[l->all[j]];

		if (r->exited)
			continue;
		sum.mapped += r->mapped;
		sum.res += r->res;
		sum.swp += r->swp;
		sum.untr += r->untr;
		sum.uss += r->uss;
		sum.pss += r->pss;
		sum.rate += r->rate;
	}
	return sum;
}

/* tr: the row's place in the tree view, or NULL in the flat list. */
static void draw_row(struct ui *ui, int row, const struct pl_row *r, bool selected,
		     const struct ptree_row *tr)
{
	struct proclist *l = ui->list;
	struct ui_look look = ui->theme.style[selected ? ST_SELECT : r->exited ? ST_EXITED :
					      ST_NORMAL];
	char cell[COL_COUNT][200], guides[160];
	int col = 0, i;

	snprintf(cell[COL_PID], sizeof(cell[0]), "%d", r->pid);
	snprintf(cell[COL_USER], sizeof(cell[0]), "%s", user_name(l, r->uid));
	guides[0] = 0;
	if (tr)	/* at least 6 columns of the name stay visible */
		treeview_guides(guides, sizeof(guides), tr, ui->theme.utf8, col_width(ui, COL_COMM) - 6);
	snprintf(cell[COL_COMM], sizeof(cell[0]), "%s%s", guides, r->comm);
	draw_fmt_pages(cell[COL_MAPPED], sizeof(cell[0]), r->mapped);
	draw_fmt_pages(cell[COL_RES], sizeof(cell[0]), r->res);
	draw_fmt_pages(cell[COL_SWAP], sizeof(cell[0]), r->swp);
	draw_fmt_pages(cell[COL_USS], sizeof(cell[0]), r->uss / PAGE_SIZE_4K);
	draw_fmt_pages(cell[COL_PSS], sizeof(cell[0]), r->pss / PAGE_SIZE_4K);
	if (!r->sharing)
		snprintf(cell[COL_USS], sizeof(cell[0]), "-");	/* not read yet */
	if (!r->sharing)
		snprintf(cell[COL_PSS], sizeof(cell[0]), "-");
	snprintf(cell[COL_RESPCT], sizeof(cell[0]), "%.1f", respct(r));
	draw_fmt_rate(cell[COL_FAULTS], sizeof(cell[0]), r->rate);
	canvas_fill(&ui->canvas, row, 0, ui->cols, ' ', look);
	for (i = 0; i < COL_COUNT; i++) {
		const struct pl_coldef *d = &coldefs[i];
		int w = canvas_text_width(cell[i]), width = col_width(ui, i);

		if (!width)
			continue;
		if (w > width)
			w = width;
		canvas_text(&ui->canvas, row, d->right ? col + width - w : col, w, look, cell[i]);
		col += width + 1;
	}
	if (col >= ui->cols)
		return;
	if (r->exited) {
		canvas_text(&ui->canvas, row, col, ui->cols - col, look, "exited");
		return;
	}
	draw_bar(ui, row, col, ui->cols - col < 42 ? ui->cols - col : 42,
		 r->mapped ? (double)r->res / r->mapped : 0, look,
		 selected ? look : ui->theme.style[ST_BAR]);
	if (r->folded_kids && ui->cols - col > 43)
		canvas_printf(&ui->canvas, row, col + 43, ui->cols - col - 43, look,
			      "+%zu folded", r->folded_kids);
}

static const char *sort_name(int i)
{
	return coldefs[i].name;
}

void proclist_draw(struct ui *ui)
{
	struct proclist *l = ui->list;
	int visible = list_rows(ui), base = header_rows(ui), k;

	arrange(ui, visible);
	draw_header(ui);
	draw_colheads(ui, base);
	for (k = 0; k < visible && l->top + k < l->norder; k++) {
		size_t i = l->top + k;
		const struct ptree_row *tr = l->tree ? &l->pt.rows[l->trow[i]] : NULL;
		struct pl_row r = tr && tr->folded ? subtree_sums(l, l->trow[i]) :
				  l->rows[l->order[i]];

		draw_row(ui, base + 1 + k, &r, i == l->sel, tr);
	}
	if (!l->norder)
		canvas_text(&ui->canvas, base + 1, 1, ui->cols - 1,
			    ui->theme.style[ST_DIM], l->n ? "no process matches the filter" :
			    "no process yet");
	if (l->menu)
		draw_menu(ui, base + 1, COL_COUNT, sort_name, l->menu_sel, l->sort);
	draw_status_line(ui, ui->rows - 2);
	draw_footer(ui, &proclist_keymap);
}

static void set_sort(struct proclist *l, int col)
{
	if ((int)l->sort == col) {
		l->desc = !l->desc;
		return;
	}
	l->sort = col;
	l->desc = coldefs[col].desc;
}

/* --- keys (ui/keys.h) --- */

static bool pl_move(struct ui *ui, int key)
{
	struct proclist *l = ui->list;

	if (!listnav_move(&l->sel, l->norder, (size_t)list_rows(ui), key))
		return false;
	if (l->norder)
		l->sel_pid = l->rows[l->order[l->sel]].pid;
	return true;
}

static bool pl_open(struct ui *ui, int key)
{
	struct proclist *l = ui->list;

	(void)key;
	if (l->norder)
		ui->open_pid = l->rows[l->order[l->sel]].pid;
	return true;
}

static bool pl_filter(struct ui *ui, int key)
{
	(void)key;
	listnav_filter_open(ui, ui->list->filter);
	return true;
}

static bool pl_clear(struct ui *ui, int key)
{
	(void)key;
	ui->list->filter[0] = 0;
	return true;
}

static bool pl_menu(struct ui *ui, int key)
{
	(void)key;
	ui->list->menu = true;
	ui->list->menu_sel = ui->list->sort;
	return true;
}

static bool pl_column(struct ui *ui, int key)
{
	struct proclist *l = ui->list;
	int d = key == '<' || key == ',' ? COL_COUNT - 1 : 1;

	l->sort = (l->sort + d) % COL_COUNT;
	l->desc = coldefs[l->sort].desc;
	return true;
}

static bool pl_invert(struct ui *ui, int key)
{
	(void)key;
	ui->list->desc = !ui->list->desc;
	return true;
}

/* A column's own key (coldefs): sort by it, again inverts. */
static bool pl_sort_by(struct ui *ui, int key)
{
	int i;

	for (i = 0; i < COL_COUNT; i++)
		if (coldefs[i].key == key) {
			set_sort(ui->list, i);
			return true;
		}
	return false;
}

/* - folds the subtree under the cursor, + unfolds it, * unfolds all (or, when nothing is
 * folded, folds every process shown that has children). */
static bool tree_key(struct proclist *l, int key)
{
	size_t i;

	if (!l->tree || !l->norder)
		return true;
	if (key == '*') {
		if (l->folds.n) {
			l->folds.n = 0;
			return true;
		}
		for (i = 0; i < l->norder; i++)
			if (l->pt.rows[l->trow[i]].end > l->trow[i] + 1)
				pid_set_add(&l->folds, l->rows[l->order[i]].pid,
					    l->rows[l->order[i]].serial);
		return true;
	}
	l->sel_pid = l->rows[l->order[l->sel]].pid;
	if (key == '+')
		pid_set_del(&l->folds, l->sel_pid);
	else if (l->pt.rows[l->trow[l->sel]].end > l->trow[l->sel] + 1)
		pid_set_add(&l->folds, l->sel_pid, l->rows[l->order[l->sel]].serial);
	return true;
}

static bool pl_tree(struct ui *ui, int key)
{
	(void)key;
	ui->list->tree = !ui->list->tree;
	return true;
}

static bool pl_fold(struct ui *ui, int key)
{
	return tree_key(ui->list, key);
}

/* Tab: the Files view (htop's Tab walks its screens). */
static bool pl_files(struct ui *ui, int key)
{
	(void)key;
	ui->view = VIEW_FILES;
	return true;
}

static const struct ui_key proclist_keys[] = {
	{ { KEY_UP, KEY_DOWN, KEY_PPAGE, KEY_NPAGE }, "Up Dn PgUp PgDn", "select", NULL, NULL,
	  pl_move },
	{ { KEY_HOME, KEY_END }, "Home End", "first / last", NULL, NULL, pl_move },
	{ { '\n', '\r', KEY_ENTER }, "Enter", "heatmap of the process", "Enter", "Heatmap",
	  pl_open },
	{ { '\t', KEY_BTAB }, "Tab Shift-Tab", "the Files view", "Tab", "Files", pl_files },
	{ { '/', KEY_F(3), KEY_F(4) }, "/ F3 F4", "filter name/pid/user", "/", "Filter",
	  pl_filter },
	{ { 27 }, "Esc", "clear the filter", NULL, NULL, pl_clear },
	{ { KEY_F(6) }, "F6", "sort menu", "F6", "Sort", pl_menu },
	{ { 't', KEY_F(5) }, "t F5", "tree view", "t", "Tree", pl_tree },
	{ { '<', '>', ',', '.' }, "< >", "sort column left/right", "<>", "Column", pl_column },
	{ { 'M', 'P', 'F' }, "M P F", "sort: res pid faults/s", NULL, NULL, pl_sort_by },
	{ { 'N', 'S', 'V' }, "N S V", "sort: name swap mapped", NULL, NULL, pl_sort_by },
	{ { 'R', 'U' }, "R U", "sort: res% user", NULL, NULL, pl_sort_by },
	{ { 'X', 'Y' }, "X Y", "sort: uss pss (--sharing)", NULL, NULL, pl_sort_by },
	{ { 'I' }, "I", "invert the order", "I", "Invert", pl_invert },
	{ { '-', '+' }, "- +", "fold / unfold subtree", NULL, NULL, pl_fold },
	{ { '*' }, "*", "unfold all / fold all", NULL, NULL, pl_fold },
	{ { KEY_MOUSE }, "wheel", "scroll", NULL, NULL, pl_move },
};

const struct ui_keymap proclist_keymap = UI_KEYMAP("Process list", proclist_keys);

bool proclist_key(struct ui *ui, int key)
{
	struct proclist *l = ui->list;
	int chosen;

	if (listnav_modal_key(ui, key, &l->menu, &l->menu_sel, COL_COUNT, &chosen, l->filter,
			      sizeof(l->filter))) {
		if (chosen >= 0 && chosen != (int)l->sort)
			set_sort(l, chosen);
		return true;
	}
	return keys_dispatch(&proclist_keymap, ui, key);
}

pid_t proclist_next(struct ui *ui, pid_t pid, int dir)
{
	struct proclist *l = ui->list;
	size_t i;

	ui_model_lock(ui);
	proclist_update(ui);
	ui_model_unlock(ui);
	arrange(ui, list_rows(ui));
	/* Every process in the list's order, those in folded subtrees too. */
	if (!l->nall)
		return 0;
	for (i = 0; i < l->nall; i++) {
		if (l->rows[l->all[i]].pid == pid) {
			i = (i + l->nall + dir) % l->nall;
			l->sel_pid = l->rows[l->all[i]].pid;
			return l->sel_pid;
		}
	}
	return l->rows[l->all[0]].pid;
}
