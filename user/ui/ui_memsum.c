// SPDX-License-Identifier: GPL-2.0
/*
 * The memory summary of the list views' header (ui_memsum.h): the machine's RAM as one bar
 * of segments that add up to MemTotal, and a legend naming each with its size: under it
 * (with each one's share from 120 columns on), or beside it from MEMSUM_ONE_ROW columns on.
 *
 *   mem [█████▓▓▓▓▓▓▓▓▒▒▒░·····················] used 3.1G/7.8G  avail 4.9G  swap 0/2.0G
 *   █anon 312M  █shmem 256M  █cache 1.9G  █kernel 180M  ·free 4.7G  accounted 2.4G
 *
 * The segments are disjoint so that they sum to the total: anonymous pages, shmem, the rest
 * of the page cache ("cache": /proc/meminfo's Cached + Buffers - Shmem), the kernel's own
 * (slab, page tables, stacks, vmalloc, per-cpu), what /proc/meminfo does not break down
 * ("other": hugetlb pages, driver allocations, ...) and free.  With colours every segment
 * is a solid bar in its colour (htop's meters); without, each has its own glyph.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "ui/ui_draw.h"
#include "ui/ui_memsum.h"

enum seg { SEG_ANON, SEG_SHMEM, SEG_CACHE, SEG_KERNEL, SEG_OTHER, SEG_FREE, SEG_COUNT };

static const struct {
	const char *name;
	enum ui_style style;
	uint32_t mono_utf8, mono_ascii;		/* the glyph without colours */
} segs[SEG_COUNT] = {
	[SEG_ANON] = { "anon", ST_MEM_ANON, 0x2588, '#' },
	[SEG_SHMEM] = { "shmem", ST_MEM_SHMEM, 0x2593, '%' },
	[SEG_CACHE] = { "cache", ST_MEM_CACHE, 0x2592, '=' },
	[SEG_KERNEL] = { "kernel", ST_MEM_KERNEL, 0x2591, 'k' },
	[SEG_OTHER] = { "other", ST_MEM_OTHER, '?', '?' },
	[SEG_FREE] = { "free", ST_DIM, 0x00b7, '.' },
};

static uint64_t sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* The segments' bytes; they sum to m->total. */
static void segments(const struct uf_mem *m, uint64_t out[SEG_COUNT])
{
	uint64_t left = m->total;

	out[SEG_ANON] = m->anon < left ? m->anon : left;
	left -= out[SEG_ANON];
	out[SEG_SHMEM] = m->shmem < left ? m->shmem : left;
	left -= out[SEG_SHMEM];
	out[SEG_CACHE] = sub(m->file, m->shmem) < left ? sub(m->file, m->shmem) : left;
	left -= out[SEG_CACHE];
	out[SEG_KERNEL] = m->kernel < left ? m->kernel : left;
	left -= out[SEG_KERNEL];
	out[SEG_FREE] = m->free < left ? m->free : left;
	out[SEG_OTHER] = left - out[SEG_FREE];
}

static uint32_t glyph(const struct ui *ui, enum seg s)
{
	if (s == SEG_FREE)
		return ui->theme.utf8 ? 0x00b7 : '.';
	if (ui->theme.colors)
		return ui->theme.utf8 ? 0x2588 : '|';
	return ui->theme.utf8 ? segs[s].mono_utf8 : segs[s].mono_ascii;
}

static void fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	draw_fmt_pages(buf, len, (bytes + 4095) / 4096);
}

/* The bar: each segment's share of width cells, rounded so that the cells add up. */
static void draw_bar(struct ui *ui, int row, int col, int width, const uint64_t seg[SEG_COUNT],
		     uint64_t total)
{
	uint64_t acc = 0;
	int s, c = 0, end;

	canvas_text(&ui->canvas, row, col, 1, ui->theme.style[ST_NORMAL], "[");
	for (s = 0; s < SEG_COUNT; s++) {
		acc += seg[s];
		end = total ? (int)((acc * (uint64_t)width + total / 2) / total) : 0;
		if (s == SEG_COUNT - 1)
			end = width;
		for (; c < end; c++)
			canvas_put(&ui->canvas, row, col + 1 + c, glyph(ui, s),
				   ui->theme.style[segs[s].style]);
	}
	canvas_text(&ui->canvas, row, col + 1 + width, 1, ui->theme.style[ST_NORMAL], "]");
}

/* "Xname value  " with X the segment's glyph in its colour; returns the next column. */
static int legend_item(struct ui *ui, int row, int col, enum seg s, uint64_t bytes,
		       uint64_t total, bool pct)
{
	char v[48];

	if (col >= ui->cols)
		return col;
	fmt_bytes(v, sizeof(v), bytes);
	if (pct && total && bytes && bytes * 100 < total)
		snprintf(v + strlen(v), sizeof(v) - strlen(v), " <1%%");
	else if (pct && total)
		snprintf(v + strlen(v), sizeof(v) - strlen(v), " %.0f%%", 100.0 * bytes / total);
	canvas_put(&ui->canvas, row, col, glyph(ui, s), ui->theme.style[segs[s].style]);
	return draw_field(ui, row, col + 1, segs[s].name, v, ST_VALUE);
}

int memsum_rows(const struct ui *ui, const struct uf_mem *m)
{
	if (!m->valid || !m->total)
		return 0;
	return ui->cols >= MEMSUM_ONE_ROW ? 1 : 2;
}

/* The legend's columns: "Xname value  " per segment shown, then "accounted value". */
static int legend_width(const struct uf_mem *m, const uint64_t seg[SEG_COUNT], bool pct,
			bool other)
{
	char v[32];
	int w = 0, s;

	for (s = 0; s < SEG_COUNT; s++) {
		if (s == SEG_OTHER && !other)
			continue;
		fmt_bytes(v, sizeof(v), seg[s]);
		w += 1 + (int)strlen(segs[s].name) + 1 + (int)strlen(v) + (pct ? 4 : 0) + 2;
	}
	fmt_bytes(v, sizeof(v), m->accounted);
	return w + (int)strlen("accounted ") + (int)strlen(v);
}

/* The legend from col on row; pct: each segment's share too. */
static void legend(struct ui *ui, int row, int col, const struct uf_mem *m,
		   const uint64_t seg[SEG_COUNT], bool pct, bool long_accounted)
{
	char a[32], buf[160];
	/* "other" when it is worth a mention and there is room for it (the bar shows it). */
	bool other = (seg[SEG_OTHER] * 100 >= m->total || pct) &&
		     col + legend_width(m, seg, pct, true) + (long_accounted ? 5 : 0) <= ui->cols;
	int s;

	for (s = 0; s < SEG_COUNT; s++)
		if (s != SEG_OTHER || other)
			col = legend_item(ui, row, col, s, seg[s], m->total, pct);
	fmt_bytes(a, sizeof(a), m->accounted);
	if (long_accounted) {	/* the share of anon + page cache it stands for */
		snprintf(buf, sizeof(buf), "%s %.0f%%", a,
			 m->anon + m->file ? 100.0 * m->accounted / (m->anon + m->file) : 0.0);
		draw_field(ui, row, col, "accounted", buf, ST_VALUE);
	} else {
		draw_field(ui, row, col, "accounted", a, ST_VALUE);
	}
}

int memsum_draw(struct ui *ui, int row, const struct uf_mem *m)
{
	uint64_t seg[SEG_COUNT];
	char a[32], b[32], used[80], avail[32], swap[80];
	int rows = memsum_rows(ui, m), col, width, tail;

	if (!rows)
		return 0;
	segments(m, seg);
	/* The bar, then "] used A/B  avail C  swap D/E"; on one row, the legend after them. */
	fmt_bytes(a, sizeof(a), m->total - seg[SEG_FREE]);
	fmt_bytes(b, sizeof(b), m->total);
	snprintf(used, sizeof(used), "%s/%s", a, b);
	fmt_bytes(avail, sizeof(avail), m->available);
	fmt_bytes(a, sizeof(a), m->swap_used);
	fmt_bytes(b, sizeof(b), m->swap_total);
	snprintf(swap, sizeof(swap), "%s/%s", a, b);
	if (!m->swap_total)
		snprintf(swap, sizeof(swap), "none");
	tail = (int)(strlen("used ") + strlen(used) + strlen("  avail ") + strlen(avail) +
		     strlen("  swap ") + strlen(swap) + 2);
	width = ui->cols - 4 - 2 - 1 - tail - (rows == 1 ? legend_width(m, seg, false, false) : 0);
	if (width > ui->cols / 2)
		width = ui->cols / 2;
	if (width < 10)
		width = 10;
	col = canvas_text(&ui->canvas, row, 0, ui->cols, ui->theme.style[ST_NORMAL], "mem ");
	draw_bar(ui, row, col, width, seg, m->total);
	col += width + 3;
	col = draw_field(ui, row, col, "used", used, ST_VALUE);
	col = draw_field(ui, row, col, "avail", avail, ST_VALUE);
	col = draw_field(ui, row, col, "swap", swap, ST_VALUE);
	if (rows == 1)
		legend(ui, row, col, m, seg, false, false);
	else
		legend(ui, row + 1, 0, m, seg, ui->cols >= 120, ui->cols >= 120);
	return rows;
}
