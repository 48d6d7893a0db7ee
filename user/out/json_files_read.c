// SPDX-License-Identifier: GPL-2.0
/*
 * The page cache members read back (json_files_read.h): what a recording's page cache
 * section holds is the text json_files_text wrote, but a recording is a file from anywhere,
 * so every number is bounded and a member that is not where it should be is just missing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "out/json_files_read.h"

/* The unsigned number after "key": within [p, end), or false. */
static bool number(const char *p, const char *end, const char *key, uint64_t *out)
{
	size_t kl = strlen(key);

	for (const char *q = p; q && q + kl + 3 < end; q = memchr(q + 1, '"', end - q - 1)) {
		char *stop;
		unsigned long long v;

		if (q[0] != '"' || strncmp(q + 1, key, kl) || q[kl + 1] != '"' || q[kl + 2] != ':')
			continue;
		q += kl + 3;
		while (q < end && *q == ' ')
			q++;
		if (q >= end || *q < '0' || *q > '9')
			return false;
		errno = 0;
		v = strtoull(q, &stop, 10);
		if (errno || stop > end)
			return false;
		*out = v;
		return true;
	}
	return false;
}

/* The end of the object or array opened at p ('{' or '['), strings skipped; NULL if none. */
static const char *closing(const char *p)
{
	int depth = 0;
	bool str = false;

	for (; *p; p++) {
		if (str) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				str = false;
		} else if (*p == '"') {
			str = true;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (--depth == 0)
				return p;
		}
	}
	return NULL;
}

/* A JSON string at p (after its opening quote) into out, escapes kept as the character
 * they escape (\uXXXX as '?'); the position after the closing quote, or NULL. */
static const char *string(const char *p, char *out, size_t len)
{
	size_t n = 0;

	for (; *p && *p != '"'; p++) {
		char c = *p;

		if (c == '\\') {
			if (!p[1])
				return NULL;
			c = *++p;
			if (c == 'u') {
				for (int k = 0; k < 4; k++)
					if (!*++p)
						return NULL;
				c = '?';
			} else if (c == 'n' || c == 't') {
				c = ' ';
			}
		}
		if (n + 1 < len)
			out[n++] = c;
	}
	if (len)
		out[n] = 0;
	return *p == '"' ? p + 1 : NULL;
}

static void memory(const char *text, struct files_brief *b)
{
	const char *p = strstr(text, "\"memory\": {"), *end;
	static const struct { const char *key; size_t off; } keys[] = {
		{ "total", offsetof(struct mem_summary, total) },
		{ "free", offsetof(struct mem_summary, free) },
		{ "available", offsetof(struct mem_summary, available) },
		{ "anon", offsetof(struct mem_summary, anon) },
		{ "file", offsetof(struct mem_summary, file) },
		{ "shmem", offsetof(struct mem_summary, shmem) },
		{ "kernel", offsetof(struct mem_summary, kernel) },
		{ "swap_total", offsetof(struct mem_summary, swap_total) },
		{ "swap_used", offsetof(struct mem_summary, swap_used) },
		{ "accounted", offsetof(struct mem_summary, accounted) },
	};

	if (!p || !(end = closing(p + 10)))
		return;
	b->have_mem = true;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!number(p + 10, end, keys[i].key, (uint64_t *)((char *)&b->mem + keys[i].off)))
			b->have_mem = false;
}

int json_files_brief(const char *text, struct files_brief *b)
{
	const char *p, *end;

	memset(b, 0, sizeof(*b));
	if (!text)
		return -ENOENT;
	memory(text, b);
	p = strstr(text, "\"files\": [");
	end = p ? closing(p + 9) : NULL;
	for (p = p ? p + 10 : NULL; p && end && b->n < FILES_BRIEF_TOP; ) {
		const char *obj = strstr(p, "{\"path\": \""), *oend;

		if (!obj || obj > end || !(oend = closing(obj)))
			break;
		if (string(obj + 10, b->top[b->n].path, sizeof(b->top[b->n].path)) &&
		    number(obj, oend, "cached", &b->top[b->n].cached))
			b->n++;
		p = oend + 1;
	}
	return b->have_mem || b->n ? 0 : -ENOENT;
}
