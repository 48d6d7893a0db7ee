// SPDX-License-Identifier: GPL-2.0
/* The JSON writers' growing buffer (json_buf.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "out/json_buf.h"
#include "lib/utf8.h"

void json_buf_put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += n;
			return;
		}
		if (array_reserve_n(b->p, b->len + (size_t)n + 1, b->cap, 8192)) {
			b->oom = true;
			return;
		}
	}
}

/* Room for n more bytes and the terminating NUL. */
static bool reserve(struct buf *b, size_t n)
{
	if (array_reserve_n(b->p, b->len + n + 1, b->cap, 8192)) {
		b->oom = true;
		return false;
	}
	return true;
}

void json_buf_str(struct buf *b, const char *s)
{
	size_t n = utf8_json_escape(NULL, 0, s ? s : "");

	/* Escaped in place: no copy, no printf (a snapshot has a comm per process). */
	if (!reserve(b, n + 2))
		return;
	b->p[b->len++] = '"';
	utf8_json_escape(b->p + b->len, n + 1, s ? s : "");
	b->len += n;
	b->p[b->len++] = '"';
	b->p[b->len] = '\0';
}

/* n bytes of s, and a NUL after them (the text stays a C string). */
void json_buf_mem(struct buf *b, const char *s, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* x in decimal at b's end; room for 20 digits was reserved. */
static void put_digits(struct buf *b, uint64_t x)
{
	char digits[20];
	int k = 0;

	do
		digits[k++] = (char)('0' + x % 10);
	while ((x /= 10));
	while (k)
		b->p[b->len++] = digits[--k];
	b->p[b->len] = '\0';
}

void json_buf_u64(struct buf *b, uint64_t x)
{
	if (reserve(b, 20))
		put_digits(b, x);
}

void json_buf_i64(struct buf *b, int64_t x)
{
	if (!reserve(b, 21))
		return;
	if (x < 0)
		b->p[b->len++] = '-';
	put_digits(b, x < 0 ? -(uint64_t)x : (uint64_t)x);
}

void json_buf_u64s(struct buf *b, bool comma, const uint64_t *v, size_t n)
{
	/* At most 20 digits and a comma each: room for all, then no printf on the way. */
	if (!reserve(b, n * 21 + 1))
		return;
	for (size_t i = 0; i < n; i++) {
		if (comma || i)
			b->p[b->len++] = ',';
		put_digits(b, v[i]);
	}
	b->p[b->len] = '\0';
}
