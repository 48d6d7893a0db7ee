/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process's anonymous memory counted once across processes: /proc/PID/smaps_rollup's
 * Pss_Anon.  After fork, parent and child share every anonymous page until one writes it;
 * summing each process's resident anonymous pages counts such a page once per process (on a
 * box of forked servers, three to four times AnonPages).  Pss_Anon divides each page by its
 * map count, so the sum over all processes is AnonPages (minus the anonymous pages nobody
 * maps: swap cache, pages being freed).
 */
#ifndef MEVITOP_ROLLUP_H
#define MEVITOP_ROLLUP_H

#include <stdint.h>
#include <sys/types.h>

struct rollup {
	uint64_t pss_anon;	/* bytes */
	uint64_t anon;		/* "Anonymous": resident anonymous bytes, shared ones whole */
};

/* 0, or -errno (-ENOENT/-ESRCH: gone; a kernel thread gives zeros). */
int rollup_read(pid_t pid, struct rollup *r);
/* The parser, for the fuzzer: -EINVAL when neither field is there. */
int rollup_parse(const char *text, struct rollup *r);

#endif
