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
#define FF_TOP		(1u << 11)	/* in files.largest.v (files_top.c) */
#define FF_MAPPED	(1u << 12)	/* mapped by a process at this mapped_by (files_rows.c) */
#define FF_DRAINING	(1u << 13)	/* in files.draining */

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

/*
 * The largest rows by cached pages, kept between ticks (files_top.c) so that a refresh and
 * each JSON snapshot or scrape asking for the top k costs what changed, not a pass over the
 * table.  Invariant: every row of the table not in v sorts after bound (fcache_sorted's
 * order: cached descending, then dev, ino), unless complete, when v holds every row.  So the
 * rows of v sorting up to bound, sorted, are the table's first rows.
 */
struct ftop {
	struct fc_file **v;		/* candidates, FF_TOP set; sorted if sorted */
	size_t n, cap;
	size_t size;			/* rows kept at a build or trim: twice the largest k */
	struct { uint64_t cached, dev, ino; } bound;
	bool built, complete, sorted;
	uint64_t builds;		/* passes over the table (a test counts them) */
};

struct fcbpf;
struct fcname;

#define FILES_CUT_DEVS 8
#define FILES_REWALKS 3		/* full walks after one with cuts, at most, one a tick */

struct files {
	struct fcache *fc;
	struct fcbpf *bpf;		/* NULL: the /proc fallback */
	struct fcname *names;
	uint64_t gen, last_ns;
	uint64_t shm_dev;		/* the internal shm mount's dev (memfd, SysV), 0: unknown */
	uint64_t cur_magic;		/* the superblock the walk is in */
	bool walk_shmem_only;
	uint32_t top;
	uint32_t first_listed;		/* the first snapshot lists this many rows only; 0: all */
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
	struct fkeys tagged;		/* rows a walk saw with a dirty/writeback mark: cachestat */
	struct fkeys draining;		/* rows last counted with dirty or writeback pages: they
					 * go clean with no event, so they are counted again */
	bool counts_dirtied;		/* the deltas count pages made dirty (fcache_bpf.h) */
	bool kinfo_added;		/* rows added to it since it was last sorted */
	struct cgids *cgids;		/* memcg ids to paths, NULL: no cgroup2 mount */
	struct fc_totals tot;		/* every row, kept by the setters (files_keys.c) */
	uint64_t map_inputs;		/* rows made, or newly named only by a mapping (deleted,
					 * no handle): mapped_by's inputs beside the processes */
	uint64_t mapped_sig[6];		/* those inputs at the last mapped_by */
	struct ftop largest;
	uint64_t taken_pages;		/* adds + dels + dirtied the deltas gave, since the start */
	uint64_t events_seen;		/* fc_events at the last refresh */
	uint64_t lost_base;		/* events - taken_pages after the last full re-walk */
	uint64_t ticks;
	/* Superblocks the last walk cut short (an inode under its cursor left the list):
	 * their rows it did not see may still hold pages, so none is emptied for that. */
	uint64_t cut_devs[FILES_CUT_DEVS];
	size_t ncut;
	bool cut_all;			/* more than FILES_CUT_DEVS: treat every one as cut */
	uint32_t rewalks_due;		/* full walks still to make after a cut one */
	bool heal_due;			/* deltas were lost and no whole full walk has
					 * emptied the rows it did not see since */
};

int files_keys_add(struct fkeys *k, const struct fc_file *f);
void files_keys_free(struct fkeys *k);
/* The row of (dev, ino), created (and queued for a name) if new; NULL on ENOMEM. */
struct fc_file *files_row(struct files *fs, uint64_t dev, uint64_t ino);
/*
 * The setters of what the totals count (tot: files, pages, by_kind) and the top's order
 * depends on: every change of a row's pages or kind, and its removal, goes through them.
 */
/* Its cached count; marks it changed this tick. */
void files_set_cached(struct files *fs, struct fc_file *f, uint64_t pages);
/* dirty, writeback, evicted and recently_evicted of p (cached is files_set_cached's). */
void files_set_counts(struct files *fs, struct fc_file *f, const struct fc_pages *p);
void files_set_kind(struct files *fs, struct fc_file *f, enum fc_kind kind);
void files_remove(struct files *fs, struct fc_file *f);

/* files_top.c: a row's cached count changed, or it is new (the setters call it). */
void files_top_consider(struct files *fs, struct fc_file *f);
void files_top_drop(struct files *fs, struct fc_file *f);
/* The k largest rows into out[0..k), as fcache_top_cached gives them; returns how many. */
size_t files_top_get(struct files *fs, struct fc_file **out, size_t k);
void files_top_free(struct files *fs);
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
