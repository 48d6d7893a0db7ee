/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing recordings (doc/recording-format.md): zstd-compressed frames appended to FILE;
 * with a size limit FILE is rotated to FILE.1 at a keyframe.  No /proc, no ncurses: bytes
 * and the model only.
 */
#ifndef MEVITOP_REC_WRITER_H
#define MEVITOP_REC_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "out/json.h"

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
void rec_writer_close(struct rec_writer *w);

#endif
