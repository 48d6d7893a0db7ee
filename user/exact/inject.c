// SPDX-License-Identifier: GPL-2.0
/*
 * inject.c - staged ptrace injection: seize, run remote system calls, release.
 *
 * How a remote system call is run without writing to the target's text:
 *
 *   Every thread we hold is parked in a PTRACE_EVENT_STOP, which the kernel enters from
 *   get_signal() on the way back to user space.  If the thread had been blocked in a
 *   system call, its registers at that point still say so (orig_rax = the call, rax =
 *   -ERESTARTSYS & co., rip just after the `syscall` instruction) and the kernel will
 *   apply its restart rules only *after* get_signal() returns.
 *
 *   To run a call we save registers, signal mask and XSAVE state, write an rt_sigreturn
 *   frame holding them into our scratch page in the target, point rip at the page's
 *   trampoline (`syscall` [; close the new fd]; rt_sigreturn on that frame), set
 *   orig_rax = -1 so the pending restart logic leaves our registers alone, block every
 *   signal - in that order: a borrowed register or mask is only ever seen with rip in
 *   code that gets the thread home by itself - and step it with PTRACE_SYSCALL to the
 *   syscall-exit stop.  If the monitor dies at any point from here on, the kernel lets
 *   the thread go and the trampoline finishes: no fd left, everything restored.  With
 *   the monitor alive we put the mask and then the registers back ourselves and, instead
 *   of resuming from that syscall-exit stop (where the kernel
 *   would return -ERESTARTSYS to user space verbatim), queue a PTRACE_INTERRUPT and
 *   continue: the thread goes through get_signal() again and parks in a fresh event
 *   stop with its original registers.  When it is finally detached, the kernel restarts
 *   the interrupted call, or delivers a signal that arrived meanwhile, exactly as if we
 *   had never been there - including -ERESTART_RESTARTBLOCK (nanosleep, poll) and the
 *   sigsuspend()/ppoll() temporary masks.  CRIU's compel instead rewrites the registers
 *   to the restarted state itself, which turns a signal that arrives while the thread is
 *   held into a lost EINTR.  (The frame, used only when we are dead, has to pre-apply
 *   the restart the same way: rt_sigreturn disables it.)
 *
 *   The scratch page is mapped at each attach by a bootstrap that borrows the target's
 *   own code, and unmapped the same way before the target is let go (scratch.c); only a
 *   killed attach leaves it, for the next one to reuse (README, "Exact mode").  One call's
 *   machinery is inject_call.c.
 *
 * The ptrace tracer is a worker thread owned by each struct inj, so the monitor can
 * call from any thread, and so a tracee that never stopped can still be released (the
 * kernel detaches everything a tracer thread held when it exits).
 */
#include "inject.h"
#include "inject_maps.h"
#include "inject_x86.h"
#include "inject_int.h"
#include "scratch.h"
#include "stage.h"
#include "procfs.h"
#include "page.h"
#include "syscall_err.h"
#include "clock.h"

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

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP	128
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open		434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd	438
#endif
#ifndef PTRACE_O_SUSPEND_SECCOMP
#define PTRACE_O_SUSPEND_SECCOMP	(1 << 21)
#endif
#ifndef PF_EXITING
#define PF_EXITING		0x00000004
#endif
#ifndef PF_KTHREAD
#define PF_KTHREAD		0x00200000
#endif

#define INJ_DEFAULT_TIMEOUT_MS	2000
#define INJ_HOLD_FACTOR		10	/* watchdog: idle hold limit = factor * timeout */


/* ---- small helpers ---- */


static void copy_why(char *why, size_t whylen, const char *src)
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
static void read_seccomp(struct inj *in)
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
 * it is parked: do_follow's options drop the bit before it runs). */
static void suspend_parked(struct inj *in, int idx)
{
	in->suspended = false;
	if (!suspend_seccomp)
		return;
	in->suspended = ptrace(PTRACE_SETOPTIONS, in->t[idx].tid, 0,
			       (void *)(in->options | PTRACE_O_SUSPEND_SECCOMP)) == 0;
}

/* ---- target memory ---- */

static int open_mem(struct inj *in)
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
		set_why(in, "invalid PID %d", in->pid);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", in->pid);
	err = read_file(path, status, sizeof(status));
	if (err) {
		set_why(in, "no such process %d", in->pid);
		return err == -ENOENT ? -ESRCH : err;
	}
	tgid = status_long(status, "Tgid");
	if (tgid > 0 && tgid != in->pid) {
		/* a thread ID: take its process */
		in->pid = (pid_t)tgid;
		return check_target(in);
	}
	if (in->pid == getpid()) {
		set_why(in, "cannot seize ourselves (PID %d)", in->pid);
		return -EINVAL;
	}
	state = status_state(status);
	threads = status_long(status, "Threads");
	tracer = status_long(status, "TracerPid");
	in->seccomp = (int)status_long(status, "Seccomp");
	if (in->seccomp < 0)
		in->seccomp = 0;
	if (task_stat(in->pid, in->pid, &st, &flags) == 0 && (flags & PF_KTHREAD)) {
		set_why(in, "process %d is a kernel thread", in->pid);
		return -EINVAL;
	}
	if (state == 'X' || (state == 'Z' && threads <= 1)) {
		set_why(in, "process %d is a zombie", in->pid);
		return -ESRCH;
	}
	if ((flags & PF_EXITING) && threads <= 1) {
		set_why(in, "process %d is exiting", in->pid);
		return -ESRCH;
	}
	if (tracer > 0) {
		comm_of((pid_t)tracer, comm, sizeof(comm));
		set_why(in, "already traced by PID %ld (%s)", tracer, comm);
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
		set_why(in, "already traced by PID %ld (%s)", tracer, comm);
		return;
	}
	if (err == -EPERM) {
		read_file("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof(scope));
		scope[strcspn(scope, "\n")] = '\0';
		set_why(in, "failed to seize process %d: %s (need CAP_SYS_PTRACE or the same user%s%s)",
			in->pid, strerror(-err), *scope ? "; kernel.yama.ptrace_scope=" : "", scope);
		return;
	}
	set_why(in, "failed to seize thread %d of process %d: %s", tid, in->pid, strerror(-err));
}

/* Detach every parked thread; used to back out and to release. */
static int detach_all(struct inj *in)
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

static int do_seize(struct inj *in)
{
	uint64_t deadline = clock_mono_ns() + (uint64_t)in->timeout_ms * 1000000ull;
	char path[64];
	int err, live;

	xstage("inj", "seize");
	err = check_target(in);
	if (err)
		return err;
	in->pidfd = (int)syscall(__NR_pidfd_open, in->pid, 0);
	if (in->pidfd < 0) {
		err = -errno;
		set_why(in, "failed to open pidfd of process %d: %s", in->pid, strerror(-err));
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
			set_why(in, "process %d exited", in->pid);
			goto fail;
		}
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);
			char st;
			int idx;

			if (tid <= 0 || find_thread(in, tid))
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
			idx = add_thread(in, tid);
			if (idx < 0) {
				err = idx;
				closedir(d);
				ptrace(PTRACE_INTERRUPT, tid, 0, 0);
				set_why(in, "failed to allocate thread table: %s", strerror(-err));
				goto fail;
			}
			ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			added++;
		}
		closedir(d);
		for (int i = 0; i < in->nr; i++) {
			if (in->t[i].gone || in->t[i].parked)
				continue;
			err = park(in, i, deadline);
			if (err == -ETIMEDOUT) {
				set_why(in, "thread %d of process %d did not stop within %u ms",
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
			set_why(in, "threads of process %d kept appearing for %u ms", in->pid,
				in->timeout_ms);
			goto fail;
		}
	}
	live = 0;
	for (int i = 0; i < in->nr; i++)
		live += in->t[i].parked;
	/* every thread is parked: none can install a filter behind our back now */
	read_seccomp(in);
	in->suspended = in->options & PTRACE_O_SUSPEND_SECCOMP;
	if (!live) {
		err = -ESRCH;
		set_why(in, "process %d exited", in->pid);
		goto fail;
	}
	err = open_mem(in);
	if (err) {
		set_why(in, "failed to open memory of process %d: %s", in->pid, strerror(-err));
		goto fail;
	}
	err = prepare_scratch(in);
	if (!err && !in->seccomp)	/* filtered: at the first call, past the guard */
		err = bootstrap_scratch(in);
	if (err)
		goto fail;
	return 0;
fail:
	detach_all(in);
	return err;
}

/* ---- spawn ---- */

static void __attribute__((noreturn)) child_exec(char *const argv[], int errfd, int gofd)
{
	struct sigaction sa;
	sigset_t none;
	ssize_t n;
	char c;
	int e;

	/* The worker blocks every signal; give the command a clean slate. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	do
		n = read(gofd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127);	/* the monitor went away before seizing us */
	execvp(argv[0], argv);
	e = errno;
	n = write(errfd, &e, sizeof(e));
	_exit(127);
}

static int do_spawn(struct inj *in)
{
	uint64_t deadline;
	int errp[2] = { -1, -1 }, gop[2] = { -1, -1 };
	int err = 0, e = 0, st, idx;
	ssize_t n;
	pid_t pid;

	if (!in->spawn_argv || !in->spawn_argv[0]) {
		set_why(in, "no command to run");
		return -EINVAL;
	}
	if (pipe2(errp, O_CLOEXEC) < 0 || pipe2(gop, O_CLOEXEC) < 0) {
		err = -errno;
		set_why(in, "failed to create pipe: %s", strerror(-err));
		goto cleanup;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		set_why(in, "failed to fork: %s", strerror(-err));
		goto cleanup;
	}
	if (pid == 0) {
		close(errp[0]);
		close(gop[1]);
		child_exec(in->spawn_argv, errp[1], gop[0]);
	}
	close(errp[1]);
	errp[1] = -1;
	close(gop[0]);
	gop[0] = -1;
	in->pid = pid;
	in->spawned = true;
	in->options = PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC;
	if (ptrace(PTRACE_SEIZE, pid, 0, (void *)in->options) < 0) {
		err = -errno;
		set_why(in, "failed to seize child %d: %s", pid, strerror(-err));
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		goto cleanup;
	}
	idx = add_thread(in, pid);
	if (idx < 0) {
		err = idx;
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		goto cleanup;
	}
	if (write(gop[1], "g", 1) != 1) {
		err = -errno;
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		goto cleanup;
	}
	close(gop[1]);
	gop[1] = -1;
	do
		n = read(errp[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n == sizeof(e)) {
		/* exec failed: the child exits with 127; reap it */
		while (waitpid(pid, &st, __WALL) == pid && !WIFEXITED(st) && !WIFSIGNALED(st))
			ptrace(PTRACE_CONT, pid, 0, 0);
		mark_gone(&in->t[idx]);
		err = -e;
		set_why(in, "failed to execute %s: %s", in->spawn_argv[0], strerror(e));
		goto cleanup;
	}
	/* exec went through (the CLOEXEC pipe closed): wait for its exec stop */
	deadline = clock_mono_ns() + (uint64_t)in->timeout_ms * 1000000ull;
	for (;;) {
		err = wait_tid(pid, deadline, &st);
		if (err)
			break;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			err = -ESRCH;
			break;
		}
		if (WIFSTOPPED(st) && ((unsigned)st >> 16) == PTRACE_EVENT_EXEC)
			break;
		/* a signal before exec: deliver it */
		ptrace(PTRACE_CONT, pid, 0,
		       (void *)(long)(((unsigned)st >> 16) ? 0 : WSTOPSIG(st)));
	}
	if (err) {
		set_why(in, "failed to see child %d exec %s: %s", pid, in->spawn_argv[0],
			strerror(-err));
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		mark_gone(&in->t[idx]);
		goto cleanup;
	}
	/*
	 * Registers at the exec stop are not final (execve's return value is stored after
	 * it): move the thread to an ordinary event stop at the new entry point.
	 */
	ptrace(PTRACE_INTERRUPT, pid, 0, 0);
	ptrace(PTRACE_CONT, pid, 0, 0);
	err = park(in, idx, deadline);
	if (err) {
		set_why(in, "failed to stop child %d after exec: %s", pid, strerror(-err));
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		goto cleanup;
	}
	in->pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
	if (in->pidfd < 0) {
		err = -errno;
		set_why(in, "failed to open pidfd of child %d: %s", pid, strerror(-err));
		goto fail_kill;
	}
	err = open_mem(in);
	if (err) {
		set_why(in, "failed to open memory of child %d: %s", pid, strerror(-err));
		goto fail_kill;
	}
	read_seccomp(in);		/* a filter inherited across the exec */
	suspend_parked(in, idx);
	/* The trampoline, the frames and the syscall numbers are x86-64's. */
	if (procfs_exe_is_32bit(pid) == 1) {
		set_why(in, "process %d is 32-bit: 32-bit processes are not supported in exact "
			"mode", pid);
		err = -EOPNOTSUPP;
		goto fail_kill;
	}
	err = prepare_scratch(in);
	if (!err && !in->seccomp)	/* filtered: at the first call, past the guard */
		err = bootstrap_scratch(in);
	if (err)
		goto fail_kill;
	goto cleanup;
fail_kill:
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, __WALL) == pid && !WIFEXITED(st) && !WIFSIGNALED(st))
		;
	mark_gone(&in->t[idx]);
cleanup:
	for (int i = 0; i < 2; i++) {
		if (errp[i] >= 0)
			close(errp[i]);
		if (gop[i] >= 0)
			close(gop[i]);
	}
	return err;
}

static int do_syscall(struct inj *in, long nr, const long a[6], bool take_fd, long *ret,
		      int *local_fd)
{
	struct user_regs_struct restore;
	int idx, err;

	if (local_fd)
		*local_fd = -1;
	if (in->seccomp && !in->suspended && !in->allow_seccomp)
		return -EPERM;
	for (int i = 0; i < in->nr; i++)
		if (in->t[i].dirty && !in->t[i].gone)
			return -ETIMEDOUT;	/* its frame is still in use */
	idx = pick_thread(in, NULL);
	if (idx < 0) {
		for (int i = 0; i < in->nr; i++)
			if (in->t[i].running)
				return -EBUSY;	/* followed and running: inj_follow_exec() first */
		return -ESRCH;
	}
	err = bootstrap_scratch(in);
	if (err)
		return err;
	idx = pick_thread(in, NULL);
	if (idx < 0)
		return -ESRCH;
	err = save_thread(in, idx, in->scratch + SCRATCH_FRAME_OFF, 0, &restore);
	if (!err && in->scratch_len < scratch_need(in->cpu.xsize))
		err = -EOVERFLOW;
	if (err)
		return err;
	if (in->op_chain)
		return run_chain(in, idx, in->op_chain, &restore);
	return run_call(in, idx, in->entry[take_fd ? X86_TRAMP_CLOSE : X86_TRAMP_PLAIN],
			x86_sp(&in->cpu.regs), nr, a, take_fd, &restore, ret, local_fd);
}

/* ---- follow a spawned child across exec ---- */

static int resume_thread(struct inj_thread *t, int sig)
{
	long req = t->group_stop && !sig ? PTRACE_LISTEN : PTRACE_CONT;

	if (ptrace(req, t->tid, 0, (void *)(long)sig) < 0) {
		if (errno == ESRCH)
			mark_gone(t);
		return -errno;
	}
	t->parked = false;
	t->running = true;
	return 0;
}

static int after_exec(struct inj *in, uint64_t deadline)
{
	int idx, err;

	/* The exec'ing thread now runs as the leader; every other thread is gone. */
	for (int i = 0; i < in->nr; i++)
		mark_gone(&in->t[i]);
	in->nr = 0;
	idx = add_thread(in, in->pid);
	if (idx < 0)
		return idx;
	ptrace(PTRACE_INTERRUPT, in->pid, 0, 0);
	ptrace(PTRACE_CONT, in->pid, 0, 0);
	err = park(in, idx, deadline);
	if (err)
		return err;
	err = open_mem(in);
	read_seccomp(in);		/* the old program may have installed a filter */
	suspend_parked(in, idx);
	if (!err)
		err = prepare_scratch(in);	/* a new address space: no scratch page yet */
	if (!err && !in->seccomp)	/* filtered: at the first call, past the guard */
		err = bootstrap_scratch(in);
	return err;
}

static int do_follow(struct inj *in, unsigned timeout_ms, int *status)
{
	uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	unsigned delay = 20;

	if (!in->spawned)
		return -EINVAL;
	/* it runs from here: no page of ours while it does (injections come after an exec) */
	scratch_drop(in);
	/* without PTRACE_O_SUSPEND_SECCOMP: a running child runs under its own filters */
	in->options = PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC |
		      PTRACE_O_TRACECLONE;
	in->suspended = false;
	for (int i = 0; i < in->nr; i++) {
		struct inj_thread *t = &in->t[i];

		if (!t->parked || t->gone)
			continue;
		ptrace(PTRACE_SETOPTIONS, t->tid, 0, (void *)in->options);
		resume_thread(t, 0);
	}
	for (;;) {
		struct inj_thread *t;
		unsigned event;
		int st, sig, idx;
		pid_t r;

		r = waitpid(-1, &st, __WALL | __WNOTHREAD | WNOHANG);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			for (int i = 0; i < in->nr; i++)
				mark_gone(&in->t[i]);
			return -ESRCH;
		}
		if (r == 0) {
			if (clock_mono_ns() >= deadline)
				return -ETIMEDOUT;
			sleep_us(delay);
			if (delay < 2000)
				delay *= 2;
			continue;
		}
		delay = 20;
		t = find_thread(in, r);
		if (!t) {
			/* an auto-attached thread reporting before its parent's clone event */
			idx = add_thread(in, r);
			if (idx < 0)
				return idx;
			t = &in->t[idx];
			t->running = true;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			mark_gone(t);
			if (r == in->pid) {
				if (status)
					*status = st;
				for (int i = 0; i < in->nr; i++)
					mark_gone(&in->t[i]);
				return -ESRCH;
			}
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		event = (unsigned)st >> 16;
		sig = WSTOPSIG(st);
		if (t->foreign) {
			ptrace(PTRACE_DETACH, r, 0, 0);
			mark_gone(t);
			continue;
		}
		switch (event) {
		case PTRACE_EVENT_EXEC: {
			/* zombies of the old threads are released when the worker exits */
			return after_exec(in, clock_mono_ns() + (uint64_t)in->timeout_ms * 1000000ull);
		}
		case PTRACE_EVENT_CLONE:
			idx = (int)(t - in->t);
			if (follow_clone_event(in, r) == -ENOMEM)
				return -ENOMEM;
			resume_thread(&in->t[idx], 0);
			break;
		case PTRACE_EVENT_STOP:
			t->group_stop = is_stop_signal(sig);
			resume_thread(t, 0);
			break;
		case 0:
			t->group_stop = false;
			resume_thread(t, sig == (SIGTRAP | 0x80) ? 0 : sig);
			break;
		default:
			resume_thread(t, 0);
			break;
		}
	}
}

/* Wait for any ptrace stop of @tid (or its exit): 0 stopped, -ESRCH, -ETIMEDOUT. */
static int wait_stopped_any(pid_t tid, uint64_t deadline)
{
	int st, err = wait_tid(tid, deadline, &st);

	if (err)
		return err == -ETIMEDOUT ? err : -ESRCH;
	return WIFSTOPPED(st) ? 0 : -ESRCH;
}

static int do_release(struct inj *in)
{
	uint64_t deadline = clock_mono_ns() + (uint64_t)in->timeout_ms * 1000000ull;
	int err;

	if (in->released)
		return 0;
	/* Unmap the scratch page first (scratch.h): every thread is parked at its own code.
	 * If that cannot be done the page stays, as a killed monitor would leave it. */
	scratch_drop(in);
	/*
	 * A call that never stopped: the thread runs our trampoline, which finishes and
	 * restores it by itself.  Let it go as soon as it is in a stop we can detach from.
	 */
	for (int i = 0; i < in->nr; i++) {
		struct inj_thread *t = &in->t[i];

		if (t->gone || !t->dirty)
			continue;
		ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
		if (wait_stopped_any(t->tid, deadline) == 0)
			ptrace(PTRACE_DETACH, t->tid, 0, 0);
		mark_gone(t);
	}
	/* followed threads are running: stop them first (new ones may appear meanwhile) */
	for (int i = 0; i < in->nr; i++) {
		if (in->t[i].gone || !in->t[i].running)
			continue;
		ptrace(PTRACE_INTERRUPT, in->t[i].tid, 0, 0);
		if (park(in, i, deadline) == 0 && in->t[i].foreign) {
			ptrace(PTRACE_DETACH, in->t[i].tid, 0, 0);
			mark_gone(&in->t[i]);
		}
	}
	xstage("inj", "detach");
	err = detach_all(in);
	in->released = true;
	return err;
}

/* ---- worker thread ---- */

static void *worker_main(void *arg)
{
	struct inj *in = arg;
	sigset_t all;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	err = in->spawn_argv ? do_spawn(in) : do_seize(in);

	pthread_mutex_lock(&in->lock);
	in->start_err = err;
	in->start_done = true;
	pthread_cond_broadcast(&in->cond);
	if (err) {
		pthread_mutex_unlock(&in->lock);
		return NULL;
	}
	for (;;) {
		enum inj_op op;

		while (in->op == OP_NONE || in->op_done) {
			bool holding = false;

			for (int i = 0; i < in->nr && !in->released; i++)
				holding |= in->t[i].parked;
			if (holding) {
				uint64_t limit = (uint64_t)in->timeout_ms * INJ_HOLD_FACTOR * 1000000ull;
				uint64_t when = clock_mono_ns() + limit;
				struct timespec ts = {
					.tv_sec = (time_t)(when / 1000000000ull),
					.tv_nsec = (long)(when % 1000000000ull),
				};

				if (pthread_cond_timedwait(&in->cond, &in->lock, &ts) == ETIMEDOUT &&
				    (in->op == OP_NONE || in->op_done)) {
					/* watchdog: the caller went quiet while holding the target */
					pthread_mutex_unlock(&in->lock);
					do_release(in);
					pthread_mutex_lock(&in->lock);
					in->watchdog_fired = true;
				}
			} else {
				pthread_cond_wait(&in->cond, &in->lock);
			}
		}
		op = in->op;
		pthread_mutex_unlock(&in->lock);

		switch (op) {
		case OP_SYSCALL:
			err = in->released ? (in->watchdog_fired ? -ETIMEDOUT : -ESRCH)
					   : do_syscall(in, in->op_nr, in->op_args, in->op_take_fd,
							&in->op_ret, &in->op_fd);
			break;
		case OP_FOLLOW:
			err = in->released ? -ESRCH : do_follow(in, in->op_timeout, &in->op_status);
			break;
		case OP_RELEASE:
			err = do_release(in);
			break;
		case OP_CALL:
			err = in->released ? -ESRCH : in->op_fn(in, in->op_arg);
			break;
		default:
			err = -EINVAL;
			break;
		}

		pthread_mutex_lock(&in->lock);
		in->op_err = err;
		in->op_done = true;
		pthread_cond_broadcast(&in->cond);
		if (op == OP_RELEASE)
			break;
	}
	pthread_mutex_unlock(&in->lock);
	return NULL;
}

static int run_op(struct inj *in, enum inj_op op)
{
	int err;

	pthread_mutex_lock(&in->lock);
	in->op = op;
	in->op_done = false;
	pthread_cond_broadcast(&in->cond);
	while (!in->op_done)
		pthread_cond_wait(&in->cond, &in->lock);
	in->op = OP_NONE;
	err = in->op_err;
	pthread_mutex_unlock(&in->lock);
	return err;
}

static void inj_free(struct inj *in)
{
	if (!in)
		return;
	if (in->pidfd >= 0)
		close(in->pidfd);
	if (in->memfd >= 0)
		close(in->memfd);
	pthread_cond_destroy(&in->cond);
	pthread_mutex_destroy(&in->lock);
	free(in->t);
	free(in);
}

static int start(struct inj *in, char *why, size_t whylen)
{
	pthread_condattr_t ca;
	int err;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&in->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&in->lock, NULL);
	err = -pthread_create(&in->worker, NULL, worker_main, in);
	if (err) {
		copy_why(why, whylen, "failed to create the ptrace worker thread");
		return err;
	}
	in->worker_started = true;
	pthread_mutex_lock(&in->lock);
	while (!in->start_done)
		pthread_cond_wait(&in->cond, &in->lock);
	err = in->start_err;
	pthread_mutex_unlock(&in->lock);
	if (err) {
		/* the worker exits: anything it still held is detached by the kernel */
		pthread_join(in->worker, NULL);
		in->worker_started = false;
		copy_why(why, whylen, in->why);
	}
	return err;
}

static struct inj *inj_alloc(void)
{
	struct inj *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->pidfd = -1;
	in->memfd = -1;
	in->timeout_ms = INJ_DEFAULT_TIMEOUT_MS;
	return in;
}

/* ---- public API ---- */

int inj_seize(pid_t pid, unsigned timeout_ms, struct inj **out, char *why, size_t whylen)
{
	struct inj *in;
	int err;

	copy_why(why, whylen, "");
	if (!out)
		return -EINVAL;
	*out = NULL;
	in = inj_alloc();
	if (!in) {
		copy_why(why, whylen, "failed to allocate injection state: out of memory");
		return -ENOMEM;
	}
	in->pid = pid;
	if (timeout_ms)
		in->timeout_ms = timeout_ms;
	err = start(in, why, whylen);
	if (err) {
		inj_free(in);
		return err;
	}
	*out = in;
	return 0;
}

int inj_spawn(char *const argv[], struct inj **out, pid_t *pid, char *why, size_t whylen)
{
	struct inj *in;
	int err;

	copy_why(why, whylen, "");
	if (!out || !argv || !argv[0])
		return -EINVAL;
	*out = NULL;
	in = inj_alloc();
	if (!in) {
		copy_why(why, whylen, "failed to allocate injection state: out of memory");
		return -ENOMEM;
	}
	in->spawn_argv = argv;
	err = start(in, why, whylen);
	if (err) {
		inj_free(in);
		return err;
	}
	in->spawn_argv = NULL;
	if (pid)
		*pid = in->pid;
	*out = in;
	return 0;
}

int inj_syscall(struct inj *in, long nr, const long args[6], long *ret)
{
	static const long zero[6];
	long r = 0;
	int err;

	if (!in || !in->worker_started)
		return -EINVAL;
	in->op_nr = nr;
	memcpy(in->op_args, args ? args : zero, sizeof(in->op_args));
	in->op_ret = 0;
	err = run_op(in, OP_SYSCALL);
	r = in->op_ret;
	if (ret)
		*ret = r;
	return err;
}

int inj_syscall_fd(struct inj *in, long nr, const long args[6], long *ret, int *local_fd)
{
	int err;

	if (!in || !in->worker_started || !local_fd)
		return -EINVAL;
	memcpy(in->op_args, args, sizeof(in->op_args));
	in->op_nr = nr;
	in->op_ret = 0;
	in->op_take_fd = true;
	in->op_fd = -1;
	err = run_op(in, OP_SYSCALL);
	in->op_take_fd = false;
	if (ret)
		*ret = in->op_ret;
	*local_fd = in->op_fd;
	return err;
}

int inj_syscall_chain(struct inj *in, const struct inj_chain *ch)
{
	int err;

	if (!in || !in->worker_started || !ch || !ch->build || !ch->at_exit || ch->nsteps <= 0)
		return -EINVAL;
	in->op_chain = ch;
	err = run_op(in, OP_SYSCALL);
	in->op_chain = NULL;
	return err;
}

int inj_follow_exec(struct inj *in, unsigned timeout_ms, int *status)
{
	int err;

	if (!in || !in->worker_started)
		return -EINVAL;
	if (!in->spawned)
		return -EINVAL;
	in->op_timeout = timeout_ms;
	in->op_status = 0;
	err = run_op(in, OP_FOLLOW);
	if (err == -ESRCH && status)
		*status = in->op_status;
	return err;
}

int inj_release(struct inj *in)
{
	int err = 0;

	if (!in)
		return 0;
	if (in->worker_started) {
		err = run_op(in, OP_RELEASE);
		pthread_join(in->worker, NULL);
		in->worker_started = false;
	}
	inj_free(in);
	return err;
}

pid_t inj_pid(const struct inj *in)
{
	return in ? in->pid : -1;
}

int inj_nr_threads(const struct inj *in)
{
	return in ? in->nr : 0;
}

bool inj_thread_was_stopped(const struct inj *in, int idx, pid_t *tid)
{
	if (!in || idx < 0 || idx >= in->nr)
		return false;
	if (tid)
		*tid = in->t[idx].tid;
	return in->t[idx].was_stopped;
}

int inj_seccomp_mode(const struct inj *in)
{
	return in ? in->seccomp : 0;
}

void inj_allow_seccomp(struct inj *in, bool allow)
{
	if (in)
		in->allow_seccomp = allow;
}

void inj_set_guard(struct inj *in, inj_guard_fn fn, void *ctx)
{
	if (!in)
		return;
	in->guard = fn;
	in->guard_ctx = ctx;
}

const char *inj_guard_why(const struct inj *in)
{
	return in ? in->guard_why : "";
}

bool inj_seccomp_suspended(const struct inj *in)
{
	return in && in->suspended;
}

int inj_run_in_tracer(struct inj *in, int (*fn)(struct inj *in, void *arg), void *arg)
{
	if (!in || !in->worker_started || !fn)
		return -EINVAL;
	in->op_fn = fn;
	in->op_arg = arg;
	return run_op(in, OP_CALL);
}

uint64_t inj_syscall_ip(const struct inj *in)
{
	if (!in)
		return 0;
	return in->scratch ? in->entry[X86_TRAMP_PLAIN] : in->gadget_ip;
}

uint64_t inj_scratch(const struct inj *in, uint64_t *len)
{
	if (len)
		*len = in ? in->scratch_len : 0;
	return in ? in->scratch : 0;
}
