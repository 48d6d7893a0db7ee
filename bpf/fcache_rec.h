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

#define FC_RECS_PER_CALL 1023	/* records one firing writes at most (48 KiB; 0x3ff) */
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
};

/* Where the walk is (the program's globals; the reader resets it and reads the counters). */
struct fc_walk_state {
	__u64 first_sb, cur_sb, cur_node;
	__u32 done, nrec;
	__u64 steps, inodes, sbs, cuts, full;
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
	__u64 nrpages;		/* i_data.nrpages after the last event on this CPU */
	__u64 ts;		/* bpf_ktime_get_ns() of that event */
	__u64 size;
	__u32 gen;
	__u16 mode;
	__u16 nlink;
};

#endif
