// SPDX-License-Identifier: GPL-2.0
/*
 * A big program's address space for the web view's benchmark (bench/web_bench.py): N
 * anonymous mappings of P pages each (a PROT_NONE page between two keeps the kernel from
 * merging them), every mapping written in a pattern of its own (stripes, a block, every
 * k-th page) so the runs are many and the picture is not flat.  Prints "ready PID" and
 * sleeps until killed.
 *
 *   manymaps [N=1000] [P=4096]
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000;
	size_t pages = argc > 2 ? strtoul(argv[2], NULL, 0) : 4096;
	long pg = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < n; i++) {
		/* P pages and a guard page; the guard is the last one, made inaccessible. */
		char *p = mmap(NULL, (pages + 1) * pg, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (p == MAP_FAILED || mprotect(p + pages * pg, pg, PROT_NONE)) {
			perror("manymaps: mmap");
			return 1;
		}
		madvise(p, pages * pg, MADV_NOHUGEPAGE);	/* page-sized runs, not 2 MiB */
		for (size_t k = 0; k < pages; k++) {
			size_t stride = 1 + i % 7;

			if ((i % 3 == 0 && k % stride == 0) ||
			    (i % 3 == 1 && k >= pages / 4 && k < pages / 2) ||
			    (i % 3 == 2 && (k / 64) % 2 == 0 && k % 2 == 0))
				p[k * pg] = 1;
		}
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	pause();
	return 0;
}
