/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recording files (doc/recording-format.md): the writer appends zstd-compressed frames to
 * FILE and, with a size limit, rotates it to FILE.1 at a keyframe; the reader indexes the
 * frame headers of FILE.1 (when it continues into FILE) and FILE, and decodes any frame by
 * starting at the keyframe before it.  No /proc, no ncurses: bytes and the model only.
 */
#ifndef MEVITOP_REC_FILE_H
#define MEVITOP_REC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "json.h"

struct rec_writer_opts {
	const char *path;
	uint64_t max_size;		/* bytes over FILE and FILE.1; 0: unbounded */
	bool heat;			/* --heat: record the heat too */
	bool fsync_every;		/* --fsync: fdatasync every frame (else keyframes) */
	unsigned keyframe_every;	/* most frames from a keyframe to the next; 0:
					 * REC_KEYFRAME_EVERY */
};

struct rec_writer;

/* Creates FILE (the header is written with the first frame, whose time starts the recording). */
int rec_writer_open(const struct rec_writer_opts *o, struct rec_writer **out, char *why,
		    size_t whylen);
/* Appends one frame (one write(2) of header and payload).  flags: REC_FLAG_*. */
int rec_writer_frame(struct rec_writer *w, const struct json_frame *f, uint32_t flags,
		     char *why, size_t whylen);
/* Bytes written to the current segment, and frames written in all. */
uint64_t rec_writer_size(const struct rec_writer *w);
void rec_writer_close(struct rec_writer *w);

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
