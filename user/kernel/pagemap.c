// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/types.h>
#include "lib/page.h"
#include "kernel/pagemap.h"

/* Debian 12's headers predate PAGEMAP_SCAN (include/uapi/linux/fs.h, Linux 6.7). */
#ifndef PAGEMAP_SCAN
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_WPALLOWED	(1 << 0)
#define PAGE_IS_WRITTEN		(1 << 1)
#define PAGE_IS_FILE		(1 << 2)
#define PAGE_IS_PRESENT		(1 << 3)
#define PAGE_IS_SWAPPED		(1 << 4)
#define PAGE_IS_PFNZERO		(1 << 5)
#define PAGE_IS_HUGE		(1 << 6)
#define PAGE_IS_SOFT_DIRTY	(1 << 7)
struct page_region {
	__u64 start;
	__u64 end;
	__u64 categories;
};
struct pm_scan_arg {
	__u64 size;
	__u64 flags;
	__u64 start;
	__u64 end;
	__u64 walk_end;
	__u64 vec;
	__u64 vec_len;
	__u64 max_pages;
	__u64 category_inverted;
	__u64 category_mask;
	__u64 category_anyof_mask;
	__u64 return_mask;
};
#endif

#define PM_PRESENT (1ULL << 63)
#define PM_SWAPPED (1ULL << 62)
#define SCAN_VEC 320	/* 7,680 bytes: the kernel copies it from a slab (kmalloc-8k); 512 took
			 * a page allocation per ioctl */
#define PREAD_ENTRIES 4096

int pagemap_open(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

/* Merges adjacent runs of equal categories before handing them on. */
struct merger {
	pagemap_run_cb cb;
	void *arg;
	uint64_t start, end;
	uint32_t cats;
};

static void merge_push(struct merger *m, uint64_t start, uint64_t end, uint32_t cats)
{
	if (m->end == start && m->cats == cats && m->end > m->start) {
		m->end = end;
		return;
	}
	if (m->end > m->start)
		m->cb(m->start, m->end, m->cats, m->arg);
	m->start = start;
	m->end = end;
	m->cats = cats;
}

static void merge_flush(struct merger *m)
{
	if (m->end > m->start)
		m->cb(m->start, m->end, m->cats, m->arg);
	m->start = m->end = 0;
}

static uint32_t cats_of(__u64 c)
{
	uint32_t r = 0;

	if (c & PAGE_IS_PRESENT)
		r |= PMC_PRESENT;
	if (c & PAGE_IS_SWAPPED)
		r |= PMC_SWAPPED;
	if (c & PAGE_IS_HUGE)
		r |= PMC_HUGE;
	if (c & PAGE_IS_PFNZERO)
		r |= PMC_ZERO;
	return r;
}

static int scan_ioctl(int fd, uint64_t start, uint64_t end, struct merger *m)
{
	struct page_region vec[SCAN_VEC];
	struct pm_scan_arg arg;
	uint64_t addr = start << PAGE_SHIFT_4K, stop = end << PAGE_SHIFT_4K;
	int n, i;

	while (addr < stop) {
		memset(&arg, 0, sizeof(arg));
		arg.size = sizeof(arg);
		arg.start = addr;
		arg.end = stop;
		arg.vec = (__u64)(unsigned long)vec;
		arg.vec_len = SCAN_VEC;	/* never 0: older kernels oops (FACTS) */
		arg.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED;
		arg.return_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED | PAGE_IS_HUGE |
				  PAGE_IS_PFNZERO;
		n = ioctl(fd, PAGEMAP_SCAN, &arg);
		if (n < 0)
			return errno == ESRCH || errno == ENOENT ? -ESRCH : -errno;
		for (i = 0; i < n; i++)
			merge_push(m, vec[i].start >> PAGE_SHIFT_4K, vec[i].end >> PAGE_SHIFT_4K,
				   cats_of(vec[i].categories));
		/* walk_end says how far the kernel got; it stops early when vec is full. */
		if (arg.walk_end <= addr)
			return -EIO;
		addr = arg.walk_end;
	}
	return 0;
}

static int scan_pread(int fd, uint64_t start, uint64_t end, struct merger *m)
{
	static __thread uint64_t buf[PREAD_ENTRIES];
	uint64_t page = start;

	while (page < end) {
		size_t want = end - page < PREAD_ENTRIES ? end - page : PREAD_ENTRIES;
		ssize_t n = pread(fd, buf, want * 8, page * 8);
		size_t i, got;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == ESRCH ? -ESRCH : -errno;
		}
		if (n == 0)
			return -ESRCH;	/* the mm is gone */
		got = n / 8;
		for (i = 0; i < got; i++) {
			uint32_t c = 0;

			if (buf[i] & PM_PRESENT)
				c = PMC_PRESENT;
			else if (buf[i] & PM_SWAPPED)
				c = PMC_SWAPPED;
			if (c)
				merge_push(m, page + i, page + i + 1, c);
		}
		page += got;
	}
	return 0;
}

int pagemap_scan(int fd, uint64_t start, uint64_t end, bool use_scan, pagemap_run_cb cb,
		 void *arg)
{
	struct merger m = { .cb = cb, .arg = arg };
	int err;

	if (start >= end)
		return 0;
	err = use_scan ? scan_ioctl(fd, start, end, &m) : scan_pread(fd, start, end, &m);
	merge_flush(&m);
	return err;
}

bool pagemap_scan_supported(void)
{
	static int cached = -1;
	struct page_region vec[1];
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.vec_len = 1,
		.category_anyof_mask = PAGE_IS_PRESENT,
		.return_mask = PAGE_IS_PRESENT,
	};
	int fd;

	if (cached >= 0)
		return cached;
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cached = 0;
		return false;
	}
	arg.start = (unsigned long)vec & ~(PAGE_SIZE_4K - 1);
	arg.end = arg.start + PAGE_SIZE_4K;
	arg.vec = (unsigned long)vec;
	cached = ioctl(fd, PAGEMAP_SCAN, &arg) >= 0;
	close(fd);
	return cached;
}
