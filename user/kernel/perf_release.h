/* SPDX-License-Identifier: GPL-2.0 */
/* Teardown: the last close of each perf-based BPF link (~40 ms of RCU grace periods each)
 * left to a grandchild that holds nothing else (perf_release.c says why).
 * perf_release_begin(keep, n, &hold) returns once the grandchild holds the fds keep[0..n)
 * and has closed every other: 0, and hold to give perf_release_end after the caller's own
 * closes (its exit does it too); or -errno (then the caller's closes are the last ones, as
 * without it). */
#ifndef MEVITOP_PERF_RELEASE_H
#define MEVITOP_PERF_RELEASE_H

#include <stddef.h>

int perf_release_begin(const int *keep, size_t n, int *hold);
void perf_release_end(int hold);

#endif
