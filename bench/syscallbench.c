// SPDX-License-Identifier: GPL-2.0
/*
 * A syscall-bound microbenchmark: getppid() in a loop.  Enabling syscall tracepoints sends
 * every syscall of every task through the kernel's slow path, so this measures what
 * mevitop's mmap/munmap/... hooks cost the syscalls they do not care about.
 *   syscallbench [CALLS=5000000]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000, i;
	struct timespec a, b;
	struct rusage ru;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"ns_per_call\": %.1f, \"cpu_ns_per_call\": %.1f}\n",
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n,
	       (ru.ru_utime.tv_sec * 1e9 + ru.ru_utime.tv_usec * 1e3 + ru.ru_stime.tv_sec * 1e9 +
		ru.ru_stime.tv_usec * 1e3) / n);
	return 0;
}
