// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp_probe.c - can mevitop suspend a tracee's seccomp filters here?  The kernel
 * answers PTRACE_SEIZE with PTRACE_O_SUSPEND_SECCOMP with EINVAL without
 * CONFIG_CHECKPOINT_RESTORE and EPERM without CAP_SYS_ADMIN or when mevitop itself runs
 * under seccomp (ptrace_setoptions); the same conditions govern reading filters with
 * PTRACE_SECCOMP_GET_FILTER, so one probe decides both.
 */
#include "kernel/seccomp_probe.h"
#include "kernel/kfeatures.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PTRACE_O_SUSPEND_SECCOMP
#define PTRACE_O_SUSPEND_SECCOMP	(1 << 21)
#endif

void seccomp_probe(struct features *f)
{
	pid_t child;
	int st;

	f->seccomp_suspend = false;
	f->seccomp_suspend_errno = 0;
	child = fork();
	if (child < 0) {
		f->seccomp_suspend_errno = errno;
		return;
	}
	if (child == 0) {
		pause();
		_exit(0);
	}
	if (ptrace(PTRACE_SEIZE, child, 0, (void *)(long)PTRACE_O_SUSPEND_SECCOMP) == 0)
		f->seccomp_suspend = true;
	else
		f->seccomp_suspend_errno = errno;
	kill(child, SIGKILL);	/* its tracer's death or ours: it is gone either way */
	while (waitpid(child, &st, __WALL) < 0 && errno == EINTR)
		;
}

enum seccomp_path seccomp_probe_path(const struct features *f, char *why, size_t whylen)
{
	int e = f->seccomp_suspend_errno;

	if (f->seccomp_suspend && !(f->disabled & DIS_SECCOMP_SUSPEND)) {
		snprintf(why, whylen, "%s", "");
		return SC_SUSPEND;
	}
	if (f->seccomp_suspend) {
		snprintf(why, whylen, "disabled by --disable seccomp_suspend");
		return SC_PROVE;
	}
	if (e == EINVAL)
		snprintf(why, whylen, "this kernel has no CONFIG_CHECKPOINT_RESTORE");
	else if (e == EPERM)
		snprintf(why, whylen, "mevitop lacks CAP_SYS_ADMIN, or runs under a seccomp "
			 "filter itself");
	else
		snprintf(why, whylen, "PTRACE_O_SUSPEND_SECCOMP failed: %s", strerror(e));
	return SC_REFUSE;
}

const char *seccomp_probe_path_name(enum seccomp_path p)
{
	static const char *names[] = {
		[SC_SUSPEND] = "suspend",
		[SC_PROVE] = "prove",
		[SC_REFUSE] = "refuse",
	};

	return names[p];
}
