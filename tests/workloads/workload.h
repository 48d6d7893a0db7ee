/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the test workloads: what mevitop watches in the tests. */
#ifndef MEVITOP_WORKLOAD_H
#define MEVITOP_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns: the clock of mevitop's "monotonic" snapshot field. */
static inline uint64_t wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The harness protocol's answers: "done MONO_NS [extra]", or "error WHAT: ERRNO". */
static inline void wl_done(const char *extra)
{
	printf("done %llu%s%s\n", (unsigned long long)wl_now_ns(), extra ? " " : "",
	       extra ? extra : "");
	fflush(stdout);
}

static inline void wl_fail(const char *what)
{
	printf("error %s: %s\n", what, strerror(errno));
	fflush(stdout);
}

#define wl_die(...) do {						\
	fprintf(stderr, "workload: " __VA_ARGS__);			\
	fprintf(stderr, " (%s)\n", strerror(errno));			\
	exit(3);							\
} while (0)

#endif
