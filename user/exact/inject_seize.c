// SPDX-License-Identifier: GPL-2.0
/*
 * inject_seize.c - seizing a process: its threads, one by one, parked in an event stop
 * (inject.c explains the staging), with the /proc reads that decide whether it may be.
 */
#include "exact/inject.h"
#include "exact/inject_maps.h"
#include "exact/arch.h"
#include "exact/inject_int.h"
#include "exact/inject_seize.h"
#include "exact/scratch.h"
#include "exact/stage.h"
#include "kernel/procfs.h"
#include "lib/page.h"
#include "lib/syscall_err.h"
#include "lib/clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- small helpers ---- */

void inj_copy_why(char *why, size_t whylen, const char *src)
{
	if (why && whylen)
		snprintf(why, whylen, "%s", src);
}

static int read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		err = -errno;
		n = 0;
	}
	buf[n] = '\0';
	close(fd);
	return err;
}

/* Value of "Key:\t..." in a /proc status file, as a long; -1 if missing. */
static long status_long(const char *status, const char *key)
{
	size_t klen = strlen(key);
	const char *p = status;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':')
			return strtol(p + klen + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

static char status_state(const char *status)
{
	const char *p = strstr(status, "\nState:");

	if (!p)
		return '?';
	p += strlen("\nState:");
	while (*p == ' ' || *p == '\t')
		p++;
	return *p;
}

/* State letter and flags of /proc/PID/task/TID/stat; returns -errno. */
static int task_stat(pid_t pid, pid_t tid, char *state, unsigned long *flags)
{
	char path[64], buf[1024], *p;
	unsigned long fl = 0;
	int err, i;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	err = read_file(path, buf, sizeof(buf));
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -EIO;
	p += 2;
	*state = *p;
	/* fields after the state: ppid pgrp session tty_nr tpgid flags */
	for (i = 0; i < 6 && p; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		fl = strtoul(p, NULL, 10);
	if (flags)
		*flags = fl;
	return 0;
}

static void comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if (read_file(path, buf, len))
		snprintf(buf, len, "?");
	buf[strcspn(buf, "\n")] = '\0';
}

/*
 * Seccomp suspension (PTRACE_O_SUSPEND_SECCOMP, what CRIU uses), and why a target's
 * filters are in force again the moment mevitop lets go - however it lets go (kernel
 * sources, kernel/ptrace.c and kernel/seccomp.c):
 *  - The option is a bit of the *tracee's* task->ptrace (PT_SUSPEND_SECCOMP), set by
 *    PTRACE_SEIZE or PTRACE_SETOPTIONS only for a tracer with CAP_SYS_ADMIN in the initial
 *    user namespace that has no seccomp mode of its own (ptrace_setoptions; since the fix
 *    for CVE-2022-30594 the seize checks it too), on a kernel with CONFIG_CHECKPOINT_RESTORE.
 *  - __secure_computing() returns "allowed" at once while current->ptrace has that bit:
 *    the filters are not run, and they are not changed - task->seccomp (its mode and the
 *    filter list that /proc/PID/status counts in Seccomp and Seccomp_filters) is never
 *    touched by ptrace.
 *  - __ptrace_unlink() sets child->ptrace = 0 under the siglock: every PT_* bit, this one
 *    included, lives exactly as long as the ptrace link.  It runs on PTRACE_DETACH
 *    (ptrace_detach) and, when the tracer dies - exit, SIGKILL, the OOM killer -, from
 *    exit_ptrace() in the tracer's do_exit(), before any tracee is woken.  So a thread
 *    that is no longer traced runs its filters on its very next system call; there is no
 *    state left behind that could keep them off.
 * The exposure that remains is on the other side: a call the filters would refuse, set up
 * by a mevitop that dies before the thread passed that call's seccomp check (the kernel
 * runs the check after the syscall-entry ptrace stop, syscall_trace_enter), is then seen
 * by the filters; so are the close and rt_sigreturn the trampoline makes after a death.
 * No ptrace request closes that window: whatever is in the registers when the tracer dies
 * is what the filters see.  So where the filters can be read (exact/seccomp_guard.c), a
 * call is made only if the thread would survive them seeing it - they allow it, or they
 * make it fail (ERRNO, or TRACE, which is ENOSYS once there is no tracer), where failing
 * leaves nothing behind (not close, munmap, rt_sigreturn) - and a call
 * they would kill the thread for (KILL_*, TRAP, USER_NOTIF) is refused: uffd.c then tries
 * the /dev/userfaultfd handoff, whose calls must all be allowed, and else the attach is
 * refused with the filter's verdict.  (An earlier placeholder - close(-1) swapped for the
 * real call at its syscall-entry stop - left microseconds of exposure, and a CI kill sweep
 * under load once hit them: the target died of SIGSYS.)
 */
static bool suspend_seccomp;

void inj_set_suspend_seccomp(bool on)
{
	suspend_seccomp = on;
}

/* The strictest seccomp mode of the target's threads (filters are per thread). */
void inj_read_seccomp(struct inj *in)
{
	char path[64], status[4096];

	in->seccomp = 0;
	for (int i = 0; i < in->nr; i++) {
		long m;

		if (in->t[i].gone)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", in->pid, in->t[i].tid);
		if (read_file(path, status, sizeof(status)))
			continue;
		m = status_long(status, "Seccomp");
		if (m > in->seccomp)
			in->seccomp = (int)m;
	}
}

/* A parked spawned child: suspend its filters for the injection that follows (only while
 * it is parked: inj_follow_threads's options drop the bit before it runs). */
void inj_suspend_parked(struct inj *in, int idx)
{
	in->suspended = false;
	if (!suspend_seccomp)
		return;
	in->suspended = ptrace(PTRACE_SETOPTIONS, in->t[idx].tid, 0,
			       (void *)(in->options | PTRACE_O_SUSPEND_SECCOMP)) == 0;
}

/* ---- target memory ---- */

int inj_open_mem(struct inj *in)
{
	char path[64];

	if (in->memfd >= 0)
		close(in->memfd);
	snprintf(path, sizeof(path), "/proc/%d/mem", in->pid);
	in->memfd = open(path, O_RDWR | O_CLOEXEC);
	return in->memfd < 0 ? -errno : 0;
}

/* ---- seize ---- */

/*
 * For the kill -9 tests (tests/integration/killsweep.py): MEVITOP_TEST_KILL_US=N has the
 * kernel SIGKILL this process N microseconds after its first PTRACE_SEIZE.  A POSIX
 * timer, so the death lands at any instruction of ours, exactly as an OOM kill would,
 * and no code of ours runs at that moment.
 */
static void test_kill_arm(void)
{
	static bool armed;
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGKILL };
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	const char *s = getenv("MEVITOP_TEST_KILL_US");
	unsigned long us;
	timer_t timer;

	if (armed || !s || !*s)
		return;
	armed = true;
	us = strtoul(s, NULL, 10);
	its.it_value.tv_sec = (time_t)(us / 1000000);
	its.it_value.tv_nsec = (long)(us % 1000000) * 1000 + 1;	/* 0 would disarm it */
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) == 0)
		timer_settime(timer, 0, &its, NULL);
}

static int check_target(struct inj *in)
{
	char path[64], status[4096], comm[64];
	unsigned long flags = 0;
	long tgid, tracer, threads;
	char state, st;
	int err;

	if (in->pid <= 0) {
		inj_set_why(in, "invalid PID %d", in->pid);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", in->pid);
	err = read_file(path, status, sizeof(status));
	if (err) {
		inj_set_why(in, "no such process %d", in->pid);
		return err == -ENOENT ? -ESRCH : err;
	}
	tgid = status_long(status, "Tgid");
	if (tgid > 0 && tgid != in->pid) {
		/* a thread ID: take its process */
		in->pid = (pid_t)tgid;
		return check_target(in);
	}
	if (in->pid == getpid()) {
		inj_set_why(in, "cannot seize ourselves (PID %d)", in->pid);
		return -EINVAL;
	}
	state = status_state(status);
	threads = status_long(status, "Threads");
	tracer = status_long(status, "TracerPid");
	in->seccomp = (int)status_long(status, "Seccomp");
	if (in->seccomp < 0)
		in->seccomp = 0;
	if (task_stat(in->pid, in->pid, &st, &flags) == 0 && (flags & PF_KTHREAD)) {
		inj_set_why(in, "process %d is a kernel thread", in->pid);
		return -EINVAL;
	}
	if (state == 'X' || (state == 'Z' && threads <= 1)) {
		inj_set_why(in, "process %d is a zombie", in->pid);
		return -ESRCH;
	}
	if ((flags & PF_EXITING) && threads <= 1) {
		inj_set_why(in, "process %d is exiting", in->pid);
		return -ESRCH;
	}
	if (tracer > 0) {
		comm_of((pid_t)tracer, comm, sizeof(comm));
		inj_set_why(in, "already traced by PID %ld (%s)", tracer, comm);
		return -EPERM;
	}
	return 0;
}

static void explain_seize_error(struct inj *in, pid_t tid, int err)
{
	char path[64], status[4096], comm[64], scope[16] = "";
	long tracer = -1;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", in->pid, tid);
	if (!read_file(path, status, sizeof(status)))
		tracer = status_long(status, "TracerPid");
	if (err == -EPERM && tracer > 0) {
		comm_of((pid_t)tracer, comm, sizeof(comm));
		inj_set_why(in, "already traced by PID %ld (%s)", tracer, comm);
		return;
	}
	if (err == -EPERM) {
		read_file("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof(scope));
		scope[strcspn(scope, "\n")] = '\0';
		inj_set_why(in, "failed to seize process %d: %s (need CAP_SYS_PTRACE or the same user%s%s)",
			    in->pid, strerror(-err), *scope ? "; kernel.yama.ptrace_scope=" : "", scope);
		return;
	}
	inj_set_why(in, "failed to seize thread %d of process %d: %s", tid, in->pid, strerror(-err));
}

/* Detach every parked thread; used to back out and to release. */
int inj_detach_all(struct inj *in)
{
	int first = 0;

	for (int i = 0; i < in->nr; i++) {
		struct inj_thread *t = &in->t[i];

		if (t->gone || !t->parked)
			continue;
		if (in->options & PTRACE_O_EXITKILL)
			ptrace(PTRACE_SETOPTIONS, t->tid, 0,
			       (void *)(in->options & ~(unsigned long)PTRACE_O_EXITKILL));
	}
	for (int i = 0; i < in->nr; i++) {
		struct inj_thread *t = &in->t[i];

		if (t->gone || !t->parked)
			continue;
		if (t->pending_stop)
			syscall(SYS_tgkill, in->pid, t->tid, SIGSTOP);
		if (ptrace(PTRACE_DETACH, t->tid, 0, 0) < 0 && errno != ESRCH && !first)
			first = -errno;
		t->parked = false;
	}
	return first;
}

static int seize_one(struct inj *in, pid_t tid)
{
	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)in->options) == 0)
		return 0;
	/* Not allowed to suspend filters here (mevitop got a filter of its own?): seize
	 * without, and the guard decides - only while no thread holds the option yet. */
	if ((errno == EPERM || errno == EINVAL) && !in->nr &&
	    (in->options & PTRACE_O_SUSPEND_SECCOMP)) {
		in->options &= ~(unsigned long)PTRACE_O_SUSPEND_SECCOMP;
		if (ptrace(PTRACE_SEIZE, tid, 0, (void *)in->options) == 0)
			return 0;
	}
	return -errno;
}

int inj_seize_threads(struct inj *in)
{
	uint64_t deadline = clock_mono_ns() + (uint64_t)in->timeout_ms * 1000000ull;
	char path[64];
	int err, live;

	stage_enter("inj", "seize");
	err = check_target(in);
	if (err)
		return err;
	in->pidfd = (int)syscall(__NR_pidfd_open, in->pid, 0);
	if (in->pidfd < 0) {
		err = -errno;
		inj_set_why(in, "failed to open pidfd of process %d: %s", in->pid, strerror(-err));
		return err;
	}
	in->options = PTRACE_O_TRACESYSGOOD;
	/* Held stopped for the whole attach: the filters are suspended exactly that long. */
	if (suspend_seccomp)
		in->options |= PTRACE_O_SUSPEND_SECCOMP;
	snprintf(path, sizeof(path), "/proc/%d/task", in->pid);
	for (;;) {
		struct dirent *de;
		int added = 0;
		DIR *d = opendir(path);

		if (!d) {
			err = errno == ENOENT ? -ESRCH : -errno;
			inj_set_why(in, "process %d exited", in->pid);
			goto fail;
		}
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);
			char st;
			int idx;

			if (tid <= 0 || inj_find_thread(in, tid))
				continue;
			if (task_stat(in->pid, tid, &st, NULL) || st == 'Z' || st == 'X')
				continue;
			err = seize_one(in, tid);
			if (err) {
				if (err == -ESRCH)
					continue;
				closedir(d);
				explain_seize_error(in, tid, err);
				goto fail;
			}
			test_kill_arm();
			idx = inj_add_thread(in, tid);
			if (idx < 0) {
				err = idx;
				closedir(d);
				ptrace(PTRACE_INTERRUPT, tid, 0, 0);
				inj_set_why(in, "failed to allocate thread table: %s", strerror(-err));
				goto fail;
			}
			ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			added++;
		}
		closedir(d);
		for (int i = 0; i < in->nr; i++) {
			if (in->t[i].gone || in->t[i].parked)
				continue;
			err = inj_park(in, i, deadline);
			if (err == -ETIMEDOUT) {
				inj_set_why(in, "thread %d of process %d did not stop within %u ms",
					    in->t[i].tid, in->pid, in->timeout_ms);
				goto fail;
			}
			if (err == -ENOMEM)
				goto fail;
			if (!err)
				in->t[i].was_stopped = in->t[i].group_stop;
		}
		if (!added)
			break;
		if (clock_mono_ns() >= deadline) {
			err = -ETIMEDOUT;
			inj_set_why(in, "threads of process %d kept appearing for %u ms", in->pid,
				    in->timeout_ms);
			goto fail;
		}
	}
	live = 0;
	for (int i = 0; i < in->nr; i++)
		live += in->t[i].parked;
	/* every thread is parked: none can install a filter behind our back now */
	inj_read_seccomp(in);
	in->suspended = in->options & PTRACE_O_SUSPEND_SECCOMP;
	if (!live) {
		err = -ESRCH;
		inj_set_why(in, "process %d exited", in->pid);
		goto fail;
	}
	err = inj_open_mem(in);
	if (err) {
		inj_set_why(in, "failed to open memory of process %d: %s", in->pid, strerror(-err));
		goto fail;
	}
	err = scratch_prepare(in);
	if (!err && !in->seccomp)	/* filtered: at the first call, past the guard */
		err = scratch_bootstrap(in);
	if (err)
		goto fail;
	return 0;
fail:
	inj_detach_all(in);
	return err;
}
