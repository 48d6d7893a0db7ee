/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What processes hold: every open file of every process (/proc/PID/fd), for the names of
 * memfds and deleted files and for the fallback that has no BPF walk; and the SysV shared
 * memory segments (/proc/sysvipc/shm).
 */
#ifndef MEVITOP_FCACHE_PROC_H
#define MEVITOP_FCACHE_PROC_H

#include <stdint.h>
#include <sys/types.h>

/* fn(ctx, pid, dev, ino, target of the link, the link "/proc/PID/fd/N"); a non-zero return
 * stops the walk.  Only regular files (memfds, tmpfs and deleted files included).  want
 * (NULL: FCPROC_LINK for every fd) says what fn needs of each file before the link is read:
 * the readlink (d_path) costs as much as the stat that finds dev and ino. */
typedef int (*fcproc_fd_fn)(void *ctx, pid_t pid, uint64_t dev, uint64_t ino,
			    const char *target, const char *link);
enum fcproc_want {
	FCPROC_SKIP,		/* not fn's */
	FCPROC_KEY,		/* fn with target NULL: dev and ino are enough */
	FCPROC_LINK,		/* fn with the link's target */
};
typedef enum fcproc_want (*fcproc_want_fn)(void *ctx, uint64_t dev, uint64_t ino);
int fcache_proc_fds(pid_t self, fcproc_want_fn want, fcproc_fd_fn fn, void *ctx);

struct sysv_seg {
	int32_t key;
	int32_t shmid;		/* the segment's inode number on the internal shm mount */
	uint64_t size;		/* bytes */
	uint64_t nattch;
};
typedef int (*fcproc_sysv_fn)(void *ctx, const struct sysv_seg *s);
int fcache_proc_sysv(fcproc_sysv_fn fn, void *ctx);

/* The dev of the kernel's internal shm mount, which holds every memfd, SysV segment and
 * shared anonymous mapping (and which no mount table shows): a memfd of our own's. */
int fcache_proc_shm_dev(uint64_t *dev);

#endif
