/* SPDX-License-Identifier: GPL-2.0 */
/* Records the page cache walk (fcache.bpf.c) writes to its iterator, and the per-inode
 * change counters of the filemap tracepoints.  Shared with user/kernel/fcache_bpf.c. */
#ifndef MEVITOP_FCACHE_EVENTS_H
#define MEVITOP_FCACHE_EVENTS_H

#define FCR_INODE	1	/* an inode with pages in the page cache */
#define FCR_SB		2	/* a superblock the walk entered: dev, magic in ino */
#define FCR_CUT		3	/* a superblock's inode list changed under the walk: the rest
				 * of that superblock was skipped (ino = how many inodes seen) */

#define FC_WALK_ALL	0	/* every superblock */
#define FC_WALK_SHMEM	1	/* only tmpfs/shmem superblocks (their adds fire no event) */

#define FC_RECS_PER_CALL 1023	/* records one firing writes at most (56 KiB; 0x3ff) */
#define FC_STEPS_PER_CALL 16384	/* list nodes one firing visits at most (a few ms) */

struct fc_rec {
	__u32 kind;		/* FCR_* */
	__u32 dev;		/* kernel dev_t: major << 20 | minor */
	__u64 ino;
	__u64 nrpages;		/* i_data.nrpages */
	__u64 size;		/* i_size */
	__u32 gen;		/* i_generation */
	__u16 mode;		/* i_mode */
	__u16 nlink;		/* i_nlink, saturated at 0xffff */
	__u64 inode;		/* its address: tells a recycled (dev, ino) apart */
	__u32 xa_flags;		/* i_data.i_pages.xa_flags: the xarray's own flags in the low
				 * bits, above them a bit per mark some entry carries (dirty,
				 * writeback, towrite: what cachestat counts) */
	__u32 pad;
};

/* Where the walk is (the program's globals; the reader resets it and reads the counters). */
struct fc_walk_state {
	__u64 first_sb, cur_sb, cur_node;
	__u32 done, nrec;
	__u64 steps, inodes, sbs, cuts, full;
	__u64 sb_inodes;	/* inodes with pages listed in the current superblock */
};

/* fc_info: what the kernel knows of inodes the walk found, asked for by address, up to
 * FC_INFO_MAX a firing: the dentry's name up to its superblock's root (any filesystem, mounted
 * or not: the internal shm mount's "memfd:NAME", "SYSV%08x", "dev/zero"), the block device of
 * a bdev inode, the memory cgroup charged for the file's first cached folio. */
#define FC_INFO_MAX	64
#define FC_DEPTH	16	/* path components read, leaf first */
#define FC_COMP		64	/* bytes of one, NUL included */
#define FC_XA_STEPS	160	/* xarray slots looked at for a folio */

#define FCI_OK		1
#define FCI_GONE	2	/* the address holds another inode now (or none) */

#define FCI_F_ROOT	(1u << 0)	/* the components reach the superblock's root */
#define FCI_F_TRUNC	(1u << 1)	/* a component was longer than FC_COMP - 1 */
#define FCI_F_NODENTRY	(1u << 2)	/* no dentry (bdev inodes, dropped aliases) */
#define FCI_F_UNHASHED	(1u << 3)	/* the dentry is unhashed: unlinked, or a pseudo file */
#define FCI_F_MEMCG	(1u << 4)	/* cgid is a folio's memory cgroup */

struct fc_info_req {
	__u64 inode;		/* fc_rec.inode */
	__u64 ino;
	__u32 dev;		/* kernel dev_t */
	__u32 pad;
};

struct fc_info {
	__u32 status;		/* FCI_OK, FCI_GONE */
	__u32 flags;		/* FCI_F_* */
	__u32 depth;		/* components in comp */
	__u32 rdev;		/* i_rdev (a block device inode's device), kernel dev_t */
	__u64 cgid;		/* the memory cgroup's cgroup id (its cgroupfs inode), 0 unknown */
	char comp[FC_DEPTH][FC_COMP];
};

struct fc_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

/* Per CPU; the reader sums adds/dels and takes the newest nrpages. */
struct fc_delta {
	__u64 adds;		/* pages added since the reader last took the entry */
	__u64 dels;		/* pages deleted */
	__u64 dirtied;		/* cached pages made dirty (writeback_dirty_folio) */
	__u64 nrpages;		/* i_data.nrpages after the last event on this CPU */
	__u64 ts;		/* bpf_ktime_get_ns() of that event */
	__u64 size;
	__u32 gen;
	__u16 mode;
	__u16 nlink;
	__u64 inode;		/* the inode's address (fc_info asks by it) */
};

#endif
