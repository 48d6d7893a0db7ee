// SPDX-License-Identifier: GPL-2.0
/*
 * forkexec - short processes at a steady rate, for the lost-exit tests: with a tiny ring
 * buffer their exit records are lost, and a monitor that believed the ring would keep them
 * listed (ghosts).  Each child execs /bin/true; the parent reaps as it goes.
 *
 *   forkexec                 prints "ready PID"
 *   load RATE MS             RATE fork+exec per second for MS milliseconds; every child
 *                            reaped: "done MONO_NS STARTED"
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

int main(void)
{
	char line[128];
	unsigned long rate, ms;

	printf("ready %d\n", getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "load %lu %lu", &rate, &ms) == 2)
			load(rate, ms);
		else if (!strncmp(line, "exit", 4))
			break;
	}
	return 0;
}
