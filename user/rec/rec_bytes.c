// SPDX-License-Identifier: GPL-2.0
/* The recording format's number encodings shared by rbuf.c and rcur.c (rec_bytes.h). */
#include "rec/rec_bytes.h"

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

uint64_t rec_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

int64_t rec_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}
