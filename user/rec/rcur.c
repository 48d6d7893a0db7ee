// SPDX-License-Identifier: GPL-2.0
/* The recording's bounded input cursor (rcur.h). */
#include <stdlib.h>
#include <string.h>
#include "rec/rec_bytes.h"

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
