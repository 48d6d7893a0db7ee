/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seccomp_probe.h - which way exact mode gets its injected calls past a target's seccomp
 * filters on this machine, probed once (kfeatures.c) and shown by --probe.
 */
#ifndef MEVITOP_SECCOMP_PROBE_H
#define MEVITOP_SECCOMP_PROBE_H

#include <stddef.h>

struct features;

enum seccomp_path {
	SC_SUSPEND,	/* PTRACE_O_SUSPEND_SECCOMP while the target is held */
	SC_PROVE,	/* read the filters, prove every injected call allowed, else refuse */
	SC_REFUSE,	/* neither: processes with a filter are refused */
};

/* Fills f->seccomp_suspend / f->seccomp_suspend_errno (forks one short-lived child). */
void seccomp_probe(struct features *f);
/* The path in force (switches included), and in @why the reason suspension is not used. */
enum seccomp_path seccomp_probe_path(const struct features *f, char *why, size_t whylen);
const char *seccomp_probe_path_name(enum seccomp_path p);

#endif /* MEVITOP_SECCOMP_PROBE_H */
