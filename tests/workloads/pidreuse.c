// SPDX-License-Identifier: GPL-2.0
/*
 * A parent whose children the test can give a pid of its choosing (clone3's set_tid, what
 * CRIU restores pids with; root only), so a test can reuse a pid on demand: the process
 * list's fold set must not carry over to a new process under an old pid.
 *
 * Each child names itself, forks one grandchild (NAME + "k": a child has something to fold)
 * and both wait.  The root reaps them (a quit is answered once both are gone, so the pid is
 * free again).
 *
 *   pidreuse                      prints "ready PID"
 *   spawn PID NAME                a child with pid PID (0: any); "done MONO_NS CHILD GRANDCHILD"
 *   quit PID                      the child PID and its grandchild are killed and reaped
 *   exit
 */
#include <linux/sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "workload.h"

#define MAX_KIDS 16

struct kid {
	pid_t pid, grandchild;
};

static struct kid kids[MAX_KIDS];

static void name_self(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

/* The child: its grandchild (reporting its pid through the pipe), then a wait forever. */
static void child(const char *name, int report)
{
	char kname[16];
	pid_t g;

	name_self(name);
	g = fork();
	if (g == 0) {
		snprintf(kname, sizeof(kname), "%.14sk", name);
		name_self(kname);
		for (;;)
			pause();
	}
	if (write(report, &g, sizeof(g)) != sizeof(g))
		_exit(3);
	for (;;)
		pause();
}

static void spawn(pid_t want, const char *name)
{
	struct clone_args a = { .exit_signal = SIGCHLD };
	int fds[2];
	pid_t pid, g = -1;
	char extra[64];
	size_t i;

	for (i = 0; i < MAX_KIDS && kids[i].pid; i++)
		;
	if (i == MAX_KIDS || pipe(fds)) {
		errno = i == MAX_KIDS ? ENOSPC : errno;
		wl_fail("spawn");
		return;
	}
	if (want) {
		a.set_tid = (uintptr_t)&want;
		a.set_tid_size = 1;
	}
	pid = syscall(SYS_clone3, &a, sizeof(a));
	if (pid == 0) {
		close(fds[0]);
		child(name, fds[1]);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &g, sizeof(g)) != sizeof(g)) {
		wl_fail("clone3");
		close(fds[0]);
		return;
	}
	close(fds[0]);
	kids[i] = (struct kid){ pid, g };
	snprintf(extra, sizeof(extra), "%d %d", pid, g);
	wl_done(extra);
}

static void quit(pid_t pid)
{
	for (size_t i = 0; i < MAX_KIDS; i++) {
		if (kids[i].pid != pid || !pid)
			continue;
		/* The grandchild is not ours to reap: it goes to init (or a subreaper). Waiting for
		 * the child is what frees its pid. */
		kill(kids[i].grandchild, SIGKILL);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		kids[i].pid = 0;
		wl_done(NULL);
		return;
	}
	errno = ESRCH;
	wl_fail("quit");
}

int main(void)
{
	char line[256], name[64];
	int pid;

	printf("ready %d\n", getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "spawn %d %15s", &pid, name) == 2)
			spawn(pid, name);
		else if (sscanf(line, "quit %d", &pid) == 1)
			quit(pid);
		else if (!strncmp(line, "exit", 4))
			break;
		else {
			errno = EINVAL;
			wl_fail("command");
		}
	}
	for (size_t i = 0; i < MAX_KIDS; i++)
		if (kids[i].pid)
			quit(kids[i].pid);
	return 0;
}
