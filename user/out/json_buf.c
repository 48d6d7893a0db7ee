// SPDX-License-Identifier: GPL-2.0
/* The JSON writers' growing buffer (json_buf.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

void json_buf_str(struct buf *b, const char *s)
{
	char small[256], *esc = small;
	size_t n = utf8_json_escape(NULL, 0, s ? s : "");

	if (n >= sizeof(small) && !(esc = malloc(n + 1))) {
		b->oom = true;
		return;
	}
	utf8_json_escape(esc, n + 1, s ? s : "");
	json_buf_put(b, "\"%s\"", esc);
	if (esc != small)
		free(esc);
}

void json_buf_u64s(struct buf *b, bool comma, const uint64_t *v, size_t n)
{
	/* At most 20 digits and a comma each: room for all, then no printf on the way. */
	if (array_reserve_n(b->p, b->len + n * 21 + 2, b->cap, 8192)) {
		b->oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char digits[20];
		int k = 0;
		uint64_t x = v[i];

		if (comma || i)
			b->p[b->len++] = ',';
		do
			digits[k++] = (char)('0' + x % 10);
		while ((x /= 10));
		while (k)
			b->p[b->len++] = digits[--k];
	}
	b->p[b->len] = '\0';
}
