/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names for inodes known only by (dev, ino, generation): open_by_handle_at(2) with a handle
 * built the way the filesystem encodes its own (ext2/3/4: FILEID_INO32_GEN {ino, gen};
 * tmpfs: {gen, ino low, ino high}), on a mount of that filesystem from /proc/self/mountinfo,
 * then readlink of /proc/self/fd/N.  Gives a path for files nobody has open, and an fd for
 * cachestat/mincore.
 */
#ifndef MEVITOP_FCACHE_NAME_H
#define MEVITOP_FCACHE_NAME_H

#include <stddef.h>
#include <stdint.h>

struct fcname;

int fcname_new(struct fcname **out);
void fcname_free(struct fcname *n);
/* Re-reads the mount table (a dev no mount was known for). */
int fcname_reload(struct fcname *n);
/* The filesystem type of dev's mounts ("ext4", "tmpfs"), or NULL when none is mounted
 * (pipefs, the internal shm mount of memfds and SysV segments, bdev). */
const char *fcname_fstype(struct fcname *n, uint64_t dev);
/* An fd (O_RDONLY, close it) and, into path (unless NULL), where it is now (" (deleted)"
 * at the end if unlinked).  -errno with *why naming the reason ("no mount of 0:45", "tmpfs: no handle",
 * "ESTALE: the inode was freed") when it cannot. */
int fcname_open(struct fcname *n, uint64_t dev, uint64_t ino, uint32_t gen, char *path,
		size_t len, const char **why);
/* Counters: opens tried, opened. */
void fcname_counts(const struct fcname *n, uint64_t *tried, uint64_t *opened);

#endif
