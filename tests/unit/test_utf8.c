// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for user/lib/utf8.c: utf8_json_escape() against a reference written differently
 * (code points decoded by arithmetic and checked by range, then re-encoded), on fixed
 * cases and on seeded random byte strings biased towards quotes, control characters and
 * broken or overlong UTF-8; and truncation at every buffer size never splits an escape.
 *
 * MEVITOP_TEST_SEED=<n> replays a run; the seed in use is always printed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "lib/utf8.h"

#define MAXLEN	48

/* Code point at s (*n bytes), or -1 (*n = 1) for a byte that starts no valid sequence. */
static long ref_decode(const unsigned char *s, size_t *n)
{
	static const long min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len, i;
	long cp;

	*n = 1;
	if (s[0] < 0x80)
		return s[0];
	for (len = 0; len < 8 && (s[0] & (0x80 >> len)); len++)
		;
	if (len < 2 || len > 4)
		return -1;
	cp = s[0] & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*n = len;
	return cp;
}

static size_t ref_encode(long cp, char *out)
{
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The escaped text, and where each piece (one escape or character) ends. */
static size_t ref_escape(const char *src, char *out, size_t *ends, size_t *npieces)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0, n;

	*npieces = 0;
	while (*s) {
		long cp = ref_decode(s, &n);

		if (cp == '"')
			o += (size_t)sprintf(out + o, "\\\"");
		else if (cp == '\\')
			o += (size_t)sprintf(out + o, "\\\\");
		else if (cp == '\n')
			o += (size_t)sprintf(out + o, "\\n");
		else if (cp == '\t')
			o += (size_t)sprintf(out + o, "\\t");
		else if (cp == '\r')
			o += (size_t)sprintf(out + o, "\\r");
		else if ((cp >= 0 && cp < 0x20) || cp == 0x7f)
			o += (size_t)sprintf(out + o, "\\u%04lx", cp);
		else if (cp < 0)
			o += (size_t)sprintf(out + o, "\\ufffd");
		else if (cp < 0x80)
			out[o++] = (char)cp;
		else
			o += ref_encode(cp, out + o);
		ends[(*npieces)++] = o;
		s += n;
	}
	out[o] = 0;
	return o;
}

static void check(const char *src)
{
	char want[MAXLEN * 6 + 1], got[MAXLEN * 6 + 8];
	size_t ends[MAXLEN], npieces, n, len, i, fit;

	n = ref_escape(src, want, ends, &npieces);
	assert_int_equal(utf8_json_escape(NULL, 0, src), n);
	memset(got, 'X', sizeof(got));
	assert_int_equal(utf8_json_escape(got, sizeof(got), src), n);
	assert_string_equal(got, want);
	/* Cut short: the longest run of whole pieces that fits, then the NUL, nothing past. */
	for (len = 1; len <= n + 1; len++) {
		memset(got, 'X', sizeof(got));
		assert_int_equal(utf8_json_escape(got, len, src), n);
		for (fit = 0, i = 0; i < npieces && ends[i] < len; i++)
			fit = ends[i];
		assert_int_equal(strlen(got), fit);
		assert_memory_equal(got, want, fit);
		assert_int_equal(got[len], 'X');
	}
}

static void test_fixed(void **state)
{
	char out[128];

	(void)state;
	utf8_json_escape(out, sizeof(out), "a\"b\\c\nd\te\rf\x01g\x7fh");
	assert_string_equal(out, "a\\\"b\\\\c\\nd\\te\\rf\\u0001g\\u007fh");
	utf8_json_escape(out, sizeof(out), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	assert_string_equal(out, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* invalid: a lone continuation, overlong '/', a surrogate, past U+10FFFF, cut short */
	utf8_json_escape(out, sizeof(out), "\x80|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82");
	assert_string_equal(out, "\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
			    "\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd");
	assert_int_equal(utf8_json_escape(out, 0, "abc"), 3);
	assert_int_equal(utf8_json_escape(out, sizeof(out), ""), 0);
	assert_string_equal(out, "");
	check("a\"b\\c\nd\xff\xc3\xa9\xf0\x9f\x98\x80");
}

static void test_random(void **state)
{
	static const unsigned char special[] = { '"', '\\', '\n', '\t', '\r', 1, 0x1f, 0x7f,
		0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff };
	char src[MAXLEN + 1];
	int round;

	(void)state;
	rng_seed("test_random");
	for (round = 0; round < 20000; round++) {
		size_t len = rng_under(MAXLEN + 1), i;

		for (i = 0; i < len; i++) {
			uint64_t r = rng_under(4);

			src[i] = (char)(r == 0 ? special[rng_under(sizeof(special))]
				      : r == 1 ? 0x80 | rng_under(0x40)	/* continuation */
				      : r == 2 ? 'a' + rng_under(26)
					       : 1 + rng_under(255));
		}
		src[len] = 0;
		check(src);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
