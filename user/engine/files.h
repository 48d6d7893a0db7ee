/* SPDX-License-Identifier: GPL-2.0 */
/* The engine's page cache reader, shared by files.c (refresh) and files_rows.c (names,
 * exact counts, who maps what, --file). */
#ifndef MEVITOP_ENGINE_FILES_H
#define MEVITOP_ENGINE_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include "engine_int.h"

/* struct fc_file.flags */
#define FF_CHANGED	(1u << 0)	/* the tracepoints or a re-walk saw it change this tick */
#define FF_DELETED	(1u << 1)	/* no link left (i_nlink 0) */
#define FF_STAT		(1u << 2)	/* pages.dirty.. from cachestat this tick */
#define FF_NO_HANDLE	(1u << 3)	/* open_by_handle_at cannot open it */
#define FF_NAMED_AT_GEN	(1u << 4)	/* its path was read for its current inode */
#define FF_BY_PATH	(1u << 5)	/* opened by its path (tmpfs: handles need a hash) */
#define FF_TREE_TRIED	(1u << 6)	/* its mount's tree was walked for its name */

struct fcbpf;
struct fcname;

struct files {
	struct fcache *fc;
	struct fcbpf *bpf;		/* NULL: the /proc fallback */
	struct fcname *names;
	uint64_t gen, last_ns;
	uint64_t shm_dev;		/* the internal shm mount's dev (memfd, SysV), 0: unknown */
	uint64_t cur_magic;		/* the superblock the walk is in */
	bool walk_shmem_only;
	uint32_t top;
	uint64_t last_proc_scan_ns;
	uint64_t tree_dev;		/* the tmpfs whose tree is walked next */
	struct files_stats st;
	char **paths;			/* --file's, as given (rows point at them) */
	size_t npaths;
};

int files_watch_paths(struct engine *e, char *why, size_t whylen);
/* Without the walk: rows for the files processes hold or map. */
void files_proc_rows(struct engine *e);
/* Names, exact counts, mapped_by, --file's page sets; first: the start (no budget). */
void files_update_rows(struct engine *e, bool first);
int files_close_fd(struct fc_file *f, void *arg);
void files_names_fini(struct engine *e);

#endif
