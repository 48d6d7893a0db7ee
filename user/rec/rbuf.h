/* SPDX-License-Identifier: GPL-2.0 */
/* The recording's output buffer: grows by doubling; a failed allocation is sticky (oom),
 * so an encoder checks once at the end.  Varints are LEB128 (rec_bytes.h). */
#ifndef MEVITOP_REC_RBUF_H
#define MEVITOP_REC_RBUF_H

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

#endif
