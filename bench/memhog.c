// SPDX-License-Identifier: GPL-2.0
/*
 * Holds SIZE MiB of anonymous memory with a chosen residency pattern, prints "ready PID" and
 * waits until killed: the target of the attach and memory benchmarks.
 *   memhog SIZE_MB all|every-other|none [SPREAD_MS]
 * SPREAD_MS: the touches are spread evenly over this long (256 KiB at a time), as a heap
 * grows, instead of made at once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t bytes, off, step = 4096, burst = 256 << 10;
	unsigned long spread_ms = argc > 3 ? strtoul(argv[3], NULL, 0) : 0;
	struct timespec pause_ts = { 0 };
	char *p;

	if (argc < 3)
		return 2;
	bytes = strtoull(argv[1], NULL, 0) << 20;
	if (!strcmp(argv[2], "every-other"))
		step = 8192;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	madvise(p, bytes, MADV_NOHUGEPAGE);	/* page-exact layouts: no 2 MiB pages */
	if (spread_ms && bytes >= burst) {
		uint64_t ns = spread_ms * 1000000ULL / (bytes / burst);

		pause_ts.tv_sec = ns / 1000000000ULL;
		pause_ts.tv_nsec = ns % 1000000000ULL;
	}
	if (strcmp(argv[2], "none"))
		for (off = 0; off < bytes; off += step) {
			p[off] = 1;
			if ((pause_ts.tv_sec || pause_ts.tv_nsec) && (off + step) % burst == 0)
				nanosleep(&pause_ts, NULL);
		}
	printf("ready %d\n", getpid());
	fflush(stdout);
	for (;;)
		pause();
}
