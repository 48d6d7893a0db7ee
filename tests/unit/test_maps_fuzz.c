// SPDX-License-Identifier: GPL-2.0
/*
 * procfs_parse_maps(), the hand-written parser of /proc/PID/maps text (issue 24: one read()
 * a layout), against a seeded generator.  Path names are any bytes a user can give a file
 * but a newline, so the text is untrusted input:
 *
 * - well-formed lines, with every field drawn at random (hex of any length and case, the
 *   kernel's padding, names with spaces, tabs and '-' and ':' in them, none at all), must
 *   come back field for field;
 * - lines cut short or with a byte overwritten, between well-formed ones, must not crash
 *   the parser (ASan), must not change what the lines around them give, and what such a
 *   line gives, if anything, must be what its own text says (start and end read back with
 *   strtoull, the name inside the line).
 *
 * MEVITOP_TEST_SEED=<n> replays a run; the seed in use is always printed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "kernel/procfs.h"
#include "rng.h"

#define ROUNDS		2000
#define LINES		24
#define LINE_MAX_	512

/* rng.h's, under the names used here */
#define next() rng_u64()
#define below(n) rng_under(n)

struct want {
	struct maps_entry e;
	char path[256];
	bool good;		/* a well-formed line: must come back exactly */
	char *line;		/* where it starts in the text */
	size_t len;
};

struct got {
	struct maps_entry e[LINES];
	char path[LINES][256];
	size_t n;
	char *text, *end;
	bool path_outside;
};

static int collect(const struct maps_entry *e, void *arg)
{
	struct got *g = arg;

	assert_true(g->n < LINES);
	if (e->path < g->text || e->path > g->end)
		g->path_outside = true;
	g->e[g->n] = *e;
	snprintf(g->path[g->n], sizeof(g->path[0]), "%s", e->path);
	g->n++;
	return 0;
}

static void hex(char *out, size_t cap, uint64_t v, int min_digits, bool upper)
{
	snprintf(out, cap, upper ? "%0*" PRIX64 : "%0*" PRIx64, min_digits, v);
}

/* A random name: "" (anonymous), a [kind], or a path of bytes other than NUL and '\n'. */
static void random_path(char *p, size_t cap)
{
	static const char *const kinds[] = { "[heap]", "[stack]", "[vdso]", "[vvar]",
					     "[anon:x y]", "[anon_shmem:z]" };
	uint64_t k = below(4);
	size_t n, i;

	if (k == 0) {
		p[0] = 0;
		return;
	}
	if (k == 1) {
		snprintf(p, cap, "%s", kinds[below(6)]);
		return;
	}
	n = 1 + below(cap - 2);
	p[0] = '/';
	for (i = 1; i < n; i++) {
		char c = (char)(1 + below(255));

		p[i] = c == '\n' ? ' ' : c;
	}
	p[n] = 0;
	if (below(4) == 0 && n > 10)
		memcpy(p + n - 10, " (deleted)", 10);
}

static size_t good_line(char *out, size_t cap, struct want *w)
{
	char a[24], b[24], off[24], maj[16], min[16];
	uint64_t start = next() & ~0xfffULL, len = (1 + below(1 << 20)) << 12;
	bool upper = below(8) == 0;	/* the kernel prints lower case; both read */
	int pad = (int)below(30);
	size_t n;

	memset(w, 0, sizeof(*w));
	w->good = true;
	w->e.start = start;
	w->e.end = start + len < start ? ~0xfffULL : start + len;
	w->e.perms = (below(2) ? MP_READ : 0) | (below(2) ? MP_WRITE : 0) |
		     (below(2) ? MP_EXEC : 0) | (below(2) ? MP_SHARED : 0);
	w->e.offset = below(4) ? 0 : next() >> below(64);
	w->e.dev_major = (uint32_t)below(4096);
	w->e.dev_minor = (uint32_t)below(1 << 20);
	w->e.ino = below(3) ? 0 : next() >> below(64);
	random_path(w->path, below(3) ? 64 : sizeof(w->path));
	hex(a, sizeof(a), w->e.start, below(2) ? 8 : 1, upper);
	hex(b, sizeof(b), w->e.end, below(2) ? 8 : 1, upper);
	hex(off, sizeof(off), w->e.offset, 8, upper);
	hex(maj, sizeof(maj), w->e.dev_major, 2, upper);
	hex(min, sizeof(min), w->e.dev_minor, 2, upper);
	/* The kernel pads the name to a column; an anonymous line ends after the inode,
	 * or with the padding alone. */
	n = (size_t)snprintf(out, cap, "%s-%s %c%c%c%c %s %s:%s %" PRIu64 "%*s%s\n", a, b,
			     w->e.perms & MP_READ ? 'r' : '-', w->e.perms & MP_WRITE ? 'w' : '-',
			     w->e.perms & MP_EXEC ? 'x' : '-', w->e.perms & MP_SHARED ? 's' : 'p',
			     off, maj, min, w->e.ino, w->path[0] ? pad + 1 : pad, "", w->path);
	return n < cap ? n : cap - 1;
}

/* A well-formed line cut short, or with one byte overwritten (never by '\n' or NUL: that
 * is two lines, each its own case). */
static size_t bad_line(char *out, size_t cap, struct want *w)
{
	size_t n = good_line(out, cap, w);

	w->good = false;
	if (n > 1 && below(2)) {
		n = below(n - 1);
		out[n++] = '\n';
		out[n] = 0;
	} else if (n > 1) {
		char c = (char)(1 + below(255));

		out[below(n - 1)] = c == '\n' ? '\t' : c;
	}
	return n;
}

static void check_round(bool mutate)
{
	static char text[LINES * (LINE_MAX_ + 300)];
	struct want w[LINES];
	struct got g = { .text = text };
	size_t i, k, n = 0, lines = 1 + below(LINES);

	for (i = 0; i < lines; i++) {
		bool bad = mutate && below(3) == 0;
		size_t at = n;

		n += bad ? bad_line(text + n, sizeof(text) - n, &w[i]) :
			   good_line(text + n, sizeof(text) - n, &w[i]);
		w[i].line = text + at;		/* after the generator's memset */
		w[i].len = n - at;
	}
	text[n] = 0;
	g.end = text + n;
	/* What the text says for each line, read before the parser cuts it into strings. */
	uint64_t said_start[LINES], said_end[LINES];

	for (i = 0; i < lines; i++) {
		char *p = w[i].line, *q;

		said_start[i] = strtoull(p, &q, 16);
		said_end[i] = *q == '-' ? strtoull(q + 1, NULL, 16) : 0;
	}
	assert_int_equal(procfs_parse_maps(text, collect, &g), 0);
	assert_false(g.path_outside);
	/* Match what came back to the lines, in order: a good line must be the next entry;
	 * a bad one may give one entry, which must be what its own text says. */
	for (i = 0, k = 0; i < lines; i++) {
		const struct maps_entry *e = k < g.n ? &g.e[k] : NULL;

		if (w[i].good) {
			assert_non_null(e);
			assert_true(e->start == w[i].e.start && e->end == w[i].e.end);
			assert_int_equal(e->perms, w[i].e.perms);
			assert_true(e->offset == w[i].e.offset && e->ino == w[i].e.ino);
			assert_int_equal(e->dev_major, w[i].e.dev_major);
			assert_int_equal(e->dev_minor, w[i].e.dev_minor);
			assert_string_equal(g.path[k], w[i].path);
			k++;
		} else if (e && e->path >= w[i].line && e->path <= w[i].line + w[i].len) {
			assert_true(e->start == said_start[i] && e->end == said_end[i]);
			k++;
		}
	}
	assert_int_equal(k, g.n);	/* nothing came back that no line said */
}

static void test_well_formed(void **state)
{
	(void)state;
	for (int r = 0; r < ROUNDS; r++)
		check_round(false);
}

static void test_mutated(void **state)
{
	(void)state;
	for (int r = 0; r < ROUNDS * 5; r++)
		check_round(true);
}

/* Lines that are not a mapping's, and the edges of the fields. */
static void test_hostile(void **state)
{
	static const char *const lines[] = {
		"", "\n", "-", "0-", "0-1", "0-1 ", "0-1 rwxp", "0-1 rwxp ", "0-1 rwxp 0 0:0",
		"0-1 rwxp 0 0:0 ", "g-1 rwxp 0 0:0 0", "0-1 rwx 0 0:0 0", "0-1 rwxp 0 00 0",
		"0-1 rwxp 0 0: 0", "0-1 rwxp 0 :0 0", "0-1 rwxp 0 0:0 x", " 0-1 rwxp 0 0:0 0",
		"ffffffffffffffffffff-1 rwxp 0 0:0 0",
	};
	char buf[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct got g = { .text = buf };

		snprintf(buf, sizeof(buf), "%s", lines[i]);
		g.end = buf + strlen(buf);
		assert_int_equal(procfs_parse_maps(buf, collect, &g), 0);
		/* The last one overflows 64 bits: it is read (cut to the low 64), not refused;
		 * the kernel never prints more than 16 digits. */
		assert_int_equal(g.n, i == sizeof(lines) / sizeof(lines[0]) - 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_well_formed),
		cmocka_unit_test(test_mutated),
		cmocka_unit_test(test_hostile),
	};

	rng_seed("test_maps_fuzz");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
