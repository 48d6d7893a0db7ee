// SPDX-License-Identifier: GPL-2.0
/*
 * The recording size benchmark's target: SIZE_MB of anonymous memory mapped, RES_MB of it
 * resident, and PCT percent of the mapped pages changing state every second (in ten steps),
 * in clusters of CLUSTER pages at random places: half the changes fault pages in, half drop
 * them (MADV_DONTNEED), so the resident set stays the same size while its pages move.
 *   rec_churn SIZE_MB RES_MB PCT CLUSTER
 * Prints "ready PID" once RES_MB are resident, then churns until killed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	size_t size, res, nclusters, target, resident = 0, cluster, i, per_step;
	uint8_t *state;
	double pct;
	char *p;

	if (argc < 5)
		return 2;
	size = strtoull(argv[1], NULL, 0) << 20;
	res = strtoull(argv[2], NULL, 0) << 20;
	pct = strtod(argv[3], NULL);
	cluster = strtoull(argv[4], NULL, 0) * 4096;
	nclusters = size / cluster;
	target = res / cluster;
	state = calloc(nclusters, 1);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED || !state) {
		perror("mmap");
		return 1;
	}
	madvise(p, size, MADV_NOHUGEPAGE);	/* page-exact: no 2 MiB folios */
	while (resident < target) {
		i = next() % nclusters;
		if (state[i])
			continue;
		for (size_t o = 0; o < cluster; o += 4096)
			p[i * cluster + o] = 1;
		state[i] = 1;
		resident++;
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	per_step = (size_t)(nclusters * pct / 100 / 10);
	for (;;) {
		struct timespec ts = { 0, 100000000 };

		for (size_t k = 0; k < per_step; k++) {
			bool in = (k & 1) ? resident < target + 1 : resident + 1 < target;

			do
				i = next() % nclusters;
			while (state[i] == in);
			if (in) {
				for (size_t o = 0; o < cluster; o += 4096)
					p[i * cluster + o] = 1;
				resident++;
			} else {
				madvise(p + i * cluster, cluster, MADV_DONTNEED);
				resident--;
			}
			state[i] = in;
		}
		nanosleep(&ts, NULL);
	}
}
