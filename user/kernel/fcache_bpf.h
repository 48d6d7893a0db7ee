/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The page cache from BPF (bpf/fcache.bpf.c): a complete walk of the inodes with cached
 * pages, and per-inode add/delete counts from the filemap tracepoints since the last take.
 */
#ifndef MEVITOP_FCACHE_BPF_H
#define MEVITOP_FCACHE_BPF_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "fcache_rec.h"	/* bpf/: struct fc_rec, fc_key, fc_delta */

struct fcbpf;

struct fcbpf_walk_stats {
	uint64_t steps, inodes, sbs, cuts;	/* list nodes visited, records, superblocks */
	uint64_t calls;				/* iterator runs */
	uint64_t ns;				/* wall time of the walk */
};

/* fcache_bpf_open's hooks: none, a walk only. */
#define FCBPF_FILEMAP	(1u << 0)	/* the filemap add and delete tracepoints */
#define FCBPF_DIRTY	(1u << 1)	/* writeback_dirty_folio too (needs FCBPF_FILEMAP) */

struct features;
/* The hooks this kernel and the switches allow (--disable dirty_tp). */
unsigned int fcache_bpf_hooks(const struct features *f);

/* Loads the programs and attaches the hooks asked for (FCBPF_*). */
int fcache_bpf_open(unsigned int hooks, struct fcbpf **out, char *why, size_t whylen);
/* Whether cached pages made dirty are counted (FCBPF_DIRTY attached): dirtied in deltas. */
bool fcache_bpf_counts_dirtied(const struct fcbpf *b);
void fcache_bpf_close(struct fcbpf *b);

/* One pass (FC_WALK_ALL or FC_WALK_SHMEM); fn gets each record in list order, a non-zero
 * return stops the pass and is returned. */
typedef int (*fcbpf_rec_fn)(void *ctx, const struct fc_rec *r);
int fcache_bpf_walk(struct fcbpf *b, int mode, fcbpf_rec_fn fn, void *ctx,
	       struct fcbpf_walk_stats *st);

/* Takes (reads and clears, atomically per entry) the counts of every inode that changed
 * since the last take; the per-CPU parts are summed, nrpages/size are the newest. */
typedef void (*fcbpf_delta_fn)(void *ctx, const struct fc_key *k, const struct fc_delta *d);
int fcache_bpf_take(struct fcbpf *b, fcbpf_delta_fn fn, void *ctx);

/* What the kernel knows of up to FC_INFO_MAX inodes by address (struct fc_info: the
 * dentry's name up to its superblock's root, a bdev inode's device, the memory cgroup of
 * its first cached folio): one firing of the program.  0 or -errno (-ENOTSUP: not loaded). */
int fcache_bpf_info(struct fcbpf *b, const struct fc_info_req *req, size_t n, struct fc_info *out);

/* Pages added + deleted by every filemap event so far (all CPUs): more than the takes gave
 * means the delta table dropped entries. 0 or -errno. */
int fcache_bpf_events(struct fcbpf *b, uint64_t *pages);

/* Kernel dev_t (major << 20 | minor) as user space's (makedev). */
uint64_t fcache_bpf_dev(uint32_t kdev);

#endif
