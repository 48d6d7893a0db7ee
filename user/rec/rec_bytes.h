/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Byte buffers for the recording format: a growing output buffer and a bounded input
 * cursor.  Variable-length integers are LEB128 (7 bits per byte, low bits first).  A cursor
 * that runs past its end or reads a malformed number turns `bad` and reads zeros from then
 * on, so a decoder checks once per record instead of at every field.
 */
#ifndef MEVITOP_REC_BYTES_H
#define MEVITOP_REC_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rbuf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

void rbuf_bytes(struct rbuf *b, const void *src, size_t n);
void rbuf_u8(struct rbuf *b, uint8_t v);
void rbuf_varint(struct rbuf *b, uint64_t v);
void rbuf_f32(struct rbuf *b, float v);
void rbuf_f64(struct rbuf *b, double v);
void rbuf_str(struct rbuf *b, const char *s);	/* varint length, bytes (NULL: "") */
void rbuf_le32(uint8_t *at, uint32_t v);
void rbuf_le64(uint8_t *at, uint64_t v);
void rbuf_free(struct rbuf *b);

struct rcur {
	const uint8_t *p, *end;
	bool bad;
};

uint8_t rcur_u8(struct rcur *c);
uint64_t rcur_varint(struct rcur *c);
float rcur_f32(struct rcur *c);
double rcur_f64(struct rcur *c);
/* A string of at most max bytes without NUL into a new allocation (NULL when bad). */
char *rcur_str(struct rcur *c, size_t max);
size_t rcur_left(const struct rcur *c);
/* The next n bytes of c as a cursor of their own (c moves past them; both turn bad when
 * they are not there). */
struct rcur rcur_take(struct rcur *c, uint64_t n);
/* Signed differences as unsigned varints: 0, -1, 1, -2, ... as 0, 1, 2, 3, ... */
uint64_t rec_zigzag(int64_t v);
int64_t rec_unzigzag(uint64_t v);
uint32_t rec_le32(const uint8_t *at);
uint64_t rec_le64(const uint8_t *at);

#endif
