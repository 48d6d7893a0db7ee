// SPDX-License-Identifier: GPL-2.0
/* The recording's growing output buffer (rbuf.h). */
#include <stdlib.h>
#include <string.h>
#include "rec/rbuf.h"

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
