// SPDX-License-Identifier: GPL-2.0
/*
 * inj_target - a small target for exact mode (ptrace injection + userfaultfd), by hand or
 * from scripts:
 *
 *   inj_target [-t threads] [-p pages] [-r rounds] [-s]
 *
 * Prints "ready PID" once all threads run, then for each round every thread maps
 * @pages pages, writes them in order (thread k walks backwards if k is odd), zaps the
 * first half with madvise(DONTNEED), unmaps the lot, and prints "round N tid T pages P".
 * With -s it waits for a line on stdin before each round (so a monitor can attach while
 * the main thread is blocked in read()); otherwise rounds follow each other 100 ms apart.
 * rounds = 0 means forever.  Exits 0, or 3 on a failed system call.
 */
#if defined(__has_include)
#if __has_include("workload.h")
#include "workload.h"
#endif
#endif

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PG 4096ul

static int nthreads = 2, rounds = 5;
static long pages = 256;
static pthread_barrier_t start_round, end_round;

static void fail(const char *what)
{
	fprintf(stderr, "inj_target: failed to %s: %s\n", what, strerror(errno));
	exit(3);
}

static void *worker(void *arg)
{
	int k = (int)(intptr_t)arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	for (int r = 0; rounds == 0 || r < rounds; r++) {
		char *m;

		pthread_barrier_wait(&start_round);
		m = mmap(NULL, (size_t)pages * PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			fail("map memory");
		for (long i = 0; i < pages; i++) {
			long p = k % 2 ? pages - 1 - i : i;

			m[p * PG] = (char)(k + 1);
		}
		if (madvise(m, (size_t)pages / 2 * PG, MADV_DONTNEED) < 0)
			fail("zap memory");
		if (munmap(m, (size_t)pages * PG) < 0)
			fail("unmap memory");
		printf("round %d tid %d pages %ld\n", r, tid, pages);
		fflush(stdout);
		pthread_barrier_wait(&end_round);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	int opt, step = 0;

	while ((opt = getopt(argc, argv, "t:p:r:s")) != -1) {
		switch (opt) {
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'p':
			pages = atol(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 's':
			step = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-t threads] [-p pages] [-r rounds] [-s]\n", argv[0]);
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > 64 || pages < 2 || rounds < 0) {
		fprintf(stderr, "inj_target: bad arguments\n");
		return 2;
	}
	if (pthread_barrier_init(&start_round, NULL, (unsigned)nthreads + 1) ||
	    pthread_barrier_init(&end_round, NULL, (unsigned)nthreads + 1))
		fail("create barriers");
	for (int k = 0; k < nthreads; k++)
		if (pthread_create(&th[k], NULL, worker, (void *)(intptr_t)k))
			fail("create a thread");
	printf("ready %d\n", getpid());
	fflush(stdout);
	for (int r = 0; rounds == 0 || r < rounds; r++) {
		if (step) {
			char line[64];

			if (!fgets(line, sizeof(line), stdin))
				break;
		} else if (r) {
			struct timespec ts = { .tv_nsec = 100 * 1000000L };

			nanosleep(&ts, NULL);
		}
		pthread_barrier_wait(&start_round);
		pthread_barrier_wait(&end_round);
	}
	return 0;
}
