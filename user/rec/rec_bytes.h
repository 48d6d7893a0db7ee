/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Byte buffers for the recording format: a growing output buffer (rbuf.h) and a bounded
 * input cursor (rcur.h); here the encodings both use.  Variable-length integers are LEB128
 * (7 bits per byte, low bits first).
 */
#ifndef MEVITOP_REC_BYTES_H
#define MEVITOP_REC_BYTES_H

#include <stdint.h>
#include "rec/rbuf.h"
#include "rec/rcur.h"

/* Signed differences as unsigned varints: 0, -1, 1, -2, ... as 0, 1, 2, 3, ... */
uint64_t rec_zigzag(int64_t v);
int64_t rec_unzigzag(uint64_t v);
uint32_t rec_le32(const uint8_t *at);
uint64_t rec_le64(const uint8_t *at);

#endif
