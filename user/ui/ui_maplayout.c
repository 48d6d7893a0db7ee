// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "lib/pageset.h"
#include "ui/blockname.h"
#include "ui/ui_maplayout.h"
#include "ui/ui_theme.h"

static const char *const filter_names[HF_COUNT] = {
	[HF_ALL] = "all", [HF_ANON] = "anon", [HF_HEAP] = "heap", [HF_STACK] = "stack",
	[HF_FILE] = "file", [HF_SHMEM] = "shmem",
};

static const char *const order_names[HO_COUNT] = {
	[HO_ADDRESS] = "address", [HO_RESIDENT] = "resident", [HO_HEAT] = "heat",
};

const char *maplayout_order_name(enum hm_order o)
{
	return o < HO_COUNT ? order_names[o] : "?";
}

const char *maplayout_filter_name(enum hm_filter f)
{
	return f < HF_COUNT ? filter_names[f] : "?";
}

static bool hm_filter_match(enum hm_filter f, enum map_kind k)
{
	switch (f) {
	case HF_ALL:
		return true;
	case HF_ANON:
		return k == MK_ANON;
	case HF_HEAP:
		return k == MK_HEAP;
	case HF_STACK:
		return k == MK_STACK;
	case HF_FILE:
		return k == MK_FILE;
	case HF_SHMEM:
		return k == MK_SHMEM;
	default:
		return false;
	}
}

int maplayout_collect(struct hm_layout *l, const struct proc *p, enum hm_filter f)
{
	size_t need = model_count_maps(p), n = 0;
	const struct mapping *m, *prev = NULL;
	char name[BLOCK_NAME_MAX + 1];
	uint64_t prev_end = 0, top = 0;
	int digits;

	if (need > l->cap) {
		/* Every per-mapping buffer grows with maps (a failure keeps the old cap). */
		if (array_resize(l->maps, need) || array_resize(l->spare, need) ||
		    array_resize(l->ranges, need) || array_resize(l->counts, need))
			return -ENOMEM;
		l->cap = need;
	}
	for (m = model_first(p); m && n < l->cap; m = model_next(m)) {
		struct hm_map *h;

		if (!hm_filter_match(f, m->kind))
			continue;
		h = &l->maps[n];
		h->start = mapping_start(m);
		h->end = mapping_end(m);
		h->kind = m->kind;
		h->m = m;
		h->gap_pages = 0;
		if (f == HF_ALL && n && h->start - prev_end >= HM_GAP_MIN_PAGES)
			h->gap_pages = h->start - prev_end;
		h->apart = n && h->start != prev_end;
		h->cont = blockname_continues(prev, m);
		h->name_len = (uint8_t)blockname_of(m, name, sizeof(name));
		prev_end = h->end;
		prev = m;
		/* [vsyscall] (ffffffffff600000) would widen every row's address to 16 digits;
		 * its own row shows a shortened address instead. */
		if (h->end > top && h->kind != MK_VSYSCALL)
			top = h->end;
		n++;
	}
	l->n = n;
	l->order = HO_ADDRESS;
	l->have_res = false;
	/* Hex digits of the highest byte address: 12 for user space. */
	top = top ? ((top << 12) - 1) : 0;
	for (digits = 1; digits < 16 && top >> (4 * digits); digits++)
		;
	l->addr_digits = digits < 12 ? 12 : digits;
	return 0;
}

size_t maplayout_object(const struct hm_layout *l, size_t i)
{
	while (i && i < l->n && l->maps[i].cont)
		i--;
	return i;
}

void maplayout_count_resident(struct hm_layout *l, const struct proc *p)
{
	size_t i;

	if (l->have_res || l->order != HO_ADDRESS)
		return;
	for (i = 0; i < l->n; i++)
		l->ranges[i] = (struct pageset_range){ l->maps[i].start, l->maps[i].end };
	pageset_count_ranges(p->set[PS_RESIDENT], l->ranges, l->n, l->counts);
	for (i = 0; i < l->n; i++)
		l->maps[i].res = l->counts[i];
	l->have_res = true;
}

/* One object of the layout and what it is sorted by. */
struct object_key {
	size_t first, n;
	double key;
};

static int by_key(const void *a, const void *b)
{
	const struct object_key *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;	/* address order */
}

int maplayout_order(struct hm_layout *l, const struct proc *p, enum hm_order o, uint64_t now_ns)
{
	struct object_key *keys;
	size_t i, j, n = 0, at = 0;
	struct hm_map *t;

	if (o == HO_ADDRESS || !l->n)
		return 0;
	if (o == HO_RESIDENT)
		maplayout_count_resident(l, p);
	keys = malloc(l->n * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < l->n; i = j) {
		keys[n] = (struct object_key){ .first = i };
		for (j = i; j < l->n && (j == i || l->maps[j].cont); j++) {
			const struct hm_map *h = &l->maps[j];

			keys[n].key += o == HO_RESIDENT ? (double)h->res :
				       heat_range(&p->heat, h->start, h->end, now_ns);
		}
		keys[n++].n = j - i;
	}
	qsort(keys, n, sizeof(*keys), by_key);
	for (i = 0; i < n; i++) {
		for (j = 0; j < keys[i].n; j++) {
			struct hm_map *h = &l->spare[at++];

			*h = l->maps[keys[i].first + j];
			/* Out of address order, gaps mean nothing: no gap lines, and a dotted bar
			 * before every object but the first. */
			h->gap_pages = 0;
			if (!j)
				h->apart = at > 1;
		}
	}
	free(keys);
	t = l->maps;
	l->maps = l->spare;
	l->spare = t;
	l->order = o;
	return 0;
}

static bool is_collapsed(const struct hm_layout *l, uint64_t start)
{
	size_t i;

	for (i = 0; i < l->ncollapsed; i++)
		if (l->collapsed[i] == start)
			return true;
	return false;
}

/* Each mapping's pages per cell: the layout's, or for a collapsed object the smallest
 * power-of-two multiple of it that puts the whole object (label, cells, separators) on
 * one line. */
static void assign_zooms(struct hm_layout *l)
{
	size_t i, j, k;

	for (i = 0; i < l->n; i = j) {
		bool fold = l->ncollapsed && is_collapsed(l, l->maps[i].start);
		uint64_t z = l->zoom, chars;

		for (j = i + 1; j < l->n && l->maps[j].cont; j++)
			;
		for (; fold && z < 1ULL << 40; z <<= 1) {
			chars = l->maps[i].name_len + 1 + (j - i - 1);
			for (k = i; k < j; k++)
				chars += hm_div_up(hm_div_up(l->maps[k].end - l->maps[k].start, z), l->cpc);
			if (chars <= (uint64_t)l->width)
				break;
		}
		for (k = i; k < j; k++) {
			l->maps[k].zoom = z;
			l->maps[k].collapsed = fold;
		}
	}
}

/* Packed: flows blocks into lines; returns the lines used. */
static uint64_t place_packed(struct hm_layout *l)
{
	uint64_t line = 0, col = 0, width = (uint64_t)l->width;
	size_t i, j;

	for (i = 0; i < l->n; i++) {
		struct hm_map *h = &l->maps[i];
		uint64_t chars, sep, lab, group;

		h->ncells = hm_div_up(h->end - h->start, h->zoom);
		chars = hm_div_up(h->ncells, l->cpc);
		lab = h->name_len + 1;
		h->packed = lab + chars <= width;
		if (!h->packed || h->gap_pages) {
			/* Own rows, or after a big gap line: start a line of its own. */
			if (col)
				line++;
			col = 0;
		}
		if (!h->packed) {
			h->line = line;
			h->label_w = 0;
			h->col = 0;
			h->nrows = hm_div_up(h->ncells, l->per_line);
			h->nlines = (h->gap_pages ? 1 : 0) + h->nrows;
			line += h->nlines;
			continue;
		}
		if (h->cont && col)
			lab = 0;
		sep = col ? 1 : 0;
		group = lab + chars;
		/* A new object that fits on a line goes whole to the next one rather than split. */
		for (j = i + 1; lab && j < l->n && l->maps[j].cont && !l->maps[j].gap_pages; j++) {
			uint64_t c = hm_div_up(hm_div_up(l->maps[j].end - l->maps[j].start,
						   l->maps[j].zoom), l->cpc);

			if (group + 1 + c > width)
				break;
			group += 1 + c;
		}
		if (col + sep + group > width && (col + sep + lab + chars > width || group <= width)) {
			line++;
			col = sep = 0;
			lab = h->name_len + 1;
		}
		h->line = line;
		if (h->gap_pages) {
			h->line = line++;
			col = sep = 0;
		}
		h->label_w = (uint8_t)lab;
		h->col = (uint32_t)(col + sep + lab);
		h->nrows = 1;
		h->nlines = h->gap_pages ? 2 : 1;	/* the line it shares */
		col += sep + lab + chars;
	}
	return col ? line + 1 : line;
}

int maplayout_parse(const char *word)
{
	static const char *const names[] = {
		[HL_LABELS] = "labels", [HL_COMPACT] = "compact", [HL_PACKED] = "packed",
		[HL_AUTO] = "auto",
	};

	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (names[i] && !strcmp(word, names[i]))
			return i;
	return HL_INVALID;
}

void maplayout_place(struct hm_layout *l, uint64_t zoom, int width, int cpc, enum hm_style st)
{
	uint64_t line = 0;
	size_t i;

	l->zoom = zoom ? zoom : 1;
	l->width = width > 0 ? width : 1;
	l->cpc = cpc > 0 ? cpc : 1;
	l->per_line = l->width * l->cpc;
	l->style = st;
	l->label_lines = st == HL_LABELS;
	assign_zooms(l);
	if (st == HL_PACKED) {
		l->lines = place_packed(l);
		return;
	}
	for (i = 0; i < l->n; i++) {
		struct hm_map *h = &l->maps[i];

		h->line = line;
		h->packed = false;
		h->label_w = 0;
		h->col = 0;
		h->ncells = hm_div_up(h->end - h->start, h->zoom);
		h->nrows = hm_div_up(h->ncells, l->per_line);
		h->nlines = (h->gap_pages ? 1 : 0) + l->label_lines + h->nrows;
		line += h->nlines;
	}
	l->lines = line;
}

/* Lines the layout would take at a zoom, stopping early past `limit`. */
static uint64_t lines_at(const struct hm_layout *l, uint64_t zoom, uint64_t per_line,
			 int labels, uint64_t limit)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < l->n && total <= limit; i++) {
		const struct hm_map *h = &l->maps[i];

		total += (h->gap_pages ? 1 : 0) + labels +
			 hm_div_up(hm_div_up(h->end - h->start, zoom), per_line);
	}
	return total;
}

uint64_t maplayout_fit_zoom(struct hm_layout *l, int width, int cpc, enum hm_style st,
			    uint64_t lines)
{
	uint64_t per_line = (uint64_t)(width > 0 ? width : 1) * (cpc > 0 ? cpc : 1);
	uint64_t zoom, largest = 0, quarter = lines / 4 ? lines / 4 : 1;
	int labels = st == HL_LABELS;
	size_t i;

	if (st == HL_PACKED) {
		/* Placing is linear in the mappings; a few dozen zooms at most. */
		for (zoom = 1; zoom < 1ULL << 40; zoom <<= 1) {
			maplayout_place(l, zoom, width, cpc, st);
			if (l->lines <= lines)
				return zoom;
		}
		labels = 0;
	}

	/* Mappings of one cell each need a line for the cells and one for the label. */
	if (lines_at(l, 1ULL << 40, per_line, labels, lines) <= lines) {
		for (zoom = 1; zoom < 1ULL << 40; zoom <<= 1)
			if (lines_at(l, zoom, per_line, labels, lines) <= lines)
				return zoom;
		return zoom;
	}
	for (i = 0; i < l->n; i++)
		if (l->maps[i].end - l->maps[i].start > largest)
			largest = l->maps[i].end - l->maps[i].start;
	for (zoom = 1; zoom < 1ULL << 40; zoom <<= 1)
		if (hm_div_up(hm_div_up(largest, zoom), per_line) <= quarter)
			break;
	return zoom;
}

/* Out of address order: the mapping holding page, else the one starting next after it,
 * else the last by address.  Linear, but called a few times a frame. */
static size_t find_page_unordered(const struct hm_layout *l, uint64_t page)
{
	size_t i, next = SIZE_MAX, last = 0;

	for (i = 0; i < l->n; i++) {
		const struct hm_map *h = &l->maps[i];

		if (page >= h->start && page < h->end)
			return i;
		if (h->start > page && (next == SIZE_MAX || h->start < l->maps[next].start))
			next = i;
		if (h->start > l->maps[last].start)
			last = i;
	}
	return next != SIZE_MAX ? next : last;
}

size_t maplayout_find_page(const struct hm_layout *l, uint64_t page)
{
	size_t lo = 0, hi = l->n;

	if (!l->n)
		return SIZE_MAX;
	if (l->order != HO_ADDRESS)
		return find_page_unordered(l, page);
	/* The last mapping starting at or before page. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->maps[mid].start <= page)
			lo = mid;
		else
			hi = mid;
	}
	if (page < l->maps[lo].start || page < l->maps[lo].end || lo + 1 == l->n)
		return lo;
	return lo + 1;
}

size_t maplayout_find_line(const struct hm_layout *l, uint64_t line)
{
	size_t lo = 0, hi = l->n;

	if (!l->n)
		return SIZE_MAX;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->maps[mid].line <= line)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

size_t maplayout_line_blocks(const struct hm_layout *l, uint64_t line)
{
	size_t i = maplayout_find_line(l, line);

	if (i == SIZE_MAX || !l->maps[i].packed || hm_cells_line(l, &l->maps[i]) != line)
		return SIZE_MAX;
	while (i && l->maps[i - 1].packed && hm_cells_line(l, &l->maps[i - 1]) == line)
		i--;
	return i;
}

static uint64_t clamp_cell(const struct hm_map *h, uint64_t cell)
{
	return cell < h->ncells ? cell : (h->ncells ? h->ncells - 1 : 0);
}

size_t maplayout_hit(const struct hm_layout *l, uint64_t line, uint64_t col, uint64_t *cell)
{
	size_t i = maplayout_line_blocks(l, line), j;
	const struct hm_map *h;

	if (line >= l->lines)
		return SIZE_MAX;
	if (i != SIZE_MAX) {
		/* The last block whose label starts at or before col. */
		for (j = i + 1; j < l->n && l->maps[j].packed &&
		     hm_cells_line(l, &l->maps[j]) == line &&
		     l->maps[j].col - l->maps[j].label_w <= col; j++)
			i = j;
		h = &l->maps[i];
		*cell = clamp_cell(h, col < h->col ? 0 : (col - h->col) * l->cpc);
		return i;
	}
	i = maplayout_find_line(l, line);
	if (i == SIZE_MAX)
		return SIZE_MAX;
	h = &l->maps[i];
	if (h->packed || line < hm_cells_line(l, h) || line - hm_cells_line(l, h) >= h->nrows)
		return SIZE_MAX;
	*cell = clamp_cell(h, (line - hm_cells_line(l, h)) * l->per_line + col * l->cpc);
	return i;
}

uint64_t maplayout_cell_col(const struct hm_layout *l, const struct hm_map *m, uint64_t cell)
{
	if (m->packed)
		return m->col + cell / l->cpc;
	return cell % l->per_line / l->cpc;
}

uint64_t maplayout_cell(const struct hm_layout *l, const struct hm_map *m, uint64_t page)
{
	if (page < m->start)
		return 0;
	if (page >= m->end)
		return m->ncells ? m->ncells - 1 : 0;
	return (page - m->start) / m->zoom;
}

uint64_t maplayout_cell_line(const struct hm_layout *l, const struct hm_map *m, uint64_t cell,
			     int *half)
{
	if (half)
		*half = (int)(cell % l->per_line % l->cpc);
	return hm_cells_line(l, m) + cell / l->per_line;
}
