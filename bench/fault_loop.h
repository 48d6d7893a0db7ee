/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fault loop the benchmarks time: map `bytes` of anonymous memory, write every 4 KiB
 * page, unmap.  THP off for the region (MADV_NOHUGEPAGE) so every page is one fault, as in
 * ../shared/FACTS.md.
 */
#ifndef MEVITOP_BENCH_FAULT_LOOP_H
#define MEVITOP_BENCH_FAULT_LOOP_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static inline void fault_loop(size_t bytes)
{
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t off;

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	madvise(p, bytes, MADV_NOHUGEPAGE);
	for (off = 0; off < bytes; off += 4096)
		p[off] = 1;
	munmap(p, bytes);
}

#endif
