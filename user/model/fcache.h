/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The page cache model: the machine's memory summary and every file with pages in the page
 * cache, one row per (dev, ino), whether open, mapped or neither (doc/pagecache.md).
 *
 * Data only, like model.h: the engine fills a table (user/kernel/fcache_*.c read the kernel)
 * and the UI, the JSON writer and the metrics read it under the engine lock:
 *
 *	engine_lock(e);
 *	const struct mem_summary *m = engine_memory(e);		// never NULL
 *	struct fcache *t = engine_fcache(e);			// NULL: files not watched
 *	size_t n;
 *	struct fc_file **v = fcache_sorted(t, FC_SORT_CACHED, &n);
 *	...
 *	engine_unlock(e);
 *
 * Pointers into the table (rows, names, page sets, the sorted array) are valid until the
 * lock is released: the engine changes the table at each refresh.
 */
#ifndef MEVITOP_FCACHE_H
#define MEVITOP_FCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/pageset.h"

/* The whole machine, in bytes (/proc/meminfo), as of the last refresh. */
struct mem_summary {
	uint64_t total;		/* MemTotal */
	uint64_t free;		/* MemFree */
	uint64_t available;	/* MemAvailable */
	uint64_t anon;		/* AnonPages */
	uint64_t file;		/* Cached + Buffers: the page cache, shmem included */
	uint64_t shmem;		/* Shmem: tmpfs, /dev/shm, memfd, SysV, shared anonymous */
	uint64_t kernel;	/* Slab + KernelStack + PageTables + SecPageTables + Percpu +
				 * VmallocUsed: what the kernel holds for itself */
	uint64_t swap_total;	/* SwapTotal */
	uint64_t swap_used;	/* SwapTotal - SwapFree */
	uint64_t accounted;	/* what mevitop attributes: accounted_anon + accounted_files */
	uint64_t accounted_anon;	/* watched processes' anonymous pages, each once (the sum
					 * of their Pss_Anon, or for the whole system AnonPages
					 * less mevitop's own): <= anon */
	bool anon_meminfo;	/* accounted_anon is AnonPages less mevitop's own Pss_Anon */
	uint64_t accounted_files;	/* the cached pages of the files in the table: ~ file */
	uint64_t anon_pending;	/* processes whose Pss_Anon is not read yet (their model's
				 * resident anonymous pages stand in) */
	uint64_t anon_unreadable;	/* processes whose Pss_Anon cannot be read (the same) */
	uint64_t cached;	/* Cached alone (the figure the files sum to, doc/pagecache.md) */
	uint64_t buffers;	/* Buffers (block device page cache, not per file) */
	uint64_t ts_ns;		/* CLOCK_MONOTONIC of the read; 0: never read */
};

enum fc_kind {
	FC_REGULAR,	/* a file on a disk filesystem (ext4, xfs, overlayfs upper, ...) */
	FC_TMPFS,	/* a file on a mounted tmpfs (/dev/shm, /tmp, /run) */
	FC_MEMFD,	/* memfd_create(2): name is "memfd:NAME" */
	FC_DELETED,	/* unlinked, still held open or mapped */
	FC_SYSV,	/* a SysV shared memory segment: name is "SYSV key=0x... shmid=N" */
	FC_BLOCK,	/* a block device's own cache (buffers) */
	FC_OTHER,	/* anything else with pages (pseudo filesystems) */
	FC_ANON_SHMEM,	/* a shared anonymous mapping's (MAP_SHARED|MAP_ANONYMOUS) memory */
	FC_KIND_COUNT,
};

/* Where fc_file.name came from, best first; FC_NAME_NONE: name is "dev:ino" and why says
 * why there is no better one. */
enum fc_name_src {
	FC_NAME_NONE,
	FC_NAME_PATH,		/* a path that opens this inode now */
	FC_NAME_PROC,		/* /proc/PID/fd or /proc/PID/maps of a process holding it */
	FC_NAME_SYSV,		/* /proc/sysvipc/shm */
	FC_NAME_FILE_ARG,	/* --file PATH as given */
	FC_NAME_KERNEL,		/* the kernel's own: the dentry's name up to its superblock's
				 * root (a filesystem not mounted here, the internal shm mount),
				 * or a block device's name; why may add what it is */
};

/* Page counts of one file (cachestat(2)'s fields; without an fd only cached is known and
 * the rest are 0 with fc_file.have_stat false). */
struct fc_pages {
	uint64_t cached;
	uint64_t dirty;
	uint64_t writeback;
	uint64_t evicted;		/* pages of the file evicted since it was cached ... */
	uint64_t recently_evicted;	/* ... of which recently (the kernel's workingset view) */
};

struct fc_file {
	uint64_t dev;			/* makedev(major, minor) as stat(2) gives st_dev */
	uint64_t ino;
	uint32_t generation;		/* i_generation (0 if unknown) */
	enum fc_kind kind;
	const char *name;		/* the path or best name, never NULL */
	enum fc_name_src name_src;
	const char *why;		/* name_src == FC_NAME_NONE: why (e.g. "no handle: ESTALE"),
					 * else NULL */
	uint64_t size;			/* i_size, bytes */
	struct fc_pages pages;
	bool have_stat;			/* pages.dirty.. come from cachestat(2) */

	/* Change since the previous refresh, per second of that interval (tracepoints: folios
	 * added and deleted, in pages; tmpfs: the difference of cached counts). */
	double adds_per_sec;
	double evictions_per_sec;
	uint64_t adds, evictions;	/* cumulative since mevitop started watching */

	/* Watched processes that map it (pids, sorted), from the process model's file
	 * mappings (dev, ino). */
	const pid_t *mapped_by;
	size_t nmapped_by;
	const char *memcg;		/* cgroup path of the memory cgroup charged, or NULL */

	/* Page sets, page indexes in the file: only for watched files (--file, or asked for
	 * with fcache_want_pages()); NULL otherwise.  Every cached page is in cached; dirty
	 * and writeback are subsets of it. */
	bool watched;
	struct pageset *cached_set;
	struct pageset *dirty_set;
	struct pageset *writeback_set;

	/* Recent add/eviction activity per block of pages (watched files only), for the
	 * heatmap's heat layer: per-second rates with the process model's half life. */
	/* (not yet) */

	/* Reader bookkeeping (the engine's): the model does not interpret these. */
	uint64_t seen_gen;		/* refresh generation it was last seen in */
	uint64_t stat_gen;		/* ... it was last counted exactly in */
	uint32_t flags;
	uint32_t name_tries;
	uint64_t sb_magic;		/* its superblock's s_magic, 0 if unknown */
	uint64_t kaddr;			/* the inode's kernel address, 0 if unknown */
	uint64_t win_adds, win_dels;	/* pages added / deleted this interval */
	uint16_t mode;			/* i_mode */
	int fd;				/* held open (watched files), else -1 */
	const char *watch_path;		/* --file's PATH as given, or NULL */
};

/* Sort keys for fcache_sorted(); the order is descending for counts, ascending for names;
 * ties by (dev, ino). */
enum fc_sort {
	FC_SORT_CACHED,
	FC_SORT_DIRTY,
	FC_SORT_WRITEBACK,
	FC_SORT_EVICTED,
	FC_SORT_ADDS,		/* adds_per_sec */
	FC_SORT_EVICTIONS,	/* evictions_per_sec */
	FC_SORT_SIZE,
	FC_SORT_NAME,
	FC_SORT_COUNT,
};

struct fcache;

/* Totals over the table (pages). */
struct fc_totals {
	uint64_t files;
	struct fc_pages pages;
	uint64_t by_kind[FC_KIND_COUNT];	/* cached pages per kind */
};

struct fcache *fcache_new(void);		/* NULL on ENOMEM */
void fcache_free(struct fcache *t);		/* NULL is fine */

/* --- readers (under the engine lock) --- */
size_t fcache_count(const struct fcache *t);
struct fc_file *fcache_find(const struct fcache *t, uint64_t dev, uint64_t ino);
/* Every row sorted by key; the array belongs to the table (valid until the next call or
 * change).  NULL with *n == 0 when empty or t is NULL. */
struct fc_file **fcache_sorted(struct fcache *t, enum fc_sort key, size_t *n);
/* The k largest rows by cached pages into out[0..k) in fcache_sorted(FC_SORT_CACHED)'s
 * order, in one pass (no sort of the whole table); returns how many (<= k). */
size_t fcache_top_cached(const struct fcache *t, struct fc_file **out, size_t k);
void fcache_totals(const struct fcache *t, struct fc_totals *out);
const char *fcache_kind_name(enum fc_kind k);	/* "regular", "tmpfs", "memfd", ... */
/* Refresh generation: +1 each time the engine updated the table (a view redraws on change). */
uint64_t fcache_generation(const struct fcache *t);

/* Ask for (or stop asking for) a file's page sets: the engine fills cached_set, dirty_set
 * and writeback_set from the next refresh on (the Files view's heatmap).  0, or -ENOENT
 * if the file is not in the table. */
int fcache_want_pages(struct fcache *t, uint64_t dev, uint64_t ino, bool on);
#define FC_WANTED_MAX 4		/* asks kept at once; a further one drops the oldest */
/* The engine: fn for each row a view asked pages for (and that is still in the table). */
void fcache_each_wanted(struct fcache *t, void (*fn)(struct fc_file *f, void *arg), void *arg);

/* --- writers (the engine) --- */
/* The row of (dev, ino), created empty (name "dev:ino") if new; NULL on ENOMEM. */
struct fc_file *fcache_get(struct fcache *t, uint64_t dev, uint64_t ino);
int fcache_file_set_name(struct fc_file *f, const char *name, enum fc_name_src src,
		     const char *why);
int fcache_file_set_memcg(struct fc_file *f, const char *memcg);
int fcache_file_set_mapped_by(struct fc_file *f, const pid_t *pids, size_t n);
/* Drops rows not seen in generation gen (and not watched); returns how many. */
size_t fcache_sweep(struct fcache *t, uint64_t gen);
void fcache_remove(struct fcache *t, struct fc_file *f);
void fcache_bump(struct fcache *t);		/* generation + 1, sorted arrays stale */
size_t fcache_bytes(const struct fcache *t);	/* heap bytes */
/* Visit every row (no order); stops when fn returns non-zero and returns that. */
int fcache_each(struct fcache *t, int (*fn)(struct fc_file *f, void *arg), void *arg);

#endif
