/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recording file format, version 2 (the specification is doc/recording-format.md; every
 * constant here is named there).  Integers in fixed fields are little-endian.
 */
#ifndef MEVITOP_REC_FORMAT_H
#define MEVITOP_REC_FORMAT_H

#include <stdint.h>

#define REC_MAGIC		"MEVIREC\n"	/* 8 bytes at offset 0 */
#define REC_VERSION		2
#define REC_FILE_HDR_LEN	40
#define REC_FRAME_MAGIC		0x5246564dU	/* "MVFR" read as a little-endian u32 */
#define REC_FRAME_HDR_LEN	40

enum rec_frame_type {
	REC_KEYFRAME = 1,	/* every process in full */
	REC_DELTA = 2,		/* only what changed since the previous frame */
};

/* Frame entry tag bits (per process). */
#define REC_TAG_COUNTERS	(1u << 0)
#define REC_TAG_LAYOUT		(1u << 1)
#define REC_TAG_PATCH		(1u << 2)	/* layout without runs + changed pages */
#define REC_TAG_SECTIONS	(1u << 3)	/* the process's sections follow */

/* Section kinds (frame sections unless noted). */
#define REC_SECTION_TOUCHES	1	/* exact mode's first touches since the last frame */
#define REC_SECTION_HEAT	2	/* a process section: its heat (record --heat) */
#define REC_SECTION_STACKS	3	/* --stacks: stacks added to the table */
#define REC_SECTION_FIRST_TOUCH	4	/* a process section: --stacks' first touches */
#define REC_SECTION_PARENT	5	/* a process section: its parent pid (JSON ppid) */
#define REC_SECTION_FILES	6	/* the page cache members as live JSON wrote them
					 * ("memory", "files", "files_omitted", "files_stats") */
#define REC_SECTION_SHARE	7	/* a process section: its --sharing pass (rec_share.h) */
#define REC_SECTION_SHARE_COUNTS 8	/* a process section, after 7: its pass's huge pages
					 * and exact map counts */

/* Frame payload flags. */
#define REC_FLAG_MAPS		(1u << 0)	/* live JSON would have printed mappings */

/* Limits a reader enforces, so a hostile file cannot make it allocate without bound. */
#define REC_MAX_RAW		(256u << 20)	/* decompressed payload of one frame */
#define REC_MAX_STR		4096		/* a path */
#define REC_MAX_EXTRA		65536		/* the extra stats (json.c keeps them < 8 KiB) */
#define REC_MAX_FILES_TEXT	(64u << 20)	/* the page cache members (--files-top 0 on
						 * 100,000 files: ~40 MiB) */
#define REC_MAX_PAGE		(1ULL << 52)	/* page numbers: 64-bit addresses >> 12 */
#define REC_MAX_STATE_PAGES	(1ULL << 36)	/* pages in runs, over one frame's processes */
#define REC_MAX_PID		0x7fffffff
#define REC_MAX_TOUCHES		(1u << 20)	/* first touches in one frame */

/* The writer starts a keyframe once the deltas since the last one add up to
 * REC_KEY_DELTA_RATIO times its size -- keyframes are then at most 1/(ratio+1) of the file,
 * and a seek reads at most ratio+1 keyframes' worth -- or after REC_KEYFRAME_EVERY frames
 * (a reader never assumes either). */
#define REC_KEY_DELTA_RATIO	8
#define REC_KEYFRAME_EVERY	300

#endif
