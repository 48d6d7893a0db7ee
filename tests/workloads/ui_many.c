// SPDX-License-Identifier: GPL-2.0
/*
 * Many small mappings of known names and states, plus a few big ones: the packed heatmap's
 * workload (a browser-sized address space the test can predict).
 *
 * Small mapping i (0 <= i < N) is a shared memfd named "m%03d" (/memfd:m000 in the maps:
 * this kernel has no CONFIG_ANON_VMA_NAME, so anonymous memory cannot be named), at
 * SMALL_BASE + i * SMALL_STRIDE pages, 1 + i % 4 pages long, page j written when
 * (i + j) % 3 == 0; the holes between them keep each its own mapping.  Big mapping k
 * (0 <= k < 3) is named "big%d", BIG_PAGES long at BIG_BASE + k * BIG_STRIDE, its first half
 * written.  All of it is in place before "ready PID".
 *
 *   ui_many [N]        (default 500)
 *   touch I J          write page J of small mapping I; answers "done MONO_NS"
 *   exit
 */
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "workload.h"

#define PAGE 4096UL
#define SMALL_BASE 0x300000000000UL
#define SMALL_STRIDE 8UL		/* pages */
#define BIG_BASE 0x310000000000UL
#define BIG_STRIDE 0x1000000UL		/* bytes */
#define BIG_PAGES 2048UL
#define MAX_SMALL 4096

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static char *map_named(unsigned long addr, unsigned long pages, const char *name)
{
	int fd = memfd_create(name, 0);
	char *p;

	if (fd < 0 || ftruncate(fd, pages * PAGE))
		wl_die("failed to create memfd %s", name);
	p = mmap((void *)addr, pages * PAGE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	if (p == MAP_FAILED || p != (char *)addr)
		wl_die("failed to map %s at %#lx", name, addr);
	close(fd);	/* the mapping keeps the file */
	return p;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 500, i, j;
	char line[256], name[16];

	if (n > MAX_SMALL)
		wl_die("at most %d small mappings", MAX_SMALL);
	for (i = 0; i < n; i++) {
		unsigned long pages = 1 + i % 4;
		char *p;

		snprintf(name, sizeof(name), "m%03lu", i);
		p = map_named(SMALL_BASE + i * SMALL_STRIDE * PAGE, pages, name);
		for (j = 0; j < pages; j++)
			if ((i + j) % 3 == 0)
				((volatile char *)p)[j * PAGE] = 1;
	}
	for (i = 0; i < 3; i++) {
		char *p;

		snprintf(name, sizeof(name), "big%lu", i);
		p = map_named(BIG_BASE + i * BIG_STRIDE, BIG_PAGES, name);
		for (j = 0; j < BIG_PAGES / 2; j++)
			((volatile char *)p)[j * PAGE] = 1;
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		unsigned long a, b;

		if (sscanf(line, "touch %lu %lu", &a, &b) == 2 && a < n && b <= a % 4) {
			((volatile char *)SMALL_BASE)[(a * SMALL_STRIDE + b) * PAGE] = 1;
			wl_done(NULL);
		} else if (!strncmp(line, "exit", 4)) {
			return 0;
		} else {
			printf("error bad command %s", line);
			fflush(stdout);
		}
	}
	return 0;
}
