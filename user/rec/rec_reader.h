/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading recordings (doc/recording-format.md): the frame headers of FILE.1 (when it
 * continues into FILE) and FILE are indexed, and any frame is decoded by starting at the
 * keyframe before it.  No /proc, no ncurses: bytes and the model only.
 */
#ifndef MEVITOP_REC_READER_H
#define MEVITOP_REC_READER_H

#include <stddef.h>
#include <stdint.h>
#include "out/json.h"

struct rec_frame_info {
	uint64_t mono_ns;
	double wall;
	uint8_t type;			/* REC_KEYFRAME or REC_DELTA */
	uint8_t seg;			/* 0: FILE.1, 1: FILE */
	uint64_t off;			/* of the payload */
	uint32_t clen, rlen, crc;
};

struct rec_reader;

/* Opens and indexes a recording.  A damaged or cut-off tail ends the index (rec_warning says
 * where and why); a file that is not a readable recording is an error. */
int rec_open(const char *path, struct rec_reader **out, char *why, size_t whylen);
void rec_close(struct rec_reader *r);
size_t rec_frames(const struct rec_reader *r);
const struct rec_frame_info *rec_info(const struct rec_reader *r, size_t i);
/* CLOCK_MONOTONIC when the recording started: times are given from it. */
uint64_t rec_start_ns(const struct rec_reader *r);
const char *rec_warning(const struct rec_reader *r);
/* Index of the last frame at or before mono_ns; SIZE_MAX if none is. */
size_t rec_find(const struct rec_reader *r, uint64_t mono_ns);
/* Decodes frame i (valid until the next call); -EBADMSG with why for a damaged frame. */
int rec_load(struct rec_reader *r, size_t i, struct json_frame *f, uint32_t *flags,
	     char *why, size_t whylen);

#endif
