// SPDX-License-Identifier: GPL-2.0
/*
 * A scriptable workload for mevitop's tests.  It prints "ready PID" and then performs one
 * memory behaviour per line read from stdin, answering "done MONO_NS [extra]" when the
 * behaviour is complete (MONO_NS: CLOCK_MONOTONIC after it), or "error ..." on failure.
 * The test then compares mevitop's snapshot with /proc/PID/pagemap.
 *
 * Regions are named; pages are 4 KiB; offsets and counts are in pages.
 *   map NAME PAGES [anon|shared|file=PATH|sharedfile=PATH] [populate] [hugepage] [align2m]
 *   touch NAME START COUNT STRIDE r|w
 *   unmap NAME START COUNT
 *   advise NAME START COUNT dontneed|free|remove|pageout|cold|willneed|populate_read|
 *          populate_write|hugepage|nohugepage
 *   remap NAME NEWPAGES grow|move|shrink
 *   protect NAME START COUNT r|rw|none
 *   protectloop NAME MS        (flip page 0 between r and rw for MS ms: a layout that changes
 *                              hundreds of thousands of times a second; answers the count)
 *   mlock NAME START COUNT
 *   brk DELTA_PAGES            (sbrk; positive grows, negative shrinks)
 *   brktouch COUNT             (write the top COUNT pages below the break)
 *   threads NAME NTHREADS START COUNT   (all threads write interleaved pages at once)
 *   ownthreads NAME NTHREADS START COUNT
 *                              (thread k writes only the pages START + j, j % NTHREADS == k,
 *                              one after the other; done says each thread's tid, in k order)
 *   readfile NAME START COUNT PATH      (read() into the region: kernel-mode faults)
 *   random NAME COUNT SEED     (writes COUNT pseudo-random pages of the region)
 *   crosscpu NAME ROUNDS       (round r: the main thread, on one CPU, maps fresh anonymous
 *                              memory over the region, MAP_FIXED; a thread on another CPU
 *                              then writes every (r % 5 + 2)th page; only the last round's
 *                              pages stay: a fault applied after a later round's mapping
 *                              record shows as a page too many)
 *   fork NAME START COUNT      (child writes those pages, reports, then waits forever)
 *   forkwait NAME START COUNT  (the same, but the child first waits for "release")
 *   release                    (lets the forkwait child write; done once it has)
 *   leaderexit                 (another thread takes over, the main thread pthread_exit()s;
 *                               done says the new thread's tid)
 *   exec                       (re-exec this program; prints "ready PID" again)
 *   exit
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "workload.h"

#define PAGE 4096UL
#define MAX_REGIONS 64

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

struct region {
	char name[32];
	char *base;
	size_t pages;
};

static struct region regions[MAX_REGIONS];
static size_t nregions;
static char *self_path;

static struct region *find(const char *name)
{
	size_t i;

	for (i = 0; i < nregions; i++)
		if (!strcmp(regions[i].name, name))
			return &regions[i];
	return NULL;
}

static struct region *get(const char *name)
{
	struct region *r = find(name);

	if (!r) {
		printf("error no region %s\n", name);
		fflush(stdout);
	}
	return r;
}


static void touch(char *base, size_t start, size_t count, size_t stride, bool write)
{
	volatile char *p;
	size_t i;

	for (i = start; i < start + count; i += stride) {
		p = base + i * PAGE;
		if (write)
			*p = (char)i | 1;
		else
			(void)*p;
	}
}

/* Writes count pages picked by a seeded xorshift: a working set larger than memory keeps
 * reclaim busy behind the process's back. */
static void cmd_random(char **argv)
{
	struct region *r = get(argv[1]);
	size_t count = strtoul(argv[2], NULL, 0), i;
	uint64_t x = strtoull(argv[3], NULL, 0) | 1;

	if (!r)
		return;
	for (i = 0; i < count; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		r->base[(x % r->pages) * PAGE] = (char)i | 1;
	}
	wl_done(NULL);
}

static void cmd_map(char **argv, int argc)
{
	struct region *r;
	size_t pages = strtoul(argv[2], NULL, 0);
	int flags = MAP_PRIVATE | MAP_ANONYMOUS, fd = -1, i;
	bool hugepage = false, align2m = false;
	char *base;

	if (nregions == MAX_REGIONS || find(argv[1])) {
		printf("error region\n");
		fflush(stdout);
		return;
	}
	for (i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "anon")) {
			flags = MAP_PRIVATE | MAP_ANONYMOUS;
		} else if (!strcmp(argv[i], "shared")) {
			flags = MAP_SHARED | MAP_ANONYMOUS;
		} else if (!strncmp(argv[i], "file=", 5) || !strncmp(argv[i], "sharedfile=", 11)) {
			bool shared = argv[i][0] == 's';

			fd = open(strchr(argv[i], '=') + 1, O_RDWR);
			if (fd < 0) {
				wl_fail("open");
				return;
			}
			flags = shared ? MAP_SHARED : MAP_PRIVATE;
		} else if (!strcmp(argv[i], "populate")) {
			flags |= MAP_POPULATE;
		} else if (!strcmp(argv[i], "hugepage")) {
			hugepage = true;
		} else if (!strcmp(argv[i], "align2m")) {
			align2m = true;
		}
	}
	if (align2m) {
		/* Reserve 2 MiB more and map at an aligned address inside, so THP can apply. */
		char *res = mmap(NULL, pages * PAGE + (2UL << 20), PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		uintptr_t a;

		if (res == MAP_FAILED) {
			wl_fail("mmap");
			return;
		}
		a = ((uintptr_t)res + (2UL << 20) - 1) & ~((2UL << 20) - 1);
		if (a > (uintptr_t)res)
			munmap(res, a - (uintptr_t)res);
		munmap((char *)a + pages * PAGE, (uintptr_t)res + pages * PAGE + (2UL << 20) -
						 (a + pages * PAGE));
		base = mmap((void *)a, pages * PAGE, PROT_READ | PROT_WRITE, flags | MAP_FIXED,
			    fd, 0);
	} else {
		base = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, flags, fd, 0);
	}
	if (fd >= 0)
		close(fd);
	if (base == MAP_FAILED) {
		wl_fail("mmap");
		return;
	}
	if (hugepage && madvise(base, pages * PAGE, MADV_HUGEPAGE)) {
		wl_fail("madvise");
		return;
	}
	r = &regions[nregions++];
	snprintf(r->name, sizeof(r->name), "%s", argv[1]);
	r->base = base;
	r->pages = pages;
	char extra[64];

	snprintf(extra, sizeof(extra), "%p", base);
	wl_done(extra);
}

static int advice_of(const char *s)
{
	static const struct { const char *n; int a; } t[] = {
		{ "dontneed", MADV_DONTNEED }, { "free", MADV_FREE }, { "remove", MADV_REMOVE },
		{ "pageout", MADV_PAGEOUT }, { "cold", MADV_COLD }, { "willneed", MADV_WILLNEED },
		{ "populate_read", MADV_POPULATE_READ }, { "populate_write", MADV_POPULATE_WRITE },
		{ "hugepage", MADV_HUGEPAGE }, { "nohugepage", MADV_NOHUGEPAGE },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].n, s))
			return t[i].a;
	return -1;
}

struct thread_arg {
	char *base;
	size_t start, count, idx, n;
	pthread_barrier_t *barrier;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	size_t i;

	pthread_barrier_wait(a->barrier);
	/* Interleaved pages, and every thread also writes a few of the others' pages, so the
	 * same page is faulted by two threads at once. */
	for (i = a->start + a->idx; i < a->start + a->count; i += a->n)
		a->base[i * PAGE] = 1;
	for (i = a->start; i < a->start + a->count; i += 7)
		a->base[i * PAGE + 8] = 2;
	return NULL;
}

static void cmd_threads(char **argv)
{
	struct region *r = get(argv[1]);
	size_t n = strtoul(argv[2], NULL, 0), i;
	pthread_t tids[64];
	struct thread_arg args[64];
	pthread_barrier_t barrier;

	if (!r || n == 0 || n > 64)
		return;
	pthread_barrier_init(&barrier, NULL, n);
	for (i = 0; i < n; i++) {
		args[i] = (struct thread_arg){ r->base, strtoul(argv[3], NULL, 0),
					       strtoul(argv[4], NULL, 0), i, n, &barrier };
		pthread_create(&tids[i], NULL, thread_main, &args[i]);
	}
	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&barrier);
	wl_done(NULL);
}

struct own_arg {
	char *base;
	size_t start, count, idx, n;
	pid_t tid;
};

static void *own_main(void *p)
{
	struct own_arg *a = p;

	a->tid = syscall(SYS_gettid);
	for (size_t j = a->idx; j < a->count; j += a->n)
		a->base[(a->start + j) * PAGE] = 1;
	return NULL;
}

/* Who touched what, for a truth: the threads run one at a time, each on its own pages. */
static void cmd_ownthreads(char **argv)
{
	struct region *r = get(argv[1]);
	size_t n = strtoul(argv[2], NULL, 0), i, len = 0;
	struct own_arg args[64];
	char extra[64 * 12];
	pthread_t t;

	if (!r || n == 0 || n > 64)
		return;
	for (i = 0; i < n; i++) {
		args[i] = (struct own_arg){ r->base, strtoul(argv[3], NULL, 0),
					    strtoul(argv[4], NULL, 0), i, n, 0 };
		if (pthread_create(&t, NULL, own_main, &args[i]) || pthread_join(t, NULL)) {
			wl_fail("pthread_create");
			return;
		}
		len += snprintf(extra + len, sizeof(extra) - len, "%s%d", i ? " " : "", args[i].tid);
	}
	wl_done(extra);
}

struct cross_arg {
	struct region *r;
	size_t rounds;
	pthread_barrier_t *go, *done;
};

static void pin_to(int nth)
{
	cpu_set_t allowed, one;
	int cpu, seen = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed) || seen++ != nth)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
		return;
	}
}

static void *cross_main(void *p)
{
	struct cross_arg *a = p;

	pin_to(1);
	for (size_t round = 0; round < a->rounds; round++) {
		pthread_barrier_wait(a->go);
		touch(a->r->base, 0, a->r->pages, round % 5 + 2, true);
		pthread_barrier_wait(a->done);
	}
	return NULL;
}

static void cmd_crosscpu(char **argv)
{
	struct region *r = get(argv[1]);
	size_t rounds = strtoul(argv[2], NULL, 0);
	pthread_barrier_t go, done;
	struct cross_arg a = { r, rounds, &go, &done };
	cpu_set_t saved;
	bool ok = true;
	pthread_t t;

	if (!r)
		return;
	sched_getaffinity(0, sizeof(saved), &saved);
	pthread_barrier_init(&go, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	if (pthread_create(&t, NULL, cross_main, &a)) {
		wl_fail("pthread_create");
		return;
	}
	pin_to(0);
	for (size_t round = 0; round < rounds; round++) {
		if (mmap(r->base, r->pages * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			ok = false;
		pthread_barrier_wait(&go);
		pthread_barrier_wait(&done);
	}
	pthread_join(t, NULL);
	sched_setaffinity(0, sizeof(saved), &saved);
	pthread_barrier_destroy(&go);
	pthread_barrier_destroy(&done);
	if (ok)
		wl_done(NULL);
	else
		wl_fail("mmap");
}

/* The forkwait child's start signal: written by "release", read by the child. */
static int release_fd = -1, released_fd = -1;

static void cmd_fork(char **argv, bool wait_release)
{
	struct region *r = get(argv[1]);
	size_t start = strtoul(argv[2], NULL, 0), count = strtoul(argv[3], NULL, 0);
	int pfd[2], go[2] = { -1, -1 };
	pid_t pid;
	char c, extra[32];

	if (!r || pipe(pfd) || (wait_release && pipe(go)))
		return;
	pid = fork();
	if (pid < 0) {
		wl_fail("fork");
		return;
	}
	if (pid == 0) {
		close(pfd[0]);
		if (wait_release) {
			/* Born idle: touches nothing until the test says so, then writes and
			 * sleeps -- the pages must show up though no event of its own follows. */
			close(go[1]);
			if (write(pfd[1], "x", 1) != 1 || read(go[0], &c, 1) != 1)
				_exit(1);
		}
		touch(r->base, start, count, 1, true);	/* copy-on-write */
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	if (wait_release)
		close(go[0]);
	if (read(pfd[0], &c, 1) != 1) {
		wl_fail("child");
		return;
	}
	if (wait_release) {
		release_fd = go[1];
		released_fd = pfd[0];
	} else {
		close(pfd[0]);
	}
	snprintf(extra, sizeof(extra), "%d", pid);
	wl_done(extra);
}

static void cmd_release(void)
{
	char c;

	if (release_fd < 0 || write(release_fd, "x", 1) != 1 || read(released_fd, &c, 1) != 1) {
		wl_fail("release");
		return;
	}
	close(release_fd);
	close(released_fd);
	release_fd = released_fd = -1;
	wl_done(NULL);
}

static void cmd_readfile(char **argv)
{
	struct region *r = get(argv[1]);
	size_t start = strtoul(argv[2], NULL, 0), count = strtoul(argv[3], NULL, 0);
	int fd = open(argv[4], O_RDONLY);
	ssize_t n;

	if (!r || fd < 0) {
		wl_fail("open");
		return;
	}
	n = read(fd, r->base + start * PAGE, count * PAGE);
	close(fd);
	if (n != (ssize_t)(count * PAGE)) {
		wl_fail("read");
		return;
	}
	wl_done(NULL);
}

static void dispatch(char **argv, int argc)
{
	struct region *r;
	size_t start, count;

	if (!strcmp(argv[0], "map") && argc >= 3) {
		cmd_map(argv, argc);
	} else if (!strcmp(argv[0], "touch") && argc >= 6) {
		if (!(r = get(argv[1])))
			return;
		touch(r->base, strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0),
		      strtoul(argv[4], NULL, 0) ?: 1, argv[5][0] == 'w');
		wl_done(NULL);
	} else if (!strcmp(argv[0], "unmap") && argc >= 4) {
		if (!(r = get(argv[1])))
			return;
		start = strtoul(argv[2], NULL, 0);
		count = strtoul(argv[3], NULL, 0);
		if (munmap(r->base + start * PAGE, count * PAGE))
			wl_fail("munmap");
		else
			wl_done(NULL);
	} else if (!strcmp(argv[0], "advise") && argc >= 5) {
		int adv = advice_of(argv[4]);

		if (!(r = get(argv[1])))
			return;
		start = strtoul(argv[2], NULL, 0);
		count = strtoul(argv[3], NULL, 0);
		if (adv < 0 || madvise(r->base + start * PAGE, count * PAGE, adv))
			wl_fail("madvise");
		else
			wl_done(NULL);
	} else if (!strcmp(argv[0], "remap") && argc >= 4) {
		size_t np = strtoul(argv[2], NULL, 0);
		char *nb;

		if (!(r = get(argv[1])))
			return;
		if (!strcmp(argv[3], "move")) {
			/* Force a move: reserve a fresh destination and MREMAP_FIXED into it. */
			char *dst = mmap(NULL, np * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
					 -1, 0);

			if (dst == MAP_FAILED) {
				wl_fail("mmap");
				return;
			}
			nb = mremap(r->base, r->pages * PAGE, np * PAGE,
				    MREMAP_MAYMOVE | MREMAP_FIXED, dst);
		} else {
			nb = mremap(r->base, r->pages * PAGE, np * PAGE, MREMAP_MAYMOVE);
		}
		if (nb == MAP_FAILED) {
			wl_fail("mremap");
			return;
		}
		r->base = nb;
		r->pages = np;
		char extra[64];

		snprintf(extra, sizeof(extra), "%p", nb);
		wl_done(extra);
	} else if (!strcmp(argv[0], "protect") && argc >= 5) {
		int prot = !strcmp(argv[4], "rw") ? PROT_READ | PROT_WRITE :
			   !strcmp(argv[4], "r") ? PROT_READ : PROT_NONE;

		if (!(r = get(argv[1])))
			return;
		start = strtoul(argv[2], NULL, 0);
		count = strtoul(argv[3], NULL, 0);
		if (mprotect(r->base + start * PAGE, count * PAGE, prot))
			wl_fail("mprotect");
		else
			wl_done(NULL);
	} else if (!strcmp(argv[0], "protectloop") && argc >= 3) {
		uint64_t until, flips = 0;
		char extra[32];

		if (!(r = get(argv[1])))
			return;
		until = wl_now_ns() + strtoull(argv[2], NULL, 0) * 1000000ULL;
		while (wl_now_ns() < until) {
			if (mprotect(r->base, PAGE, flips & 1 ? PROT_READ | PROT_WRITE : PROT_READ)) {
				wl_fail("mprotect");
				return;
			}
			flips++;
		}
		if (flips & 1 && mprotect(r->base, PAGE, PROT_READ | PROT_WRITE)) {
			wl_fail("mprotect");
			return;
		}
		snprintf(extra, sizeof(extra), "%" PRIu64, flips);
		wl_done(extra);
	} else if (!strcmp(argv[0], "mlock") && argc >= 4) {
		if (!(r = get(argv[1])))
			return;
		start = strtoul(argv[2], NULL, 0);
		count = strtoul(argv[3], NULL, 0);
		if (mlock(r->base + start * PAGE, count * PAGE))
			wl_fail("mlock");
		else
			wl_done(NULL);
	} else if (!strcmp(argv[0], "brk") && argc >= 2) {
		long delta = strtol(argv[1], NULL, 0);

		if (sbrk(delta * (long)PAGE) == (void *)-1)
			wl_fail("sbrk");
		else
			wl_done(NULL);
	} else if (!strcmp(argv[0], "brktouch") && argc >= 2) {
		char *top = sbrk(0);

		count = strtoul(argv[1], NULL, 0);
		touch(top - count * PAGE, 0, count, 1, true);
		wl_done(NULL);
	} else if (!strcmp(argv[0], "threads") && argc >= 5) {
		cmd_threads(argv);
	} else if (!strcmp(argv[0], "ownthreads") && argc >= 5) {
		cmd_ownthreads(argv);
	} else if (!strcmp(argv[0], "readfile") && argc >= 5) {
		cmd_readfile(argv);
	} else if (!strcmp(argv[0], "fork") && argc >= 4) {
		cmd_fork(argv, false);
	} else if (!strcmp(argv[0], "random") && argc >= 4) {
		cmd_random(argv);
	} else if (!strcmp(argv[0], "crosscpu") && argc >= 3) {
		cmd_crosscpu(argv);
	} else if (!strcmp(argv[0], "forkwait") && argc >= 4) {
		cmd_fork(argv, true);
	} else if (!strcmp(argv[0], "release")) {
		cmd_release();
	} else if (!strcmp(argv[0], "exec")) {
		char *args[] = { self_path, NULL };

		fflush(stdout);
		execv(self_path, args);
		wl_fail("exec");
	} else if (!strcmp(argv[0], "exit")) {
		fflush(stdout);
		exit(0);
	} else {
		printf("error unknown command %s\n", argv[0]);
		fflush(stdout);
	}
}

/* Reads and runs commands until stdin ends.  arg non-NULL: a thread taking over from the
 * main thread ("leaderexit"), which says so with its tid first. */
static void *serve(void *arg)
{
	char line[1024], *args[16], *save, *tok;
	int n;

	if (arg) {
		char extra[32];

		snprintf(extra, sizeof(extra), "%ld", (long)syscall(SYS_gettid));
		wl_done(extra);
	}
	while (fgets(line, sizeof(line), stdin)) {
		n = 0;
		for (tok = strtok_r(line, " \t\n", &save); tok && n < 15;
		     tok = strtok_r(NULL, " \t\n", &save))
			args[n++] = tok;
		if (!n)
			continue;
		args[n] = NULL;
		if (!strcmp(args[0], "leaderexit")) {
			pthread_t t;

			/* The main thread leaves, the process lives on in another thread: a
			 * zombie leader with a live process behind it. */
			if (pthread_create(&t, NULL, serve, "") == 0)
				pthread_exit(NULL);
			wl_fail("pthread_create");
			continue;
		}
		dispatch(args, n);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	self_path = realpath("/proc/self/exe", NULL);
	(void)argc;
	(void)argv;
	/* Keep malloc out of the way: no arenas or mmap'd chunks appearing mid-test. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", getpid());
	fflush(stdout);
	serve(NULL);
	return 0;
}
