// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/types.h>
#include "kernel/procmap.h"

/* include/uapi/linux/fs.h (6.11+); Debian 12's headers predate it. */
struct k_procmap_query {
	__u64 size;
	__u64 query_flags;
	__u64 query_addr;
	__u64 vma_start;
	__u64 vma_end;
	__u64 vma_flags;
	__u64 vma_page_size;
	__u64 vma_offset;
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 vma_name_size;
	__u32 build_id_size;
	__u64 vma_name_addr;
	__u64 build_id_addr;
};

#define K_PROCMAP_QUERY		_IOWR('f', 17, struct k_procmap_query)
#define K_PQ_READABLE		0x01
#define K_PQ_WRITABLE		0x02
#define K_PQ_EXECUTABLE		0x04
#define K_PQ_SHARED		0x08
#define K_PQ_COVERING_OR_NEXT	0x10

/* x86_64's vsyscall page is a gate area, not a VMA of the mm: the ioctl never returns it,
 * the text file lists it last for every 64-bit process.  Taken once from our own maps. */
static struct maps_entry gate;
static bool gate_known, gate_present;

static int find_gate(const struct maps_entry *e, void *arg)
{
	if (!strcmp(e->path, "[vsyscall]")) {
		gate = *e;
		gate.path = "[vsyscall]";
		gate_present = true;
	}
	return 0;
}

static int query(int fd, uint64_t addr, struct k_procmap_query *q, char *name, size_t len)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->query_flags = K_PQ_COVERING_OR_NEXT;
	q->query_addr = addr;
	q->vma_name_addr = (uintptr_t)name;
	q->vma_name_size = len;
	return ioctl(fd, K_PROCMAP_QUERY, q) ? -errno : 0;
}

bool procmap_query_supported(void)
{
	struct k_procmap_query q;
	char name[256];
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return false;
	err = query(fd, 0, &q, name, sizeof(name));
	close(fd);
	return err == 0;
}

void procmap_prepare(void)
{
	if (!gate_known) {
		gate_known = true;
		procfs_read_maps(getpid(), find_gate, NULL);
	}
}

const struct maps_entry *procmap_gate(void)
{
	procmap_prepare();
	return gate_present ? &gate : NULL;
}

int procmap_query(int fd, uint64_t addr, struct maps_entry *e, char *name, size_t len)
{
	struct k_procmap_query q;
	int err = query(fd, addr, &q, name, len);

	if (err)
		return err;
	e->start = q.vma_start;
	e->end = q.vma_end;
	e->offset = q.vma_offset;
	e->ino = q.inode;
	e->dev_major = q.dev_major;
	e->dev_minor = q.dev_minor;
	e->perms = (q.vma_flags & K_PQ_READABLE ? MP_READ : 0) |
		   (q.vma_flags & K_PQ_WRITABLE ? MP_WRITE : 0) |
		   (q.vma_flags & K_PQ_EXECUTABLE ? MP_EXEC : 0) |
		   (q.vma_flags & K_PQ_SHARED ? MP_SHARED : 0);
	e->path = q.vma_name_size ? name : "";
	return 0;
}

int procmap_read_maps(pid_t pid, maps_cb cb, void *arg)
{
	char path[64], name[4096 + 64];
	struct maps_entry e;
	uint64_t addr = 0;
	int fd, err, ret = 0;

	procmap_prepare();
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	for (;;) {
		err = procmap_query(fd, addr, &e, name, sizeof(name));
		if (err == -ENOENT)	/* no VMA at or above addr: done */
			break;
		if (err) {
			/* The mm is gone once the process has exited (ESRCH from the kernel). */
			ret = err;
			goto out;
		}
		ret = cb(&e, arg);
		if (ret)
			goto out;
		addr = e.end;
	}
	if (gate_present && (ret = cb(&gate, arg)))
		goto out;
out:
	close(fd);
	return ret;
}

int procmap_read_layout(pid_t pid, bool text, maps_cb cb, void *arg)
{
	if (text) {
		int err = procfs_read_maps_exact(pid, cb, arg);

		if (err != -EILSEQ)
			return err;
	}
	return procmap_read_maps(pid, cb, arg);
}
