/* SPDX-License-Identifier: GPL-2.0 */
/* The page cache members of a snapshot read back from their text (a recording's page cache
 * section, json_files.h): the memory summary and the largest files, for `mevitop report` and replay's header. */
#ifndef MEVITOP_JSON_FILES_READ_H
#define MEVITOP_JSON_FILES_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/fcache.h"

#define FILES_BRIEF_TOP 3

struct files_brief {
	bool have_mem;			/* every field of mem below was there */
	struct mem_summary mem;		/* total, free, available, anon, file, shmem, kernel,
					 * swap_total, swap_used, accounted */
	size_t n;
	struct {
		char path[256];
		uint64_t cached;	/* pages */
	} top[FILES_BRIEF_TOP];		/* the first files listed (the largest) */
};

/* 0, or -ENOENT when text holds neither. */
int json_files_brief(const char *text, struct files_brief *b);

#endif
