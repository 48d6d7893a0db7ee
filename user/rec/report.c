// SPDX-License-Identifier: GPL-2.0
/*
 * The report: an SVG of one process over a recording.
 *
 *  - top: address (y) × time (x).  The address ranges the process mapped at any time are
 *    merged into bands, stacked in address order and labelled; a band's height grows with
 *    the square root of its size (at least 4 px), so a 4 KiB vdso and a 16 GiB heap are both
 *    visible.  Each pixel row of a band covers a fixed page range; each cell is coloured by
 *    the exact shares of resident, swapped, untracked and not-resident pages in it at that
 *    frame (white: not mapped then).  Every cell carries its page range and counts
 *    (data-pages, data-res), so the picture can be checked against replay --json.
 *  - bottom: resident bytes over time by kind (heap, stack, anon, file, shmem, other) as a
 *    stacked area chart.
 * Columns are frames, evenly sampled down to at most MAX_COLS.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "out/json.h"
#include "out/json_files_read.h"
#include "lib/log.h"
#include "model/model.h"
#include "rec/rec_reader.h"
#include "rec/subcmd.h"
#include "rec/report.h"

#define MAX_COLS	600
#define MAP_H		600	/* px of the address × time map */
#define AREA_H		180	/* px of the area chart */
#define LABEL_W		300
#define PLOT_W		900
#define MIN_BAND_H	4
#define MAX_BANDS	4096	/* beyond this, the smallest gaps merge (labels would not fit) */

struct band {
	uint64_t start, end;	/* pages */
	char label[80];
	int y, h;
};

enum area_kind { AK_HEAP, AK_STACK, AK_ANON, AK_FILE, AK_SHMEM, AK_OTHER, AK_COUNT };

static const char *const area_name[AK_COUNT] = { "heap", "stack", "anon", "file", "shmem",
						  "other" };
static const char *const area_color[AK_COUNT] = { "#d62728", "#9467bd", "#ff7f0e",
						   "#1f77b4", "#2ca02c", "#7f7f7f" };

static enum area_kind area_of(enum map_kind k)
{
	switch (k) {
	case MK_HEAP: return AK_HEAP;
	case MK_STACK: return AK_STACK;
	case MK_ANON: return AK_ANON;
	case MK_FILE: return AK_FILE;
	case MK_SHMEM: return AK_SHMEM;
	default: return AK_OTHER;
	}
}

struct report {
	struct rec_reader *r;
	pid_t pid;
	size_t *cols;		/* frame index of each column */
	size_t ncols;
	struct band *bands;
	size_t nbands, cap;
	uint64_t (*area)[AK_COUNT];	/* resident pages by kind, per column */
	FILE *out;
};

static struct proc *find_proc(const struct json_frame *f, pid_t pid)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->procs[i]->pid == pid)
			return f->procs[i];
	return NULL;
}

static int band_cmp(const void *a, const void *b)
{
	const struct band *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void label_of(const struct mapping *m, char *out, size_t len)
{
	const char *base = m->path ? strrchr(m->path, '/') : NULL;

	snprintf(out, len, "%#" PRIx64 " %s", mapping_start(m) << PAGE_SHIFT_4K,
		 m->path ? (base ? base + 1 : m->path) : map_kind_name(m->kind));
}

/* Sorts and merges overlapping bands (the first label wins); touching ones stay apart so
 * each mapping keeps its label. */
static void merge_bands(struct report *rp)
{
	size_t i, o = 0;

	qsort(rp->bands, rp->nbands, sizeof(*rp->bands), band_cmp);
	for (i = 0; i < rp->nbands; i++) {
		if (o && rp->bands[i].start < rp->bands[o - 1].end) {
			if (rp->bands[i].end > rp->bands[o - 1].end)
				rp->bands[o - 1].end = rp->bands[i].end;
			continue;
		}
		rp->bands[o++] = rp->bands[i];
	}
	rp->nbands = o;
}

static bool covered(const struct report *rp, uint64_t s, uint64_t e)
{
	size_t lo = 0, hi = rp->nbands;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (rp->bands[mid].end <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rp->nbands && rp->bands[lo].start <= s && rp->bands[lo].end >= e;
}

static int add_band(struct report *rp, const struct mapping *m)
{
	if (array_reserve(rp->bands, rp->nbands, rp->cap, 64))
		return -ENOMEM;
	rp->bands[rp->nbands] = (struct band){ .start = mapping_start(m), .end = mapping_end(m) };
	label_of(m, rp->bands[rp->nbands].label, sizeof(rp->bands[rp->nbands].label));
	rp->nbands++;
	return 0;
}

/* Pass 1: bands (the union of the process's mappings) and the area chart's numbers. */
static int scan(struct report *rp, char *why, size_t whylen)
{
	for (size_t c = 0; c < rp->ncols; c++) {
		struct json_frame f;
		const struct mapping *m;
		struct proc *p;
		uint32_t flags;
		size_t before = rp->nbands;
		int err = rec_load(rp->r, rp->cols[c], &f, &flags, why, whylen);

		if (err)
			return err;
		p = find_proc(&f, rp->pid);
		if (!p)
			continue;
		for (m = model_first(p); m; m = model_next(m)) {
			uint64_t s = mapping_start(m), e = mapping_end(m);

			rp->area[c][area_of(m->kind)] += model_count(p, PS_RESIDENT, s, e);
			if (!covered(rp, s, e) && add_band(rp, m))
				return -ENOMEM;
		}
		if (rp->nbands != before)
			merge_bands(rp);
	}
	return 0;
}

static uint64_t mapped_in(const struct proc *p, uint64_t a, uint64_t b)
{
	const struct mapping *m = model_find(p, a);
	uint64_t n = 0;

	if (!m)
		m = model_find_ge(p, a);
	for (; m && mapping_start(m) < b; m = model_next(m)) {
		uint64_t s = mapping_start(m) > a ? mapping_start(m) : a;
		uint64_t e = mapping_end(m) < b ? mapping_end(m) : b;

		if (e > s)
			n += e - s;
	}
	return n;
}

static void layout_bands(struct report *rp)
{
	double sum = 0, scale;
	int y = 0;

	for (size_t i = 0; i < rp->nbands; i++)
		sum += __builtin_sqrt((double)(rp->bands[i].end - rp->bands[i].start));
	scale = sum > 0 ? (MAP_H - (double)MIN_BAND_H * rp->nbands) / sum : 0;
	if (scale < 0)
		scale = 0;
	/* Highest addresses on top, as in the interactive view's order read top-down. */
	for (size_t k = rp->nbands; k-- > 0;) {
		struct band *b = &rp->bands[k];
		uint64_t pages = b->end - b->start;
		int h = MIN_BAND_H + (int)(scale * __builtin_sqrt((double)pages));

		if ((uint64_t)h > pages && pages >= MIN_BAND_H)
			h = pages;
		b->y = y;
		b->h = h;
		y += h;
	}
}

/* A cell's colour: the page shares blended, quantised so equal neighbours merge. */
static uint32_t cell_color(uint64_t res, uint64_t swp, uint64_t unt, uint64_t mapped)
{
	static const uint32_t c_res = 0x2ca02c, c_swp = 0xff7f0e, c_unt = 0xbbbbbb,
			      c_non = 0xdde6f0;
	double w[4], rgb[3] = { 0 };
	uint32_t cols[4] = { c_res, c_swp, c_unt, c_non };

	if (!mapped)
		return 0xffffff;
	w[0] = (double)res / mapped;
	w[1] = (double)swp / mapped;
	w[2] = (double)unt / mapped;
	w[3] = 1 - w[0] - w[1] - w[2];
	for (int i = 0; i < 4; i++)
		for (int ch = 0; ch < 3; ch++)
			rgb[ch] += w[i] * ((cols[i] >> (16 - 8 * ch)) & 0xff);
	for (int ch = 0; ch < 3; ch++)
		rgb[ch] = (int)(rgb[ch] / 8 + 0.5) * 8 > 255 ? 255 : (int)(rgb[ch] / 8 + 0.5) * 8;
	return (uint32_t)rgb[0] << 16 | (uint32_t)rgb[1] << 8 | (uint32_t)rgb[2];
}

static void put_svg_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if (*s == '&')
			fputs("&amp;", out);
		else if ((unsigned char)*s >= 0x20)
			fputc(*s, out);
	}
}

/* Pass 2: one column per frame, vertical runs of equal colour merged into one rect. */
static int draw_map(struct report *rp, double cw, char *why, size_t whylen)
{
	FILE *o = rp->out;

	for (size_t c = 0; c < rp->ncols; c++) {
		const struct rec_frame_info *fi = rec_info(rp->r, rp->cols[c]);
		struct json_frame f;
		struct proc *p;
		uint32_t flags;
		int err = rec_load(rp->r, rp->cols[c], &f, &flags, why, whylen);

		if (err)
			return err;
		p = find_proc(&f, rp->pid);
		fprintf(o, "<g class=\"frame\" data-frame=\"%zu\" data-t=\"%.3f\">\n", rp->cols[c],
			(fi->mono_ns - rec_start_ns(rp->r)) / 1e9);
		for (size_t k = 0; p && k < rp->nbands; k++) {
			const struct band *b = &rp->bands[k];
			uint64_t pages = b->end - b->start, run_hi = 0, run_lo = 0, res_sum = 0;
			uint32_t run_col = 0;
			int run_y = -1;

			for (int row = 0; row <= b->h; row++) {
				uint64_t a = 0, e = 0, res = 0, swp = 0, unt = 0, mapped = 0;
				uint32_t col = 0;

				if (row < b->h) {
					/* Row 0 is the band's top: its highest pages. */
					e = b->end - pages * row / b->h;
					a = b->end - pages * (row + 1) / b->h;
					mapped = mapped_in(p, a, e);
					if (mapped) {
						res = model_count(p, PS_RESIDENT, a, e);
						swp = model_count(p, PS_SWAPPED, a, e);
						unt = model_count(p, PS_UNTRACKED, a, e);
					}
					col = cell_color(res, swp, unt, mapped);
				}
				if (run_y >= 0 && (row == b->h || col != run_col)) {
					if (run_col != 0xffffff)
						fprintf(o, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
							"height=\"%d\" fill=\"#%06x\" data-pages=\"%#"
							PRIx64 "-%#" PRIx64 "\" data-res=\"%" PRIu64
							"\"/>\n", LABEL_W + c * cw, 30 + b->y + run_y,
							cw, row - run_y, run_col,
							run_lo << PAGE_SHIFT_4K,
							run_hi << PAGE_SHIFT_4K, res_sum);
					run_y = -1;
				}
				if (row == b->h)
					break;
				if (run_y < 0) {
					run_y = row;
					run_col = col;
					run_hi = e;
					res_sum = 0;
				}
				res_sum += res;
				run_lo = a;
			}
		}
		fprintf(o, "</g>\n");
	}
	return 0;
}

static void draw_labels(struct report *rp)
{
	FILE *o = rp->out;

	for (size_t k = 0; k < rp->nbands; k++) {
		const struct band *b = &rp->bands[k];

		fprintf(o, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#888\" "
			"stroke-width=\"0.5\"/>\n", LABEL_W - 4, LABEL_W + PLOT_W, 30 + b->y,
			30 + b->y);
		if (b->h >= 9) {
			fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" text-anchor=\"end\">",
				LABEL_W - 6, 30 + b->y + (b->h < 12 ? b->h - 1 : 11),
				b->h < 12 ? 8 : 10);
			put_svg_text(o, b->label);
			fprintf(o, "</text>\n");
		}
	}
}

static void draw_area(struct report *rp, double cw)
{
	FILE *o = rp->out;
	int top = 30 + MAP_H + 40;
	uint64_t max = 1;
	double prev_y[MAX_COLS];

	for (size_t c = 0; c < rp->ncols; c++) {
		uint64_t t = 0;

		for (int k = 0; k < AK_COUNT; k++)
			t += rp->area[c][k];
		if (t > max)
			max = t;
	}
	for (size_t c = 0; c < rp->ncols; c++)
		prev_y[c] = top + AREA_H;
	for (int k = 0; k < AK_COUNT; k++) {
		double y[MAX_COLS];

		fprintf(o, "<polygon class=\"area\" data-kind=\"%s\" fill=\"%s\" points=\"",
			area_name[k], area_color[k]);
		for (size_t c = 0; c < rp->ncols; c++) {
			y[c] = prev_y[c] - (double)rp->area[c][k] * AREA_H / max;
			fprintf(o, "%.1f,%.1f ", LABEL_W + (c + 0.5) * cw, y[c]);
		}
		for (size_t c = rp->ncols; c-- > 0;)
			fprintf(o, "%.1f,%.1f ", LABEL_W + (c + 0.5) * cw, prev_y[c]);
		fprintf(o, "\"/>\n");
		memcpy(prev_y, y, sizeof(double) * rp->ncols);
		fprintf(o, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>\n",
			LABEL_W + PLOT_W + 10, top + 14 * k, area_color[k],
			LABEL_W + PLOT_W + 24, top + 14 * k + 9, area_name[k]);
	}
	for (size_t c = 0; c < rp->ncols; c++) {
		uint64_t t = 0;

		for (int k = 0; k < AK_COUNT; k++)
			t += rp->area[c][k];
		fprintf(o, "<desc class=\"resident\" data-col=\"%zu\">%" PRIu64 "</desc>\n", c, t);
	}
	fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%.1f MiB"
		"</text>\n<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">0"
		"</text>\n<text x=\"%d\" y=\"%d\" font-size=\"12\">resident by kind</text>\n",
		LABEL_W - 6, top + 10, max * 4096.0 / (1 << 20), LABEL_W - 6, top + AREA_H,
		LABEL_W, top - 6);
}

/* The machine's memory and the largest cached files at the last column's frame, one line
 * each (recordings of the whole system carry them; others have none). */
static void draw_memory(struct report *rp, int y)
{
	struct json_frame f;
	struct files_brief b;
	uint32_t flags;
	char why[WHY_LEN], line[1024];
	int at = 0;

	if (rec_load(rp->r, rp->cols[rp->ncols - 1], &f, &flags, why, sizeof(why)) ||
	    json_files_brief(f.files_text, &b))
		return;
	if (b.have_mem) {
		const struct mem_summary *m = &b.mem;

		snprintf(line, sizeof(line), "memory at the end: total %.1f MiB, anon %.1f, page "
			 "cache %.1f (shmem %.1f), kernel %.1f, free %.1f; accounted %.1f",
			 m->total / 1048576.0, m->anon / 1048576.0, m->file / 1048576.0,
			 m->shmem / 1048576.0, m->kernel / 1048576.0, m->free / 1048576.0,
			 m->accounted / 1048576.0);
		fprintf(rp->out, "<text x=\"10\" y=\"%d\" font-size=\"11\" class=\"memory\">", y);
		put_svg_text(rp->out, line);
		fprintf(rp->out, "</text>\n");
	}
	for (size_t i = 0; i < b.n && at < (int)sizeof(line) - 1; i++)
		at += snprintf(line + at, sizeof(line) - at, "%s%s %.1f MiB", i ? ", " : "largest "
			       "cached files: ", b.top[i].path, b.top[i].cached * 4096 / 1048576.0);
	if (b.n) {
		fprintf(rp->out, "<text x=\"10\" y=\"%d\" font-size=\"11\" class=\"files\">",
			y + 14);
		put_svg_text(rp->out, line);
		fprintf(rp->out, "</text>\n");
	}
}

static int write_svg(struct report *rp, const char *title, char *why, size_t whylen)
{
	FILE *o = rp->out;
	double cw = (double)PLOT_W / rp->ncols;
	double t0 = (rec_info(rp->r, rp->cols[0])->mono_ns - rec_start_ns(rp->r)) / 1e9;
	double t1 = (rec_info(rp->r, rp->cols[rp->ncols - 1])->mono_ns - rec_start_ns(rp->r)) / 1e9;
	int err;

	fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/"
		"2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n<rect width="
		"\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"10\" y=\"18\" font-size="
		"\"14\">", LABEL_W + PLOT_W + 90, 30 + MAP_H + 40 + AREA_H + 40 + 30);
	put_svg_text(o, title);
	fprintf(o, "</text>\n<g class=\"map\">\n");
	err = draw_map(rp, cw, why, whylen);
	if (err)
		return err;
	fprintf(o, "</g>\n");
	draw_labels(rp);
	fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"11\">%.1f s</text><text x=\"%d\" y=\"%d\" "
		"font-size=\"11\" text-anchor=\"end\">%.1f s</text>\n", LABEL_W, 30 + MAP_H + 14, t0,
		LABEL_W + PLOT_W, 30 + MAP_H + 14, t1);
	fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"11\">green resident, orange swapped, grey "
		"untracked, pale blue mapped but not resident, white not mapped</text>\n",
		LABEL_W + 200, 30 + MAP_H + 14);
	draw_area(rp, cw);
	draw_memory(rp, 30 + MAP_H + 40 + AREA_H + 40 + 8);
	fprintf(o, "</svg>\n");
	return ferror(o) ? -EIO : 0;
}

/* The default process: the one with the most resident pages in the last frame. */
static int pick_pid(struct rec_reader *r, pid_t *pid, char *why, size_t whylen)
{
	struct json_frame f;
	uint32_t flags;
	uint64_t best = 0;
	int err = rec_load(r, rec_frames(r) - 1, &f, &flags, why, whylen);

	if (err)
		return err;
	*pid = 0;
	for (size_t i = 0; i < f.n; i++) {
		uint64_t c[PS_COUNT];

		model_totals(f.procs[i], c);
		if (!*pid || c[PS_RESIDENT] > best) {
			*pid = f.procs[i]->pid;
			best = c[PS_RESIDENT];
		}
	}
	if (!*pid) {
		snprintf(why, whylen, "the last frame holds no process");
		return -ENOENT;
	}
	return 0;
}


int report_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report rp = { 0 };
	const char *out = NULL, *path;
	char why[WHY_LEN], title[256];
	long pid = 0;
	int opt, rc = 1, err;

	optind = 1;
	opterr = 0;	/* getopt's errors in mevitop's words (subcmd_getopt_error) */
	while ((opt = getopt_long(argc, argv, ":o:p:h", longopts, NULL)) != -1) {
		char *end;

		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 'p':
			pid = strtol(optarg, &end, 10);
			if (*end || pid <= 0 || pid > INT_MAX)
				return subcmd_usage("report", "invalid pid '%s'", optarg);
			break;
		case 'h':
			printf("Usage: mevitop report FILE -o OUT.svg [-p PID]\n\n"
			       "An SVG of one process of a recording (default: the one with the most\n"
			       "resident pages at the end): its mappings (y, address order) over time\n"
			       "(x) coloured by page state, and resident bytes by kind over time.\n");
			return 0;
		default:
			return subcmd_getopt_error("report", opt, argv);
		}
	}
	if (optind >= argc || !out)
		return subcmd_usage("report", "%s", "report needs a recording and -o OUT.svg");
	if (optind + 1 < argc)
		return subcmd_usage("report", "unexpected argument '%s'", argv[optind + 1]);
	path = argv[optind];
	if (rec_open(path, &rp.r, why, sizeof(why))) {
		log_err("%s", why);
		return 1;
	}
	if (rec_warning(rp.r))
		log_err("%s", rec_warning(rp.r));
	rp.pid = pid;
	if (!pid && pick_pid(rp.r, &rp.pid, why, sizeof(why))) {
		log_err("%s: %s", path, why);
		goto done;
	}
	rp.ncols = rec_frames(rp.r) < MAX_COLS ? rec_frames(rp.r) : MAX_COLS;
	rp.cols = calloc(rp.ncols, sizeof(*rp.cols));
	rp.area = calloc(rp.ncols, sizeof(*rp.area));
	if (!rp.cols || !rp.area) {
		log_err("out of memory");
		goto done;
	}
	for (size_t c = 0; c < rp.ncols; c++)
		rp.cols[c] = rp.ncols > 1 ? c * (rec_frames(rp.r) - 1) / (rp.ncols - 1) : 0;
	err = scan(&rp, why, sizeof(why));
	if (err) {
		log_err("%s: %s", path, why);
		goto done;
	}
	if (!rp.nbands) {
		log_err("%s: process %d is in no frame", path, rp.pid);
		goto done;
	}
	layout_bands(&rp);
	rp.out = fopen(out, "w");
	if (!rp.out) {
		log_err("failed to create %s: %s", out, strerror(errno));
		goto done;
	}
	snprintf(title, sizeof(title), "mevitop report: process %d, %s, %zu frames", rp.pid, path,
		 rec_frames(rp.r));
	err = write_svg(&rp, title, why, sizeof(why));
	if (fclose(rp.out) || err) {
		log_err("failed to write %s: %s", out, err == -EBADMSG ? why : strerror(err ? -err : errno));
		goto done;
	}
	rc = 0;
done:
	free(rp.cols);
	free(rp.area);
	free(rp.bands);
	rec_close(rp.r);
	return rc;
}
