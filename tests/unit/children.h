/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the unit tests that drive real child processes (test_inject.c,
 * test_uffd.c): children to kill when a test fails, waits with a guard, /proc readers.
 */
#ifndef MEVITOP_TEST_CHILDREN_H
#define MEVITOP_TEST_CHILDREN_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Children still alive when a test fails are killed by the teardown (kill_children). */
static pid_t live[16];

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static char state_of(pid_t pid, pid_t tid)
{
	char path[64], buf[512], st = '?';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	if (fgets(buf, sizeof(buf), f)) {
		char *p = strrchr(buf, ')');

		if (p && p[1] == ' ')
			st = p[2];
	}
	fclose(f);
	return st;
}

static char *slurp(const char *path)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	FILE *f = fopen(path, "r");

	assert_non_null(buf);
	assert_non_null(f);
	for (;;) {
		size_t r = fread(buf + n, 1, cap - n - 1, f);

		n += r;
		if (r == 0)
			break;
		if (n + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static bool wait_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

static void track(pid_t pid)
{
	for (int i = 0; i < 16; i++) {
		if (!live[i]) {
			live[i] = pid;
			return;
		}
	}
}

static void untrack(pid_t pid)
{
	for (int i = 0; i < 16; i++)
		if (live[i] == pid)
			live[i] = 0;
}

/*
 * A failed test can leave its injection holding the target's threads (the tracer is a
 * thread of this process): their zombies wait for a tracer's wait, and the leader is not
 * reaped before them, so waiting for the leader alone would hang the suite.  Any thread of
 * the tracer's group may do the tracer's wait: reap every child and tracee (__WALL) until
 * the leader is among them.
 */
static void kill_children(void)
{
	for (int i = 0; i < 16; i++) {
		if (live[i]) {
			pid_t got;

			kill(live[i], SIGKILL);
			do
				got = waitpid(-1, NULL, __WALL);
			while (got > 0 && got != live[i]);
			live[i] = 0;
		}
	}
}


/*
 * /proc/PID/maps without the injection's scratch page (exact/scratch.h): the one mapping
 * a killed monitor may leave.  Found independently of scratch.c: the r-x mapping of the
 * memfd /memfd:mevitop-scratch, named [anon:mevitop-scratch], or a small anonymous r-xp
 * mapping starting with the magic "MEVITOP-SCRATCH1" (or all zeros, if a monitor died
 * between mapping and writing it).
 */
static __attribute__((unused)) char *maps_without_scratch(pid_t pid)
{
	char path[64], *maps, *p, *e;
	FILE *mem;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = slurp(path);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem = fopen(path, "r");
	for (p = maps; *p; p = e) {
		unsigned long long start, end;
		char head[4096];
		bool ours;

		e = strchr(p, '\n');
		e = e ? e + 1 : p + strlen(p);
		ours = memmem(p, (size_t)(e - p), "[anon:mevitop-scratch]", 22) != NULL ||
		       (memmem(p, (size_t)(e - p), " r-xp ", 6) &&
			memmem(p, (size_t)(e - p), " /memfd:mevitop-scratch (deleted)\n", 34));
		if (!ours && mem && sscanf(p, "%llx-%llx", &start, &end) == 2 &&
		    end - start <= 4 * 4096 &&
		    memmem(p, (size_t)(e - p), " r-xp 00000000 00:00 0 ", 23) &&
		    !fseeko(mem, (off_t)start, SEEK_SET) && fread(head, 1, 4096, mem) == 4096) {
			static const char zero[4096];

			/* ours, or mapped by a monitor killed before it could write it */
			ours = !memcmp(head, "MEVITOP-SCRATCH1", 16) || !memcmp(head, zero, 4096);
		}
		if (ours) {
			memmove(p, e, strlen(e) + 1);
			e = p;
		}
	}
	if (mem)
		fclose(mem);
	return maps;
}

#endif
