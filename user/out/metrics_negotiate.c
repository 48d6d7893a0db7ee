// SPDX-License-Identifier: GPL-2.0
/* Content negotiation on the Accept header (RFC 9110 media ranges, as Prometheus sends them:
 * "application/openmetrics-text;version=1.0.0,...,text/plain;version=0.0.4;q=0.5,*\/\*;q=0.1"). */
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include "out/metrics.h"

#define ACCEPT_MAX_RANGES 32		/* the rest of a longer header is ignored */

struct range {
	enum metrics_format fmt;
	bool known;			/* a format mevitop serves */
	int q;				/* quality, in thousandths */
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* [s, e) without surrounding blanks. */
static void trim(const char **s, const char **e)
{
	while (*s < *e && is_space(**s))
		(*s)++;
	while (*e > *s && is_space((*e)[-1]))
		(*e)--;
}

static bool token_is(const char *s, const char *e, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(e - s) == n && !strncasecmp(s, word, n);
}

/* "1", "0.5", "0.125", "1.000"; anything else is 0 (refused), as the Go clients read it. */
static int parse_q(const char *s, const char *e)
{
	int q, scale = 100;

	if (s == e || (*s != '0' && *s != '1'))
		return 0;
	q = (*s++ - '0') * 1000;
	if (s == e)
		return q;
	if (*s++ != '.')
		return 0;
	for (; s < e; s++, scale /= 10) {
		if (*s < '0' || *s > '9' || !scale)
			return 0;
		q += (*s - '0') * scale;
	}
	return q > 1000 ? 0 : q;
}

/* One media range [s, e): type/subtype then ;name=value parameters. */
static struct range parse_range(const char *s, const char *e)
{
	struct range r = { .q = 1000 };
	const char *semi = memchr(s, ';', (size_t)(e - s)), *te = semi ? semi : e;
	const char *version = NULL, *version_end = NULL;
	bool om, text;

	trim(&s, &te);
	om = token_is(s, te, "application/openmetrics-text");
	text = token_is(s, te, "text/plain");
	while (semi) {
		const char *ps = semi + 1, *pe, *eq;

		semi = memchr(ps, ';', (size_t)(e - ps));
		pe = semi ? semi : e;
		eq = memchr(ps, '=', (size_t)(pe - ps));
		if (!eq)
			continue;
		const char *ns = ps, *ne = eq, *vs = eq + 1, *ve = pe;

		trim(&ns, &ne);
		trim(&vs, &ve);
		if (ve - vs >= 2 && *vs == '"' && ve[-1] == '"') {
			vs++;
			ve--;
		}
		if (token_is(ns, ne, "q"))
			r.q = parse_q(vs, ve);
		else if (token_is(ns, ne, "version")) {
			version = vs;
			version_end = ve;
		}
	}
	if (om && (!version || token_is(version, version_end, "1.0.0") ||
		   token_is(version, version_end, "0.0.1"))) {
		r.known = true;
		r.fmt = METRICS_OPENMETRICS;
	} else if (text && (!version || token_is(version, version_end, "0.0.4"))) {
		r.known = true;
		r.fmt = METRICS_TEXT;
	}
	return r;
}

enum metrics_format metrics_negotiate(const char *accept)
{
	struct range best = { .fmt = METRICS_TEXT, .q = 0 };
	const char *s = accept;
	size_t n = 0;

	if (!accept)
		return METRICS_TEXT;
	/* Quotes do not nest commas in the values Prometheus sends; a quoted comma elsewhere
	 * only splits a range in two, which then matches nothing. */
	while (*s && n < ACCEPT_MAX_RANGES) {
		const char *e = strchr(s, ',');
		struct range r;

		if (!e)
			e = s + strlen(s);
		r = parse_range(s, e);
		n++;
		/* Highest quality wins; at equal quality the header's order decides. */
		if (r.known && r.q > best.q)
			best = r;
		s = *e ? e + 1 : e;
	}
	return best.q ? best.fmt : METRICS_TEXT;
}

bool metrics_accepts_gzip(const char *accept_encoding)
{
	const char *s = accept_encoding;
	size_t n = 0;

	while (s && *s && n++ < ACCEPT_MAX_RANGES) {
		const char *e = strchr(s, ','), *semi, *te, *q;

		if (!e)
			e = s + strlen(s);
		semi = memchr(s, ';', (size_t)(e - s));
		te = semi ? semi : e;
		trim(&s, &te);
		if (token_is(s, te, "gzip")) {
			/* "gzip;q=0" refuses it; any other quality accepts it. */
			q = semi ? strstr(semi, "q=") : NULL;
			if (!q || q >= e)
				return true;
			const char *qe = q + 2;

			while (qe < e && !is_space(*qe) && *qe != ';')
				qe++;
			return parse_q(q + 2, qe) > 0;
		}
		s = *e ? e + 1 : e;
	}
	return false;
}

const char *metrics_content_type(enum metrics_format f)
{
	return f == METRICS_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
					: "text/plain; version=0.0.4; charset=utf-8";
}
