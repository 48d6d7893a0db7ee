// SPDX-License-Identifier: GPL-2.0
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include "stacks/target_code.h"

static bool names_the_file(const char *path, const struct mapping *m)
{
	struct stat st;

	return !stat(path, &st) && st.st_ino == m->ino && major(st.st_dev) == m->dev_major &&
	       minor(st.st_dev) == m->dev_minor;
}

bool target_code_mapping_file_path(const struct proc *p, const struct mapping *m, char *buf,
				   size_t len)
{
	/* /proc/PID/maps appends " (deleted)" to an unlinked file's path. */
	if (!m->path || m->path[0] != '/' || strstr(m->path, " (deleted)"))
		return false;
	if (p && !p->exited && (size_t)snprintf(buf, len, "/proc/%d/root%s", p->pid, m->path) < len &&
	    names_the_file(buf, m))
		return true;
	return (size_t)snprintf(buf, len, "%s", m->path) < len && names_the_file(buf, m);
}

bool target_code_read(const struct proc *p, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	char path[TARGET_PATH_MAX];
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	const struct mapping *m;
	uint64_t start, off;
	ssize_t n;
	int fd;

	if (!p->exited && process_vm_readv(p->pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return true;
	m = model_find(p, addr >> PAGE_SHIFT_4K);
	start = m ? mapping_start(m) << PAGE_SHIFT_4K : 0;
	if (!m || addr + len > mapping_end(m) << PAGE_SHIFT_4K ||
	    !target_code_mapping_file_path(p, m, path, sizeof(path)))
		return false;
	off = m->offset + (addr - start);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = pread(fd, buf, len, off);
	close(fd);
	return n == (ssize_t)len;
}
