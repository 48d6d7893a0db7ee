// SPDX-License-Identifier: GPL-2.0
/* /proc/meminfo: "Name:   N kB" lines into struct meminfo (meminfo.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kernel/meminfo.h"

static const struct {
	const char *name;
	size_t off;
} fields[] = {
	{ "MemTotal", offsetof(struct meminfo, mem_total) },
	{ "MemFree", offsetof(struct meminfo, mem_free) },
	{ "MemAvailable", offsetof(struct meminfo, mem_available) },
	{ "Buffers", offsetof(struct meminfo, buffers) },
	{ "Cached", offsetof(struct meminfo, cached) },
	{ "SwapCached", offsetof(struct meminfo, swap_cached) },
	{ "AnonPages", offsetof(struct meminfo, anon_pages) },
	{ "Shmem", offsetof(struct meminfo, shmem) },
	{ "Slab", offsetof(struct meminfo, slab) },
	{ "KernelStack", offsetof(struct meminfo, kernel_stack) },
	{ "PageTables", offsetof(struct meminfo, page_tables) },
	{ "SecPageTables", offsetof(struct meminfo, sec_page_tables) },
	{ "Percpu", offsetof(struct meminfo, percpu) },
	{ "VmallocUsed", offsetof(struct meminfo, vmalloc_used) },
	{ "SwapTotal", offsetof(struct meminfo, swap_total) },
	{ "SwapFree", offsetof(struct meminfo, swap_free) },
	{ "Mapped", offsetof(struct meminfo, mapped) },
};

int meminfo_parse(const char *text, struct meminfo *out)
{
	const char *line = text;
	bool have_total = false;

	memset(out, 0, sizeof(*out));
	while (line && *line) {
		const char *colon = strchr(line, ':'), *nl = strchr(line, '\n');
		size_t i, len;

		if (!colon || (nl && colon > nl))
			goto next;
		len = colon - line;
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			char *end;
			unsigned long long v;

			if (strlen(fields[i].name) != len || memcmp(fields[i].name, line, len))
				continue;
			errno = 0;
			v = strtoull(colon + 1, &end, 10);
			if (errno || end == colon + 1 || v > UINT64_MAX / 1024)
				break;
			/* Every field this reads is in kB (the kernel's "kB" is KiB). */
			*(uint64_t *)((char *)out + fields[i].off) = v * 1024;
			if (i == 0)
				have_total = true;
			break;
		}
next:
		line = nl ? nl + 1 : NULL;
	}
	return have_total ? 0 : -EINVAL;
}

int meminfo_read(struct meminfo *out)
{
	char buf[8192];
	ssize_t n;
	int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = 0;
	return meminfo_parse(buf, out);
}
