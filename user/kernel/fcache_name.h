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

int fcache_name_new(struct fcname **out);
void fcache_name_free(struct fcname *n);
/* Re-reads the mount table (a dev no mount was known for). */
int fcache_name_reload(struct fcname *n);
/* The filesystem type of dev's mounts ("ext4", "tmpfs"), or NULL when none is mounted
 * (pipefs, the internal shm mount of memfds and SysV segments, bdev). */
const char *fcache_name_fstype(struct fcname *n, uint64_t dev);
/* An fd (O_RDONLY, close it) and, into path (unless NULL), where it is now (" (deleted)"
 * at the end if unlinked).  -errno with *why naming the reason ("no mount of 0:45", "tmpfs: no handle",
 * "ESTALE: the inode was freed") when it cannot. */
int fcache_name_open(struct fcname *n, uint64_t dev, uint64_t ino, uint32_t gen, char *path,
		size_t len, const char **why);
/*
 * tmpfs hashes an inode for open_by_handle_at only once name_to_handle_at was called on it
 * (shmem_encode_fh): until then a handle gives ESTALE.  So tmpfs files are named by
 * walking the mount's tree instead: fn(ctx, ino, path) for each regular file of dev's
 * mount, at most `limit` entries visited.  0, -ENOENT (no mount), or fn's non-zero return.
 */
typedef int (*fcname_tree_fn)(void *ctx, uint64_t ino, const char *path);
int fcache_name_walk_tree(struct fcname *n, uint64_t dev, size_t limit, fcname_tree_fn fn,
		     void *ctx);
/* Where rel, a path from dev's filesystem root ("/a/b", as the kernel's dentries give it),
 * is in mevitop's mount namespace: the mount of dev chosen for handles, if rel lies under
 * its root.  0; -ENOENT: no mount of dev; -EXDEV: rel is outside it; -ENAMETOOLONG. */
int fcache_name_mount_path(struct fcname *n, uint64_t dev, const char *rel, char *out, size_t len);
/* Counters: opens tried, opened. */
void fcache_name_counts(const struct fcname *n, uint64_t *tried, uint64_t *opened);

#endif
