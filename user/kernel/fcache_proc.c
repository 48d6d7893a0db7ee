// SPDX-License-Identifier: GPL-2.0
/* Open files of every process and SysV segments (fcache_proc.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kernel/fcache_proc.h"

static int pid_fds(pid_t pid, fcproc_want_fn want, fcproc_fd_fn fn, void *ctx)
{
	char dir[64], link[384], target[4096];
	struct dirent *d;
	DIR *dp;
	int err = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	dp = opendir(dir);
	if (!dp)
		return 0;	/* gone, or a kernel thread: nothing held */
	while (!err && (d = readdir(dp))) {
		struct stat st;
		enum fcproc_want w;
		ssize_t k;

		if (d->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, d->d_name);
		/* stat follows the magic link to the file itself: dev and ino as the page cache
		 * knows them, deleted or not. */
		if (stat(link, &st) || !S_ISREG(st.st_mode))
			continue;
		w = want ? want(ctx, st.st_dev, st.st_ino) : FCPROC_LINK;
		if (w == FCPROC_SKIP)
			continue;
		if (w == FCPROC_LINK) {
			k = readlink(link, target, sizeof(target) - 1);
			if (k < 0)
				continue;
			target[k] = 0;
		}
		err = fn(ctx, pid, st.st_dev, st.st_ino, w == FCPROC_LINK ? target : NULL, link);
	}
	closedir(dp);
	return err;
}

int fcache_proc_fds(pid_t self, fcproc_want_fn want, fcproc_fd_fn fn, void *ctx)
{
	struct dirent *d;
	DIR *dp = opendir("/proc");
	int err = 0;

	if (!dp)
		return -errno;
	while (!err && (d = readdir(dp))) {
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self)
			continue;
		err = pid_fds((pid_t)pid, want, fn, ctx);
	}
	closedir(dp);
	return err;
}

int fcache_proc_sysv(fcproc_sysv_fn fn, void *ctx)
{
	FILE *f = fopen("/proc/sysvipc/shm", "re");
	char line[512];
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f)) {	/* the header */
		fclose(f);
		return 0;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		struct sysv_seg s;
		unsigned long long size, nattch;

		if (sscanf(line, "%d %d %*o %llu %*d %*d %llu", &s.key, &s.shmid, &size,
			   &nattch) != 4)
			continue;
		s.size = size;
		s.nattch = nattch;
		err = fn(ctx, &s);
	}
	fclose(f);
	return err;
}

int fcache_proc_shm_dev(uint64_t *dev)
{
	struct stat st;
	int fd = memfd_create("mevitop-shm-probe", MFD_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else
		*dev = st.st_dev;
	close(fd);
	return err;
}
