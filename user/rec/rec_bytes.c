// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "rec/rec_bytes.h"

/* Room for n more bytes, doubling.  Not array_reserve: that makes room for one element, and
 * a record appends many bytes at once; a failure is sticky (oom) so one check at the end of
 * an encoding catches it. */
static bool reserve(struct rbuf *b, size_t n)
{
	size_t cap;
	uint8_t *np;

	if (b->oom)
		return false;
	if (b->len + n <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	np = realloc(b->p, cap);
	if (!np) {
		b->oom = true;
		return false;
	}
	b->p = np;
	b->cap = cap;
	return true;
}

void rbuf_bytes(struct rbuf *b, const void *src, size_t n)
{
	if (!n || !reserve(b, n))
		return;
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

void rbuf_u8(struct rbuf *b, uint8_t v)
{
	rbuf_bytes(b, &v, 1);
}

void rbuf_varint(struct rbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n] = v & 0x7f;
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	rbuf_bytes(b, tmp, n);
}

void rbuf_le32(uint8_t *at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		at[i] = v >> (8 * i);
}

void rbuf_le64(uint8_t *at, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		at[i] = v >> (8 * i);
}

/* A float's or a double's bits, little-endian (the reader's rcur_f32/rcur_f64). */
static void put_le(struct rbuf *b, uint64_t bits, size_t n)
{
	uint8_t tmp[8];

	rbuf_le64(tmp, bits);
	rbuf_bytes(b, tmp, n);
}

void rbuf_f32(struct rbuf *b, float v)
{
	uint32_t bits;

	memcpy(&bits, &v, sizeof(bits));
	put_le(b, bits, 4);
}

void rbuf_f64(struct rbuf *b, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	put_le(b, bits, 8);
}

void rbuf_str(struct rbuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	rbuf_varint(b, n);
	rbuf_bytes(b, s, n);
}

void rbuf_free(struct rbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

size_t rcur_left(const struct rcur *c)
{
	return c->bad ? 0 : (size_t)(c->end - c->p);
}

uint8_t rcur_u8(struct rcur *c)
{
	if (c->bad || c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	return *c->p++;
}

uint64_t rcur_varint(struct rcur *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t byte = rcur_u8(c);

		if (c->bad)
			return 0;
		/* The tenth byte may carry only the top bit of a 64-bit value. */
		if (shift == 63 && byte > 1) {
			c->bad = true;
			return 0;
		}
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

uint32_t rec_le32(const uint8_t *at)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v |= (uint32_t)at[i] << (8 * i);
	return v;
}

uint64_t rec_le64(const uint8_t *at)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)at[i] << (8 * i);
	return v;
}

/* n (4 or 8) little-endian bytes; a cursor cut short reads 0 (and turns bad, in rcur_take). */
static uint64_t get_le(struct rcur *c, size_t n)
{
	struct rcur at = rcur_take(c, n);

	if (at.bad)
		return 0;
	return n == 4 ? rec_le32(at.p) : rec_le64(at.p);
}

float rcur_f32(struct rcur *c)
{
	uint32_t bits = get_le(c, 4);
	float v;

	memcpy(&v, &bits, sizeof(v));
	return v;
}

double rcur_f64(struct rcur *c)
{
	uint64_t bits = get_le(c, 8);
	double v;

	memcpy(&v, &bits, sizeof(v));
	return v;
}

char *rcur_str(struct rcur *c, size_t max)
{
	uint64_t n = rcur_varint(c);
	char *s;

	if (c->bad || n > max || n > rcur_left(c) || memchr(c->p, 0, n)) {
		c->bad = true;
		return NULL;
	}
	s = malloc(n + 1);
	if (!s) {
		c->bad = true;
		return NULL;
	}
	memcpy(s, c->p, n);
	s[n] = 0;
	c->p += n;
	return s;
}

struct rcur rcur_take(struct rcur *c, uint64_t n)
{
	struct rcur sub = { .p = c->p, .end = c->p, .bad = true };

	if (!c->bad && n <= rcur_left(c)) {
		sub.end = c->p + n;
		sub.bad = false;
		c->p += n;
	} else {
		c->bad = true;
	}
	return sub;
}

uint64_t rec_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

int64_t rec_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}
