// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "kernel/kpage.h"

/* PFNs closer than this are read in one pread: an entry costs the kernel ~110-130 ns
 * (measured here, loaded), a pread of one ~700 ns, so a few unneeded entries are the most
 * a shared read may carry. */
#define KPAGE_GAP	4
#define KPAGE_WINDOW	512	/* entries per pread at most */

static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, off + got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == ESRCH || errno == ENOENT ? -ESRCH : -errno;
		if (n == 0)
			return got ? (int)got : -ESRCH;	/* pagemap: the mm is gone */
		got += n;
	}
	return (int)got;
}

int kpage_read_entries(int pagemap_fd, uint64_t start, size_t n, uint64_t *out)
{
	int got = pread_all(pagemap_fd, out, n * 8, (off_t)(start * 8));

	if (got < 0)
		return got;
	if ((size_t)got < n * 8)
		memset((char *)out + got, 0, n * 8 - got);	/* past the last vma: absent */
	return 0;
}

int kpage_open(struct kpage *k)
{
	k->preads = 0;
	k->count_fd = open("/proc/kpagecount", O_RDONLY | O_CLOEXEC);
	k->flags_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (k->count_fd < 0 || k->flags_fd < 0) {
		int err = -errno;

		kpage_close(k);
		return err;
	}
	return 0;
}

void kpage_close(struct kpage *k)
{
	if (k->count_fd >= 0)
		close(k->count_fd);
	if (k->flags_fd >= 0)
		close(k->flags_fd);
	k->count_fd = k->flags_fd = -1;
}

/* One window [first, last] of PFNs into out[] of the pfns inside it. */
static int lookup_window(struct kpage *k, int fd, const uint64_t *pfns, size_t n,
			 uint64_t *out, uint64_t *buf)
{
	uint64_t first = pfns[0], len = pfns[n - 1] - first + 1;
	size_t i;
	int got;

	got = pread_all(fd, buf, len * 8, (off_t)(first * 8));
	k->preads++;
	if (got < 0)
		return got;
	if ((uint64_t)got < len * 8)
		return -EIO;	/* a PFN past the end of memory */
	for (i = 0; i < n; i++)
		out[i] = buf[pfns[i] - first];
	return 0;
}

int kpage_lookup(struct kpage *k, enum kpage_file which, const uint64_t *pfns, size_t n,
		 uint64_t *out)
{
	static __thread uint64_t buf[KPAGE_WINDOW];
	int fd = which == KPAGE_FLAGS ? k->flags_fd : k->count_fd;
	size_t i = 0, j;
	int err;

	while (i < n) {
		for (j = i + 1; j < n && pfns[j] - pfns[j - 1] <= KPAGE_GAP &&
				pfns[j] - pfns[i] < KPAGE_WINDOW; j++)
			;
		err = lookup_window(k, fd, pfns + i, j - i, out + i, buf);
		if (err)
			return err;
		i = j;
	}
	return 0;
}

int kpage_probe(void)
{
	static int cached = 1;	/* 1: not probed yet */
	long psz = sysconf(_SC_PAGESIZE);
	struct kpage k;
	uint64_t e = 0, count = 0;
	char *page;
	int fd, err;

	if (cached <= 0)
		return cached;
	page = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return -errno;
	page[0] = 1;	/* present, mapped once */
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	err = fd < 0 ? -errno : kpage_read_entries(fd, (uintptr_t)page / psz, 1, &e);
	if (fd >= 0)
		close(fd);
	if (!err && (!kpm_present(e) || !kpm_pfn(e)))
		err = -EPERM;	/* PFNs are hidden from processes without CAP_SYS_ADMIN */
	if (!err)
		err = kpage_open(&k);
	if (!err) {
		uint64_t pfn = kpm_pfn(e);

		err = kpage_lookup(&k, KPAGE_COUNT, &pfn, 1, &count);
		if (!err && count != 1)
			err = -EIO;	/* the page we just wrote is mapped once */
		kpage_close(&k);
	}
	munmap(page, psz);
	cached = err;
	return err;
}

static int read_u64(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%" SCNu64, v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

int kpage_ksm_sharing(uint64_t *pages)
{
	return read_u64("/sys/kernel/mm/ksm/pages_sharing", pages);
}

int kpage_ksm_scanned(uint64_t *pages)
{
	if (!read_u64("/sys/kernel/mm/ksm/pages_scanned", pages))
		return 0;
	return read_u64("/sys/kernel/mm/ksm/full_scans", pages);	/* without it */
}

int kpage_ksm_merging(pid_t pid, uint64_t *pages)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ksm_merging_pages", pid);
	return read_u64(path, pages);
}
