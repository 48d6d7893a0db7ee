// SPDX-License-Identifier: GPL-2.0
/*
 * A workload with a layout the UI tests can predict: regions at fixed addresses, so each is
 * its own mapping (nothing merges with it) and its label and cells are known in advance.
 * Speaks the harness protocol of wl.c: "ready PID", then one command per line, answered by
 * "done MONO_NS [extra]" or "error ...".
 *
 *   ui_layout [--name COMM]          COMM: the process name (set before "ready")
 *   map NAME ADDR PAGES [r|rw]       mmap at ADDR (hex) exactly; answers the address
 *   touch NAME START COUNT STRIDE    write every STRIDE-th page of [START, START+COUNT)
 *   unmap NAME START COUNT
 *   pageout NAME START COUNT         MADV_PAGEOUT (to swap, when there is a swap device)
 *   exit
 */
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "workload.h"

#define PAGE 4096UL
#define MAX_REGIONS 32

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

struct region {
	char name[32];
	char *base;
};

static struct region regions[MAX_REGIONS];
static size_t nregions;


static struct region *find(const char *name)
{
	size_t i;

	for (i = 0; i < nregions; i++)
		if (!strcmp(regions[i].name, name))
			return &regions[i];
	printf("error no region %s\n", name);
	fflush(stdout);
	return NULL;
}

static void cmd_map(char **argv, int argc)
{
	unsigned long addr = strtoul(argv[2], NULL, 16), pages = strtoul(argv[3], NULL, 0);
	int prot = argc > 4 && !strcmp(argv[4], "r") ? PROT_READ : PROT_READ | PROT_WRITE;
	struct region *r;
	char extra[32];
	void *p;

	if (nregions == MAX_REGIONS) {
		printf("error too many regions\n");
		fflush(stdout);
		return;
	}
	p = mmap((void *)addr, pages * PAGE, prot, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED || p != (void *)addr) {
		wl_fail("mmap");
		return;
	}
	r = &regions[nregions++];
	snprintf(r->name, sizeof(r->name), "%s", argv[1]);
	r->base = p;
	snprintf(extra, sizeof(extra), "%p", p);
	wl_done(extra);
}

int main(int argc, char **argv)
{
	char line[512], *args[8], *save, *tok;
	int n;

	if (argc > 2 && !strcmp(argv[1], "--name"))
		prctl(PR_SET_NAME, argv[2], 0, 0, 0);
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		struct region *r;

		n = 0;
		for (tok = strtok_r(line, " \t\n", &save); tok && n < 7;
		     tok = strtok_r(NULL, " \t\n", &save))
			args[n++] = tok;
		if (!n)
			continue;
		args[n] = NULL;
		if (!strcmp(args[0], "map") && n >= 4) {
			cmd_map(args, n);
		} else if (!strcmp(args[0], "touch") && n >= 5) {
			unsigned long s = strtoul(args[2], NULL, 0), c = strtoul(args[3], NULL, 0);
			unsigned long st = strtoul(args[4], NULL, 0), i;

			if (!(r = find(args[1])))
				continue;
			for (i = s; i < s + c; i += st ? st : 1)
				((volatile char *)r->base)[i * PAGE] = 1;
			wl_done(NULL);
		} else if (!strcmp(args[0], "unmap") && n >= 4) {
			if (!(r = find(args[1])))
				continue;
			if (munmap(r->base + strtoul(args[2], NULL, 0) * PAGE,
				   strtoul(args[3], NULL, 0) * PAGE))
				wl_fail("munmap");
			else
				wl_done(NULL);
		} else if (!strcmp(args[0], "pageout") && n >= 4) {
			/* Sends pages to swap (with a swap device), for the swapped cells. */
			if (!(r = find(args[1])))
				continue;
			if (madvise(r->base + strtoul(args[2], NULL, 0) * PAGE,
				    strtoul(args[3], NULL, 0) * PAGE, MADV_PAGEOUT))
				wl_fail("madvise");
			else
				wl_done(NULL);
		} else if (!strcmp(args[0], "exit")) {
			return 0;
		} else {
			printf("error unknown command %s\n", args[0]);
			fflush(stdout);
		}
	}
	return 0;
}
