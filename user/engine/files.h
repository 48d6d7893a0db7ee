/* SPDX-License-Identifier: GPL-2.0 */
/* The engine's page cache reader, shared by files.c (refresh) and files_rows.c (names,
 * exact counts, who maps what, --file). */
#ifndef MEVITOP_ENGINE_FILES_H
#define MEVITOP_ENGINE_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include "engine/engine_int.h"

/* struct fc_file.flags */
#define FF_CHANGED	(1u << 0)	/* the tracepoints or a re-walk saw it change this tick */
#define FF_DELETED	(1u << 1)	/* no link left (i_nlink 0) */
#define FF_STAT		(1u << 2)	/* pages.dirty.. from cachestat this tick */
#define FF_NO_HANDLE	(1u << 3)	/* open_by_handle_at cannot open it */
#define FF_NAMED_AT_GEN	(1u << 4)	/* its path was read for its current inode */
#define FF_BY_PATH	(1u << 5)	/* opened by its path (tmpfs: handles need a hash) */
#define FF_TREE_TRIED	(1u << 6)	/* its mount's tree was walked for its name */
#define FF_QUEUED	(1u << 7)	/* in files.unnamed */
#define FF_KINFO	(1u << 8)	/* in files.kinfo: the kernel names it first (cheaper) */
#define FF_MEMCG_MISS1	(1u << 9)	/* its memcg id had no path yet (a cgroup made since the */
#define FF_MEMCG_MISS2	(1u << 10)	/* last walk of the tree): asked again, twice at most */

/*
 * Rows by key, not pointer: a row may be removed between two uses of a list, and a key
 * then finds nothing.  The lists keep each tick's work proportional to what changed, not
 * to the rows (100,000 cached files are common).
 */
struct fkey {
	uint64_t dev, ino;
};

struct fkeys {
	struct fkey *v;
	size_t n, cap;
};

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
	struct fkeys touched;		/* rows changed this tick (FF_CHANGED) */
	struct fkeys rated;		/* rows with a rate above 0 at the last tick */
	struct fkeys shm_prev, shm_now;	/* rows the last / this shmem walk saw */
	struct fkeys mapped;		/* rows with mapped_by set */
	struct fkeys unnamed;		/* rows to name (FF_QUEUED) */
	struct fkeys needs_proc;	/* rows only a process can name (memfd, deleted) */
	struct fkeys watched;		/* --file's rows */
	struct fkeys kinfo;		/* rows to ask the kernel about (files_kinfo.c) */
	bool kinfo_added;		/* rows added to it since it was last sorted */
	struct cgids *cgids;		/* memcg ids to paths, NULL: no cgroup2 mount */
	uint64_t cached_total;		/* pages, every row */
	uint64_t taken_pages;		/* adds + dels the deltas gave, since the start */
	uint64_t lost_base;		/* events - taken_pages after the last full re-walk */
	uint64_t ticks;
};

int files_keys_add(struct fkeys *k, const struct fc_file *f);
void files_keys_free(struct fkeys *k);
/* The row of (dev, ino), created (and queued for a name) if new; NULL on ENOMEM. */
struct fc_file *files_row(struct files *fs, uint64_t dev, uint64_t ino);
/* Its cached count, keeping the total; marks it changed this tick. */
void files_set_cached(struct files *fs, struct fc_file *f, uint64_t pages);
void files_touch(struct files *fs, struct fc_file *f);

int files_watch_paths(struct engine *e, char *why, size_t whylen);
/* Without the walk: rows for the files processes hold or map. */
void files_proc_rows(struct engine *e);
/* Names, exact counts, mapped_by, --file's page sets; first: the start (no budget). */
void files_update_rows(struct engine *e, bool first);
int files_close_fd(struct fc_file *f, void *arg);
/* Names and memory cgroups of new rows from the kernel (files_kinfo.c), within a budget. */
void files_kinfo(struct files *fs, bool first);
void files_names_fini(struct engine *e);

#endif
