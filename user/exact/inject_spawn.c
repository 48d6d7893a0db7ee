// SPDX-License-Identifier: GPL-2.0
/*
 * inject_spawn.c - `mevitop run`'s CMD: started seized (PTRACE_O_EXITKILL), and
 * followed across its execs until it exits.
 */
#include "exact/inject.h"
#include "exact/inject_maps.h"
#include "exact/arch.h"
#include "exact/inject_int.h"
#include "exact/inject_seize.h"
#include "exact/inject_spawn.h"
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

/* The spawned child's exec stop, delivering any signal that comes before it. */
static int wait_exec_stop(pid_t pid, uint64_t deadline)
{
	int err, st;

	for (;;) {
		err = inj_wait_tid(pid, deadline, &st);
		if (err)
			return err;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return -ESRCH;
		if (WIFSTOPPED(st) && ((unsigned)st >> 16) == PTRACE_EVENT_EXEC)
			return 0;
		/* a signal before exec: deliver it */
		ptrace(PTRACE_CONT, pid, 0,
		       (void *)(long)(((unsigned)st >> 16) ? 0 : WSTOPSIG(st)));
	}
}

/* The child parked at its new entry point: its pidfd, its memory, its filters, its scratch
 * page.  On failure the caller kills it. */
static int open_spawned(struct inj *in, pid_t pid, int idx)
{
	int err;

	in->pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
	if (in->pidfd < 0) {
		err = -errno;
		inj_set_why(in, "failed to open pidfd of child %d: %s", pid, strerror(-err));
		return err;
	}
	err = inj_open_mem(in);
	if (err) {
		inj_set_why(in, "failed to open memory of child %d: %s", pid, strerror(-err));
		return err;
	}
	inj_read_seccomp(in);		/* a filter inherited across the exec */
	inj_suspend_parked(in, idx);
	/* The trampoline, the frames and the syscall numbers are the native ABI's. */
	if (procfs_exe_is_32bit(pid) == 1) {
		inj_set_why(in, "process %d is 32-bit: 32-bit processes are not supported in exact "
			    "mode", pid);
		err = -EOPNOTSUPP;
		return err;
	}
	err = scratch_prepare(in);
	if (!err && !in->seccomp)	/* filtered: at the first call, past the guard */
		err = scratch_bootstrap(in);
	return err;
}

int inj_spawn_threads(struct inj *in)
{
	uint64_t deadline;
	int errp[2] = { -1, -1 }, gop[2] = { -1, -1 };
	int err = 0, e = 0, st, idx;
	ssize_t n;
	pid_t pid;

	if (!in->spawn_argv || !in->spawn_argv[0]) {
		inj_set_why(in, "no command to run");
		return -EINVAL;
	}
	if (pipe2(errp, O_CLOEXEC) < 0 || pipe2(gop, O_CLOEXEC) < 0) {
		err = -errno;
		inj_set_why(in, "failed to create pipe: %s", strerror(-err));
		goto cleanup;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		inj_set_why(in, "failed to fork: %s", strerror(-err));
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
		inj_set_why(in, "failed to seize child %d: %s", pid, strerror(-err));
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		goto cleanup;
	}
	idx = inj_add_thread(in, pid);
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
		inj_mark_gone(&in->t[idx]);
		err = -e;
		inj_set_why(in, "failed to execute %s: %s", in->spawn_argv[0], strerror(e));
		goto cleanup;
	}
	/* exec went through (the CLOEXEC pipe closed): wait for its exec stop */
	deadline = clock_mono_ns() + (uint64_t)in->timeout_ms * 1000000ull;
	err = wait_exec_stop(pid, deadline);
	if (err) {
		inj_set_why(in, "failed to see child %d exec %s: %s", pid, in->spawn_argv[0],
			    strerror(-err));
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		inj_mark_gone(&in->t[idx]);
		goto cleanup;
	}
	/*
	 * Registers at the exec stop are not final (execve's return value is stored after
	 * it): move the thread to an ordinary event stop at the new entry point.
	 */
	ptrace(PTRACE_INTERRUPT, pid, 0, 0);
	ptrace(PTRACE_CONT, pid, 0, 0);
	err = inj_park(in, idx, deadline);
	if (err) {
		inj_set_why(in, "failed to stop child %d after exec: %s", pid, strerror(-err));
		kill(pid, SIGKILL);
		waitpid(pid, &st, __WALL);
		goto cleanup;
	}
	err = open_spawned(in, pid, idx);
	if (err)
		goto fail_kill;
	goto cleanup;
fail_kill:
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, __WALL) == pid && !WIFEXITED(st) && !WIFSIGNALED(st))
		;
	inj_mark_gone(&in->t[idx]);
cleanup:
	for (int i = 0; i < 2; i++) {
		if (errp[i] >= 0)
			close(errp[i]);
		if (gop[i] >= 0)
			close(gop[i]);
	}
	return err;
}

/* ---- follow a spawned child across exec ---- */

static int resume_thread(struct inj_thread *t, int sig)
{
	long req = t->group_stop && !sig ? PTRACE_LISTEN : PTRACE_CONT;

	if (ptrace(req, t->tid, 0, (void *)(long)sig) < 0) {
		if (errno == ESRCH)
			inj_mark_gone(t);
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
		inj_mark_gone(&in->t[i]);
	in->nr = 0;
	idx = inj_add_thread(in, in->pid);
	if (idx < 0)
		return idx;
	ptrace(PTRACE_INTERRUPT, in->pid, 0, 0);
	ptrace(PTRACE_CONT, in->pid, 0, 0);
	err = inj_park(in, idx, deadline);
	if (err)
		return err;
	err = inj_open_mem(in);
	inj_read_seccomp(in);		/* the old program may have installed a filter */
	inj_suspend_parked(in, idx);
	if (!err)
		err = scratch_prepare(in);	/* a new address space: no scratch page yet */
	if (!err && !in->seccomp)	/* filtered: at the first call, past the guard */
		err = scratch_bootstrap(in);
	return err;
}

int inj_follow_threads(struct inj *in, unsigned timeout_ms, int *status)
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
				inj_mark_gone(&in->t[i]);
			return -ESRCH;
		}
		if (r == 0) {
			if (clock_mono_ns() >= deadline)
				return -ETIMEDOUT;
			inj_sleep_us(delay);
			if (delay < 2000)
				delay *= 2;
			continue;
		}
		delay = 20;
		t = inj_find_thread(in, r);
		if (!t) {
			/* an auto-attached thread reporting before its parent's clone event */
			idx = inj_add_thread(in, r);
			if (idx < 0)
				return idx;
			t = &in->t[idx];
			t->running = true;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			inj_mark_gone(t);
			if (r == in->pid) {
				if (status)
					*status = st;
				for (int i = 0; i < in->nr; i++)
					inj_mark_gone(&in->t[i]);
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
			inj_mark_gone(t);
			continue;
		}
		switch (event) {
		case PTRACE_EVENT_EXEC: {
			/* zombies of the old threads are released when the worker exits */
			return after_exec(in, clock_mono_ns() + (uint64_t)in->timeout_ms * 1000000ull);
		}
		case PTRACE_EVENT_CLONE:
			idx = (int)(t - in->t);
			if (inj_follow_clone_event(in, r) == -ENOMEM)
				return -ENOMEM;
			resume_thread(&in->t[idx], 0);
			break;
		case PTRACE_EVENT_STOP:
			t->group_stop = inj_is_stop_signal(sig);
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

