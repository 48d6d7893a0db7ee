// SPDX-License-Identifier: GPL-2.0
/*
 * The last close of the perf-based BPF links, left to a grandchild.
 *
 * A program attached to a tracepoint through perf (tp/ programs: the per-syscall
 * tracepoints, the tracefs fallbacks) is detached by the last close of its link:
 * bpf_perf_link_release -> perf_event_detach_bpf_prog -> synchronize_rcu_tasks_trace,
 * then perf_trace_destroy's grace periods under the kernel's event_mutex (both seen in
 * /proc/PID/task/N/stack), ~40 ms a link here.  Trace mode's 14 took ~0.55 s at exit even
 * closed from parallel threads, and a process is not gone (its parent's wait does not
 * return) until its last close has returned: `q` lagged, and each trace-mode test paid it.
 *
 * So, at teardown, a grandchild takes those closes over.  It inherits every fd, closes
 * each one the caller did not name (close_range over the gaps: no /proc needed) (stdout too: a reader waiting for EOF must not wait
 * for it; the programs and maps, which the named links keep) and says so on a pipe.  The
 * caller's own closes are then not the last of those links (at once), and the last of
 * everything else (the fault hook, a tp_btf program, is detached before the caller
 * returns).  The grandchild waits for the caller's end of a second pipe to close
 * (perf_release_end, or the caller's exit) -- exiting earlier, its closes would not be
 * the last -- then exits, and its exit pays the grace periods.  Until then the named
 * links' programs still run (mevitop's are on mmap, munmap, mremap, madvise, brk and the
 * like, not on faults) into a ring nobody reads.  The child between the forks exits at
 * once: the grandchild is reparented to init, which reaps it (no zombie under a
 * long-lived caller).  Only system calls run after fork (a multithreaded parent: another
 * thread may hold malloc's lock).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kernel/perf_release.h"

#define KEEP_MAX	72

/* Closes [from, to] (close_range, 5.9+; else one by one up to the fd limit). */
static void close_from(unsigned int from, unsigned int to)
{
	unsigned int fd;

	if (from > to || !syscall(SYS_close_range, from, to, 0))
		return;
	if (to > (unsigned int)sysconf(_SC_OPEN_MAX))
		to = (unsigned int)sysconf(_SC_OPEN_MAX);
	for (fd = from; fd <= to; fd++)
		syscall(SYS_close, fd);
}

/* Closes every fd but keep[0..n) and the two pipe ends: the gaps between them, sorted
 * here (no malloc after fork). */
static void keep_only(const int *keep, size_t n, int ready, int wait_end)
{
	int k[KEEP_MAX];
	size_t m = 0, i, j;
	unsigned int next = 0;

	k[m++] = ready;
	k[m++] = wait_end;
	for (i = 0; i < n && m < KEEP_MAX; i++)
		k[m++] = keep[i];
	for (i = 1; i < m; i++)
		for (j = i; j && k[j - 1] > k[j]; j--) {
			int t = k[j];

			k[j] = k[j - 1];
			k[j - 1] = t;
		}
	for (i = 0; i < m; i++) {
		if (k[i] < 0 || (unsigned int)k[i] < next)
			continue;
		if ((unsigned int)k[i] > next)
			close_from(next, (unsigned int)k[i] - 1);
		next = (unsigned int)k[i] + 1;
	}
	close_from(next, ~0U);
}

static void close_pair(int *p)
{
	close(p[0]);
	close(p[1]);
}

int perf_release_begin(const int *keep, size_t n, int *hold)
{
	int ready[2], wait_end[2], status, err;
	pid_t child;
	char c;
	ssize_t r;

	if (pipe2(ready, O_CLOEXEC))
		return -errno;
	if (pipe2(wait_end, O_CLOEXEC)) {
		err = -errno;
		close_pair(ready);
		return err;
	}
	child = fork();
	if (child < 0) {
		err = -errno;
		close_pair(ready);
		close_pair(wait_end);
		return err;
	}
	if (child == 0) {
		sigset_t all;

		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);	/* the caller's handlers are not ours */
		if (fork() != 0)
			syscall(SYS_exit_group, 0);	/* the grandchild goes to init */
		prctl(PR_SET_NAME, "mevitop-detach");
		syscall(SYS_chdir, "/");	/* holds no directory of the caller's busy */
		keep_only(keep, n, ready[1], wait_end[0]);
		syscall(SYS_write, ready[1], "x", 1);
		syscall(SYS_close, ready[1]);
		/* EOF once the caller's end is closed: its closes are done. */
		while (syscall(SYS_read, wait_end[0], &c, 1) > 0)
			;
		syscall(SYS_exit_group, 0);	/* the last closes of the links */
	}
	close(ready[1]);
	close(wait_end[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	/* One byte: the grandchild holds the links and nothing else.  EOF: it died first (or
	 * the fork between failed), and holds nothing at all. */
	while ((r = read(ready[0], &c, 1)) < 0 && errno == EINTR)
		;
	close(ready[0]);
	if (r != 1) {
		close(wait_end[1]);
		return -ECHILD;
	}
	*hold = wait_end[1];
	return 0;
}

void perf_release_end(int hold)
{
	close(hold);
}
