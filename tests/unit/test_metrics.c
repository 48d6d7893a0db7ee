// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the metrics endpoint's pure parts (user/out/): the exposition text in both
 * formats (escaping, family metadata, # EOF), Accept negotiation and --listen parsing, each
 * parser also fed seeded random input under ASan.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <zlib.h>

#include "out/gzip.h"
#include "out/listen_addr.h"
#include "out/metrics.h"
#include "rng.h"

/* ---- a hand-made snapshot ---- */

static struct metrics_map top_maps[2] = {
	{ .start = 0x7f0000001000, .resident = 300, .kind = MK_FILE, .name = "/lib/x\"y.so" },
	{ .start = 0x1000, .resident = 2, .kind = MK_ANON, .name = NULL },
};

static void make_snap(struct metrics_snap *s, struct metrics_proc *p, const char *comm)
{
	memset(s, 0, sizeof(*s));
	memset(p, 0, sizeof(*p));
	s->mode = "sample";
	s->version = "1.2.3";
	s->interval_ms = 1500;
	s->st.events_by_kind[EV_FAULT] = 7;
	s->st.lost_by_kind[EV_EXIT] = 3;
	s->st.drift_pages = 2;
	s->running = 1;
	s->procs = p;
	s->nprocs = 1;
	p->pid = 4242;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->cgroup = "/system.slice/a.service";
	p->faults = 99;
	p->pages[MK_HEAP][PS_NOT_RESIDENT] = 10;	/* mapped */
	p->pages[MK_HEAP][PS_RESIDENT] = 4;
	p->pages[MK_HEAP][PS_SWAPPED] = 1;
	p->pages[MK_FILE][PS_NOT_RESIDENT] = 400;
	p->pages[MK_FILE][PS_RESIDENT] = 300;
	p->top = top_maps;
	p->ntop = 2;
}

static char *format(const struct metrics_snap *s, enum metrics_format f)
{
	size_t len;
	char *text;

	assert_int_equal(metrics_format(s, f, NULL, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	return text;
}

static void assert_has(const char *text, const char *needle)
{
	if (!strstr(text, needle))
		fail_msg("missing %s in:\n%s", needle, text);
}

static void test_text_format(void **state)
{
	struct metrics_snap s;
	struct metrics_proc p;
	char *t;

	make_snap(&s, &p, "redis-server");
	t = format(&s, METRICS_TEXT);
	assert_has(t, "# TYPE mevitop_build_info gauge\nmevitop_build_info{version=\"1.2.3\"} 1\n");
	assert_has(t, "# TYPE mevitop_process_faults_total counter\n");
	assert_has(t, "mevitop_process_faults_total{pid=\"4242\",comm=\"redis-server\","
		      "cgroup=\"/system.slice/a.service\"} 99\n");
	assert_has(t, "mevitop_process_resident_bytes{pid=\"4242\",comm=\"redis-server\","
		      "cgroup=\"/system.slice/a.service\",kind=\"heap\"} 16384\n");
	assert_has(t, "mevitop_process_swapped_bytes{pid=\"4242\",comm=\"redis-server\","
		      "cgroup=\"/system.slice/a.service\",kind=\"heap\"} 4096\n");
	assert_has(t, "mevitop_process_mapped_bytes{pid=\"4242\",comm=\"redis-server\","
		      "cgroup=\"/system.slice/a.service\",kind=\"file\"} 1638400\n");
	/* kinds with nothing mapped have no series */
	assert_null(strstr(t, "kind=\"stack\""));
	assert_has(t, ",kind=\"file\",mapping=\"/lib/x\\\"y.so\",start=\"0x7f0000001000\"} "
		      "1228800\n");
	assert_has(t, ",kind=\"anon\",mapping=\"[anon]\",start=\"0x1000\"} 8192\n");
	assert_has(t, "mevitop_events_total{kind=\"fault\"} 7\n");
	assert_has(t, "mevitop_lost_events_total{kind=\"exit\"} 3\n");
	assert_has(t, "mevitop_drift_bytes_total 8192\n");
	assert_has(t, "mevitop_interval_seconds 1.500000\n");
	assert_has(t, "mevitop_mode{mode=\"sample\"} 1\n");
	assert_null(strstr(t, "# EOF"));
	assert_null(strstr(t, "# UNIT"));
	free(t);
}

static void test_openmetrics_format(void **state)
{
	struct metrics_snap s;
	struct metrics_proc p;
	char *t;
	size_t len;

	make_snap(&s, &p, "redis-server");
	t = format(&s, METRICS_OPENMETRICS);
	/* TYPE first, family names without _total/_info, UNIT for unit-suffixed families */
	assert_has(t, "# TYPE mevitop_build info\n# HELP mevitop_build ");
	assert_has(t, "mevitop_build_info{version=\"1.2.3\"} 1\n");
	assert_has(t, "# TYPE mevitop_process_faults counter\n# HELP mevitop_process_faults ");
	assert_has(t, "\nmevitop_process_faults_total{pid=\"4242\"");
	assert_has(t, "# TYPE mevitop_process_resident_bytes gauge\n"
		      "# UNIT mevitop_process_resident_bytes bytes\n");
	assert_has(t, "# TYPE mevitop_cpu_seconds counter\n# UNIT mevitop_cpu_seconds seconds\n");
	len = strlen(t);
	assert_true(len > 6);
	assert_string_equal(t + len - 6, "# EOF\n");
	assert_int_equal(strstr(t, "# EOF") - t, (long)len - 6);
	free(t);
}

/*
 * Checks a whole exposition the way a strict parser reads it: every sample belongs to the
 * family last declared by TYPE, label values hold only the three escapes and no raw quote
 * or newline, and the text is valid UTF-8.
 */
static void check_exposition(const char *t, enum metrics_format f)
{
	char family[128] = "";
	const char *line = t;

	while (*line) {
		const char *end = strchr(line, '\n'), *c;
		size_t n;

		assert_non_null(end);
		if (!strncmp(line, "# TYPE ", 7)) {
			n = strcspn(line + 7, " ");
			assert_true(n < sizeof(family));
			memcpy(family, line + 7, n);
			family[n] = 0;
		} else if (line[0] != '#') {
			n = strcspn(line, "{ ");
			size_t fl = strlen(family);

			assert_true(fl > 0);
			assert_true(n >= fl && !strncmp(line, family, fl));
			if (f == METRICS_TEXT)
				assert_int_equal(n, fl);
			else
				assert_true(n == fl || (n == fl + 6 && !strncmp(line + fl, "_total", 6)) ||
					    (n == fl + 5 && !strncmp(line + fl, "_info", 5)));
			c = line + n;
			if (*c == '{') {
				c++;
				while (*c != '}') {
					c += strcspn(c, "=");
					assert_int_equal(c[1], '"');
					for (c += 2; *c != '"'; c++) {
						assert_true(c < end);
						if (*c == '\\') {
							c++;
							assert_true(*c == '\\' || *c == '"' || *c == 'n');
						}
					}
					c++;
					assert_true(*c == ',' || *c == '}');
					if (*c == ',')
						c++;
				}
				c++;
			}
			assert_int_equal(*c, ' ');
		}
		line = end + 1;
	}
	/* valid UTF-8 throughout */
	for (const unsigned char *u = (const unsigned char *)t; *u;) {
		size_t k = *u < 0x80 ? 1 : (*u & 0xe0) == 0xc0 ? 2 : (*u & 0xf0) == 0xe0 ? 3 : 4;

		assert_true(*u < 0x80 || (*u >= 0xc2 && *u <= 0xf4));
		for (size_t i = 1; i < k; i++)
			assert_int_equal(u[i] & 0xc0, 0x80);
		u += k;
	}
}

static void test_escaping(void **state)
{
	struct metrics_snap s;
	struct metrics_proc p;
	char *t;

	/* A comm holding a quote, a backslash, a newline, a lone UTF-8 lead byte and a
	 * character cut in half (as /proc cuts a comm at 15 bytes). */
	make_snap(&s, &p, "a\"b\\c\nd\xff\xc3");
	t = format(&s, METRICS_TEXT);
	assert_has(t, "comm=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\xef\xbf\xbd\"");
	check_exposition(t, METRICS_TEXT);
	free(t);
	make_snap(&s, &p, "caf\xc3\xa9");	/* valid UTF-8 stays as it is */
	t = format(&s, METRICS_OPENMETRICS);
	assert_has(t, "comm=\"caf\xc3\xa9\"");
	check_exposition(t, METRICS_OPENMETRICS);
	free(t);
}

static void test_escaping_random(void **state)
{
	struct metrics_snap s;
	struct metrics_proc p;
	char comm[16], path[64];
	int i, j;

	rng_seed("test_metrics escaping");
	for (i = 0; i < 3000; i++) {
		make_snap(&s, &p, "");
		for (j = 0; j < 15; j++)
			comm[j] = (char)(1 + rng_under(255));
		comm[rng_under(16)] = 0;
		comm[15] = 0;
		memcpy(p.comm, comm, sizeof(comm));
		for (j = 0; j < 63; j++)
			path[j] = (char)(1 + rng_under(255));
		path[rng_under(64)] = 0;
		path[63] = 0;
		p.cgroup = path;
		char *t = format(&s, i % 2 ? METRICS_OPENMETRICS : METRICS_TEXT);

		check_exposition(t, i % 2 ? METRICS_OPENMETRICS : METRICS_TEXT);
		free(t);
	}
}

/*
 * The memo's lines are the lines written afresh: a seeded run of scrapes of a few
 * processes, each changed (a count, faults, comm, cgroup, a mapping's name, --sharing's
 * figures), added or dropped at random between scrapes, both formats in turn, each answer
 * compared byte for byte with one made without the memo.
 */
static void test_memo_random(void **state)
{
	static const char *names[] = { "/lib/a.so", "/bin/x", "", NULL, "[heap]" };
	static const char *cgroups[] = { "/", "/system.slice/b.service", "/user.slice" };
	enum { NP = 6 };
	struct metrics_proc procs[NP], use[NP];
	struct metrics_map maps[NP][3];
	struct metrics_memo *memo = metrics_memo_new();
	struct metrics_snap s;
	int i, k, nonempty = 0;

	assert_non_null(memo);
	rng_seed("test_metrics memo");
	make_snap(&s, &procs[0], "p0");
	for (i = 0; i < NP; i++) {
		struct metrics_proc tmp;
		struct metrics_snap ts;

		make_snap(&ts, &tmp, "p");
		procs[i] = tmp;
		procs[i].pid = 100 + i * 7;
		procs[i].top = maps[i];
		procs[i].ntop = 0;
		snprintf(procs[i].comm, sizeof(procs[i].comm), "p%d", i);
	}
	for (i = 0; i < 2000; i++) {
		struct metrics_proc *p = &procs[rng_under(NP)];
		enum metrics_format f = i % 2 ? METRICS_OPENMETRICS : METRICS_TEXT;
		char *a, *b;
		size_t la, lb, n = 0;

		switch (rng_under(8)) {
		case 0: p->pages[rng_under(MK_COUNT)][rng_under(PS_COUNT)] = rng_under(3); break;
		case 1: p->faults += rng_under(2); break;
		case 2: p->comm[0] = (char)('a' + rng_under(3)); break;
		case 3: p->cgroup = (char *)cgroups[rng_under(3)]; break;
		case 4:
			p->ntop = rng_under(4);
			for (k = 0; k < (int)p->ntop; k++)
				p->top[k] = (struct metrics_map){ .start = rng_under(3) << 12,
					.resident = rng_under(3), .kind = rng_under(MK_COUNT),
					.name = (char *)names[rng_under(5)] };
			break;
		case 6:		/* only a name: the key must hold names too */
			if (p->ntop)
				p->top[rng_under(p->ntop)].name = (char *)names[rng_under(5)];
			break;
		case 5:
			p->sharing = rng_under(2);
			p->uss = rng_under(3);
			p->pss = rng_under(3);
			break;
		default: break;		/* nothing changed: the memo's lines are used */
		}
		/* A random subset of the processes, in pid order, as a scrape lists them. */
		for (k = 0; k < NP; k++)
			if (rng_under(8))
				use[n++] = procs[k];
		s.procs = use;
		s.nprocs = s.running = n;
		assert_int_equal(metrics_format(&s, f, NULL, &a, &la), 0);
		assert_int_equal(metrics_format(&s, f, memo, &b, &lb), 0);
		if (la != lb || memcmp(a, b, la))
			fail_msg("scrape %d differs with the memo:\n%s\n---\n%s", i, a, b);
		nonempty += n > 0;
		free(a);
		free(b);
	}
	metrics_memo_free(memo);
	print_message("2000 scrapes, %d with processes, the same with and without the memo\n",
		      nonempty);
}

/* ---- Accept negotiation ---- */

static void test_negotiate(void **state)
{
	static const struct { const char *accept; enum metrics_format want; } cases[] = {
		{ NULL, METRICS_TEXT },
		{ "", METRICS_TEXT },
		/* what Prometheus 2.42 sends */
		{ "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
		  "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		  METRICS_OPENMETRICS },
		{ "text/plain;version=0.0.4", METRICS_TEXT },
		{ "application/openmetrics-text", METRICS_OPENMETRICS },
		{ "APPLICATION/OpenMetrics-Text ; Version=\"1.0.0\"", METRICS_OPENMETRICS },
		{ "application/openmetrics-text;version=0.0.1", METRICS_OPENMETRICS },
		{ "application/openmetrics-text;version=2.0.0", METRICS_TEXT },
		{ "application/openmetrics-text;q=0", METRICS_TEXT },
		{ "application/openmetrics-text;q=0.5, text/plain;q=0.9", METRICS_TEXT },
		{ "text/plain;q=0.2, application/openmetrics-text;q=0.3", METRICS_OPENMETRICS },
		{ "text/plain, application/openmetrics-text", METRICS_TEXT },
		{ "application/openmetrics-text;q=2", METRICS_TEXT },
		{ "application/openmetrics-text;q=0.7x", METRICS_TEXT },
		{ "application/openmetrics-text;q=1.000", METRICS_OPENMETRICS },
		{ "*/*", METRICS_TEXT },
		{ "application/json", METRICS_TEXT },
		{ ",,;;==,application/openmetrics-text;;", METRICS_OPENMETRICS },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (metrics_negotiate(cases[i].accept) != cases[i].want)
			fail_msg("Accept: %s", cases[i].accept ? cases[i].accept : "(none)");
	assert_string_equal(metrics_content_type(METRICS_TEXT),
			    "text/plain; version=0.0.4; charset=utf-8");
	assert_string_equal(metrics_content_type(METRICS_OPENMETRICS),
			    "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

/* Random headers built from the grammar's pieces and random bytes: no crash (ASan), and
 * OpenMetrics only when the header names it. */
static void test_negotiate_random(void **state)
{
	static const char *const pieces[] = {
		"application/openmetrics-text", "text/plain", "*/*", ",", ";", "=", " ", "q",
		"version", "1.0.0", "0.0.4", "0.0.1", "0", "1", "0.5", "\"", "\t", "q=0",
	};
	char buf[512];
	int i;

	rng_seed("test_metrics negotiate");
	for (i = 0; i < 100000; i++) {
		size_t len = 0, n = rng_under(24);

		while (n-- && len < sizeof(buf) - 64) {
			if (rng_under(8)) {
				const char *p = pieces[rng_under(sizeof(pieces) / sizeof(pieces[0]))];

				memcpy(buf + len, p, strlen(p));
				len += strlen(p);
			} else {
				buf[len++] = (char)(1 + rng_under(255));
			}
		}
		buf[len] = 0;
		enum metrics_format f = metrics_negotiate(buf);

		assert_true(f == METRICS_TEXT || f == METRICS_OPENMETRICS);
		if (f == METRICS_OPENMETRICS)
			assert_non_null(strcasestr(buf, "openmetrics-text"));
	}
}

/* ---- gzip ---- */

static void test_accepts_gzip(void **state)
{
	assert_false(metrics_accepts_gzip(NULL));
	assert_false(metrics_accepts_gzip(""));
	assert_true(metrics_accepts_gzip("gzip"));		/* what Prometheus sends */
	assert_true(metrics_accepts_gzip("deflate, GZIP;q=0.5"));
	assert_true(metrics_accepts_gzip("br , gzip , identity"));
	assert_false(metrics_accepts_gzip("gzip;q=0"));
	assert_false(metrics_accepts_gzip("gzip;q=0.000, identity"));
	assert_false(metrics_accepts_gzip("x-gzip, deflate, br"));
	assert_false(metrics_accepts_gzip("identity;q=1, gzipped"));
}

/* What gzip_compress() writes, inflated by zlib on its own, is the input; over random
 * input of every size, and Accept-Encoding parsing never crashes on random headers. */
static void test_gzip_round_trip_random(void **state)
{
	static const char *const pieces[] = { "gzip", ",", ";", "q=", "0", "1", "0.5", " ",
					      "identity", "br" };
	char *in = malloc(300000), *out, hdr[128];
	unsigned char *back = malloc(300000);
	size_t outlen, n;
	int i, j;

	assert_non_null(in);
	assert_non_null(back);
	rng_seed("test_metrics gzip");
	for (i = 0; i < 60; i++) {
		n = i == 0 ? 0 : rng_under(300000);
		for (j = 0; j < (int)n; j++)	/* text-like: a small alphabet, some runs */
			in[j] = rng_under(4) ? "mevitop_{}=\",0123456789\n"[rng_under(22)]
					     : (char)rng_u64();
		assert_int_equal(gzip_compress(in, n, &out, &outlen), 0);
		z_stream z = { .next_in = (Bytef *)out, .avail_in = outlen,
			       .next_out = back, .avail_out = 300000 };

		assert_int_equal(inflateInit2(&z, 16 + 15), Z_OK);
		assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
		assert_int_equal(z.total_out, n);
		assert_memory_equal(back, in, n);
		inflateEnd(&z);
		free(out);
	}
	for (i = 0; i < 100000; i++) {
		size_t len = 0, k = rng_under(12);

		while (k-- && len < sizeof(hdr) - 16) {
			const char *p = pieces[rng_under(sizeof(pieces) / sizeof(pieces[0]))];

			memcpy(hdr + len, p, strlen(p));
			len += strlen(p);
		}
		hdr[len] = 0;
		if (metrics_accepts_gzip(hdr))
			assert_non_null(strstr(hdr, "gzip"));
	}
	free(in);
	free(back);
}

/* ---- --listen ---- */

static void test_listen_addr(void **state)
{
	static const struct { const char *in, *text; } good[] = {
		{ ":9797", "127.0.0.1:9797" },
		{ "9797", "127.0.0.1:9797" },
		{ "localhost:1", "127.0.0.1:1" },
		{ "0.0.0.0:80", "0.0.0.0:80" },
		{ "10.1.2.3:65535", "10.1.2.3:65535" },
		{ "[::1]:9797", "[::1]:9797" },
		{ "[::]:8080", "[::]:8080" },
		{ "[0:0::1]:5", "[::1]:5" },
	};
	static const char *const bad[] = {
		"", ":", ":0", ":65536", ":+80", ": 80", ":80 ", ":0x50", ":123456", "1.2.3:80",
		"::1:80", "[::1]", "[::1]80", "[::1]:", "[::1", "host:80", "1.2.3.4:80x",
		"[1.2.3.4]:80", "0x7f.1:80", "1.2.3.4", "256.1.1.1:80", "[fe80::1%eth0]:80",
		"-1", "1.2.3.4:-80",
	};
	struct listen_addr a;
	char why[160];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (listen_addr_parse(good[i].in, &a, why, sizeof(why)))
			fail_msg("'%s' refused: %s", good[i].in, why);
		assert_string_equal(a.text, good[i].text);
	}
	assert_int_equal(listen_addr_parse("[::1]:9797", &a, why, sizeof(why)), 0);
	assert_int_equal(a.family, AF_INET6);
	assert_int_equal(a.port, 9797);
	assert_int_equal(a.addr[15], 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = 0;
		if (!listen_addr_parse(bad[i], &a, why, sizeof(why)))
			fail_msg("'%s' accepted as %s", bad[i], a.text);
		assert_non_null(strstr(why, "invalid listen address"));
	}
}

/* Random strings over the address alphabet: whatever is accepted prints back to a text that
 * parses to the same address. */
static void test_listen_addr_random(void **state)
{
	static const char alphabet[] = "[]:.0123456789abcdefx%- localhost";
	struct listen_addr a, b;
	char buf[80], why[160];
	int i, accepted = 0;

	rng_seed("test_metrics listen");
	for (i = 0; i < 200000; i++) {
		size_t len = rng_under(sizeof(buf)), j;

		for (j = 0; j < len; j++)
			buf[j] = rng_under(16) ? alphabet[rng_under(sizeof(alphabet) - 1)]
					       : (char)(1 + rng_under(255));
		buf[len] = 0;
		if (listen_addr_parse(buf, &a, why, sizeof(why))) {
			assert_true(why[0]);
			continue;
		}
		accepted++;
		assert_true(a.port >= 1);
		assert_int_equal(listen_addr_parse(a.text, &b, why, sizeof(why)), 0);
		assert_int_equal(a.family, b.family);
		assert_int_equal(a.port, b.port);
		assert_memory_equal(a.addr, b.addr, sizeof(a.addr));
	}
	print_message("accepted %d of 200000\n", accepted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_format),
		cmocka_unit_test(test_openmetrics_format),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_escaping_random),
		cmocka_unit_test(test_memo_random),
		cmocka_unit_test(test_negotiate),
		cmocka_unit_test(test_negotiate_random),
		cmocka_unit_test(test_accepts_gzip),
		cmocka_unit_test(test_gzip_round_trip_random),
		cmocka_unit_test(test_listen_addr),
		cmocka_unit_test(test_listen_addr_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
