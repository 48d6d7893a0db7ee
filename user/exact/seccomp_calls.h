/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seccomp_calls.h - every system call exact mode makes a target run, as the templates the
 * seccomp proof reads (exact/seccomp_guard.c).  A new injected call is added here: the
 * guard refuses, at the moment of the call, any call that matches no entry, so one that
 * was forgotten fails the tests (test_exact_seccomp.py) instead of ever reaching a filter
 * unproven.
 */
#ifndef MEVITOP_SECCOMP_CALLS_H
#define MEVITOP_SECCOMP_CALLS_H

#include <stddef.h>

/* Which attaches make a call (struct sc_injected.ways). */
#define SC_WAY_ALL	(1u << 0)	/* every attach */
#define SC_WAY_OPTIONAL	(1u << 1)	/* skipped if refused */
#define SC_WAY_SYSCALL	(1u << 2)	/* the userfaultfd() way */
#define SC_WAY_REMOTE	(1u << 3)	/* its remote API handshake (uffd_set_api_path) */
#define SC_WAY_DEV	(1u << 4)	/* the /dev/userfaultfd handoff chain */

struct sc_injected {
	long nr;
	const char *name;
	long args[6];
	unsigned unknown;	/* bit i: args[i] is only known at the call (an address, an fd) */
	const char *what;	/* why mevitop makes it */
	unsigned ways;		/* SC_WAY_* */
};

extern const struct sc_injected sc_injected[];
extern const size_t sc_injected_count;

/* The entry whose fixed arguments @args match (@unknown: bits of @args not known), or NULL. */
const struct sc_injected *seccomp_calls_injected_find(long nr, const long args[6], unsigned unknown);

#endif /* MEVITOP_SECCOMP_CALLS_H */
