/* SPDX-License-Identifier: GPL-2.0 */
/* A growing text buffer for JSON lines (json.c, json_files.c) and the metrics text
 * (metrics_format.c): a snapshot reaches its output in one write. */
#ifndef MEVITOP_JSON_BUF_H
#define MEVITOP_JSON_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	char *p;
	size_t len, cap;
	bool oom;		/* an append failed: the text is incomplete */
};

void json_buf_put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A comm or a path is bytes: utf8_json_escape() makes it a valid JSON string whatever they are. */
void json_buf_str(struct buf *b, const char *s);
/* Without printf, for the lines with a row per process: a literal, a number as %" PRIu64
 * and as %" PRId64 print it. */
void json_buf_mem(struct buf *b, const char *s, size_t n);
/* Inline so that a literal's length is known at compile time (a scrape writes ~100,000). */
static inline void json_buf_lit(struct buf *b, const char *s)
{
	json_buf_mem(b, s, __builtin_strlen(s));
}
void json_buf_u64(struct buf *b, uint64_t x);
void json_buf_i64(struct buf *b, int64_t x);
/* n numbers, comma-separated (and one comma first if comma): the web view's page runs are
 * millions of them, too many for a printf each. */
void json_buf_u64s(struct buf *b, bool comma, const uint64_t *v, size_t n);

#endif
