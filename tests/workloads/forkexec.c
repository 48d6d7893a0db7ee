// SPDX-License-Identifier: GPL-2.0
/*
 * forkexec - short processes at a steady rate, for the lost-exit tests: with a tiny ring
 * buffer their exit records are lost, and a monitor that believed the ring would keep them
 * listed (ghosts).  Each child execs /bin/true; the parent reaps as it goes.
 *
 *   forkexec                 prints "ready PID"
 *   load RATE MS             RATE fork+exec per second for MS milliseconds; every child
 *                            reaped: "done MONO_NS STARTED"
 *   hold N                   N children that exec /bin/sleep and stay: "done MONO_NS N"
 *   flood N                  N fork+exec of /bin/true as fast as it can, all reaped (fills a
 *                            stopped monitor's ring): "done MONO_NS N"
 *   release                  every held child killed and reaped: "done MONO_NS N"
 *   exit
 */
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>
#include "workload.h"

static unsigned long reap(bool block)
{
	unsigned long n = 0;

	while (waitpid(-1, NULL, block ? 0 : WNOHANG) > 0)
		n++;
	return n;
}

static void load(unsigned long rate, unsigned long ms)
{
	uint64_t start = wl_now_ns(), step = 1000000000ULL / (rate ? rate : 1), next = start;
	unsigned long started = 0;
	char extra[32];

	while (wl_now_ns() - start < ms * 1000000ULL) {
		pid_t c = fork();

		if (c == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (c > 0)
			started++;
		reap(false);
		next += step;
		uint64_t now = wl_now_ns();

		if (next > now) {
			struct timespec ts = { 0, (long)(next - now) };

			nanosleep(&ts, NULL);
		}
	}
	reap(true);
	snprintf(extra, sizeof(extra), "%lu", started);
	wl_done(extra);
}

/* The held children, killed by `release`.  `flood` reaps only what it started; `load` waits
 * for every child, so it is not sent while children are held. */
#define HOLD_MAX 256
static pid_t held[HOLD_MAX];
static unsigned long nheld;

static pid_t spawn(const char *path, char *const argv[])
{
	pid_t c = fork();

	if (c == 0) {
		execv(path, argv);
		_exit(127);
	}
	return c;
}

static void hold(unsigned long n)
{
	static char *const argv[] = { "sleep", "1000", NULL };
	char extra[32];

	while (n-- && nheld < HOLD_MAX) {
		pid_t c = spawn("/bin/sleep", argv);

		if (c > 0)
			held[nheld++] = c;
	}
	snprintf(extra, sizeof(extra), "%lu", nheld);
	wl_done(extra);
}

static void flood(unsigned long n)
{
	static char *const argv[] = { "true", NULL };
	unsigned long started = 0, i;
	pid_t *kids = calloc(n ? n : 1, sizeof(*kids));
	char extra[32];

	for (i = 0; kids && i < n; i++)
		if ((kids[started] = spawn("/bin/true", argv)) > 0)
			started++;
	for (i = 0; i < started; i++)
		waitpid(kids[i], NULL, 0);
	free(kids);
	snprintf(extra, sizeof(extra), "%lu", started);
	wl_done(extra);
}

static void release(void)
{
	unsigned long i, n = nheld;
	char extra[32];

	for (i = 0; i < nheld; i++)
		kill(held[i], SIGKILL);
	for (i = 0; i < nheld; i++)
		waitpid(held[i], NULL, 0);
	nheld = 0;
	snprintf(extra, sizeof(extra), "%lu", n);
	wl_done(extra);
}

int main(void)
{
	char line[128];
	unsigned long rate, ms, n;

	printf("ready %d\n", getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "load %lu %lu", &rate, &ms) == 2)
			load(rate, ms);
		else if (sscanf(line, "hold %lu", &n) == 1)
			hold(n);
		else if (sscanf(line, "flood %lu", &n) == 1)
			flood(n);
		else if (!strncmp(line, "release", 7))
			release();
		else if (!strncmp(line, "exit", 4))
			break;
	}
	return 0;
}
