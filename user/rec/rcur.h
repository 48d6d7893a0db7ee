/* SPDX-License-Identifier: GPL-2.0 */
/* The recording's input cursor: one that runs past its end or reads a malformed number
 * turns `bad` and reads zeros from then on, so a decoder checks once per record. */
#ifndef MEVITOP_REC_RCUR_H
#define MEVITOP_REC_RCUR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
