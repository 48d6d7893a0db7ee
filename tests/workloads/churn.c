// SPDX-License-Identifier: GPL-2.0
/*
 * churn THREADS PAGES - a target that changes its address space flat out, for exact mode's
 * livelock and stop tests.  Each of THREADS threads loops: mmap PAGES private anonymous
 * pages, write each, madvise(MADV_DONTNEED) them, write them again, munmap.  Every one of
 * those calls takes the mm's lock for writing or zaps a range, which is what a userfaultfd
 * monitor's registrations, scans and non-cooperative events compete with.
 *
 * Prints "ready PID" once every thread has done one iteration.  Each line read on stdin
 * is answered with "count N MONO_NS": the iterations completed by all threads so far, so
 * a test sees whether the target makes progress (e.g. while mevitop is stopped).  EOF or
 * "exit" ends it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>
#include "workload.h"

#define PAGE		4096UL
#define MAX_THREADS	64

static size_t pages;
static _Atomic unsigned long iterations;
static _Atomic unsigned started;

static void write_pages(char *p)
{
	for (size_t i = 0; i < pages; i++)
		p[i * PAGE] = 1;
}

static void *churn_main(void *arg)
{
	bool first = true;

	(void)arg;
	for (;;) {
		char *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			wl_die("mmap");
		write_pages(p);
		if (madvise(p, pages * PAGE, MADV_DONTNEED))
			wl_die("madvise");
		write_pages(p);
		if (munmap(p, pages * PAGE))
			wl_die("munmap");
		atomic_fetch_add(&iterations, 1);
		if (first) {
			atomic_fetch_add(&started, 1);
			first = false;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 16;
	char line[64];
	pthread_t t;

	pages = argc > 2 ? strtoul(argv[2], NULL, 0) : 16;
	if (n == 0 || n > MAX_THREADS || pages == 0)
		wl_die("usage: churn THREADS PAGES");
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (unsigned i = 0; i < n; i++)
		if (pthread_create(&t, NULL, churn_main, NULL))
			wl_die("pthread_create");
	while (atomic_load(&started) < n)
		usleep(1000);
	printf("ready %d\n", getpid());
	while (fgets(line, sizeof(line), stdin) && strncmp(line, "exit", 4))
		printf("count %lu %llu\n", atomic_load(&iterations),
		       (unsigned long long)wl_now_ns());
	return 0;
}
