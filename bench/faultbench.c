// SPDX-License-Identifier: GPL-2.0
/*
 * The fault-bound microbenchmark: map SIZE MiB of anonymous memory, write every page, unmap;
 * repeat ROUNDS times (bench/fault_loop.h).  Prints ns per page (median round) and total
 * seconds.
 *   faultbench [SIZE_MB=64] [ROUNDS=20] [THREADS=1]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include "fault_loop.h"

static size_t size_mb = 64, rounds = 20;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void *worker(void *arg)
{
	double *per_page = arg;
	size_t bytes = size_mb << 20, r;

	for (r = 0; r < rounds; r++) {
		uint64_t t0 = now_ns();

		fault_loop(bytes);
		per_page[r] = (double)(now_ns() - t0) / (bytes / 4096);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	size_t threads = 1, i;
	pthread_t tids[64];
	double *pp;
	uint64_t t0;

	if (argc > 1)
		size_mb = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		rounds = strtoul(argv[2], NULL, 0);
	if (argc > 3)
		threads = strtoul(argv[3], NULL, 0);
	if (threads < 1 || threads > 64 || !rounds || !size_mb)
		return 2;
	pp = calloc(threads * rounds, sizeof(*pp));
	t0 = now_ns();
	for (i = 0; i < threads; i++)
		pthread_create(&tids[i], NULL, worker, pp + i * rounds);
	for (i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	qsort(pp, threads * rounds, sizeof(*pp), cmp);
	/* CPU time as well as wall time: on a shared VM, CPU time is the steadier measure of
	 * what the fault path costs. */
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	printf("{\"ns_per_page\": %.1f, \"seconds\": %.3f, \"pages\": %zu, "
	       "\"cpu_ns_per_page\": %.1f}\n",
	       pp[threads * rounds / 2], (now_ns() - t0) / 1e9, threads * rounds * (size_mb << 8),
	       (ru.ru_utime.tv_sec * 1e9 + ru.ru_utime.tv_usec * 1e3 + ru.ru_stime.tv_sec * 1e9 +
		ru.ru_stime.tv_usec * 1e3) / (threads * rounds * (size_mb << 8)));
	free(pp);
	return 0;
}
