/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seccomp_guard.h - decides whether exact mode may inject into a process that runs under
 * seccomp, and guards each injected call (issue 13).
 *
 * With the filters suspended (PTRACE_O_SUSPEND_SECCOMP, inject.h) the injection goes ahead.
 * Otherwise the filters of every thread are read (PTRACE_SECCOMP_GET_FILTER) and each
 * injected call of exact/seccomp_calls.h is run through each of them (exact/seccomp_bpf.h)
 * with the arguments it will have, the ones known only at the call left open: only if every
 * filter allows every call on every path is the target attached, and then every real call
 * is proven again, exactly as the filter will see it, just before it is made.
 */
#ifndef MEVITOP_SECCOMP_GUARD_H
#define MEVITOP_SECCOMP_GUARD_H

#include <stddef.h>

struct inj;

/*
 * For a seized target: 0 if the injection may go ahead (a guard installed where needed),
 * -EPERM with @why ("... its seccomp filter returns KILL_PROCESS for userfaultfd(...)")
 * if not, another -errno if the filters could not be read.
 */
int seccomp_guard_prepare(struct inj *in, char *why, size_t whylen);

/* What a refusal of a suspended target's filters means, appended to the verdict. */
#define SCG_SUSPENDED_WHY	"; its filters are suspended while mevitop holds it, but " \
				"would see that call were mevitop killed during it"

#endif /* MEVITOP_SECCOMP_GUARD_H */
