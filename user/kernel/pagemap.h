/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which pages of a range are present or swapped, from /proc/PID/pagemap: the PAGEMAP_SCAN
 * ioctl (Linux 6.7+, returns runs, ~5 ns/page) or, as a fallback, pread of one 64-bit entry
 * per page (~10 ns/page).  Both report runs in address order; pages not reported are neither
 * present nor swapped.
 */
#ifndef MEVITOP_PAGEMAP_H
#define MEVITOP_PAGEMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PMC_PRESENT	(1u << 0)	/* the page table maps a page (the zero page included) */
#define PMC_SWAPPED	(1u << 1)
#define PMC_HUGE	(1u << 2)	/* mapped by a huge (PMD) entry; PAGEMAP_SCAN only */
#define PMC_ZERO	(1u << 3)	/* the shared zero page; PAGEMAP_SCAN only */

/* One run of pages [start, end) (page numbers) with the same categories. */
typedef void (*pagemap_run_cb)(uint64_t start, uint64_t end, uint32_t cats, void *arg);

/* Opens /proc/PID/pagemap; returns an fd or -errno (-ESRCH when the process is gone). */
int pagemap_open(pid_t pid);

/* Reports the present/swapped runs of [start, end) (page numbers).  use_scan selects the
 * ioctl; returns 0, -ESRCH if the process is gone, or another -errno.  *pages_walked, if
 * given, is increased by the number of pages examined. */
int pagemap_scan(int fd, uint64_t start, uint64_t end, bool use_scan, pagemap_run_cb cb,
		 void *arg);

/* Does this kernel have PAGEMAP_SCAN?  (Checked once on our own pagemap.) */
bool pagemap_scan_supported(void);

#endif
