// SPDX-License-Identifier: GPL-2.0
/*
 * The sharing tests' workload (tests/integration/test_sharing.py): a process and a forked
 * child that share pages in each way mevitop's USS and PSS must count.  Prints "ready PID",
 * then answers each command on stdin with "done MONO_NS [extra]" once it is complete (the
 * child's part included), or "error ...".  Pages are 4 KiB; counts are in pages.
 *
 *   anon NAME PAGES         private anonymous, every page written; done says the address
 *   file NAME PATH PAGES    MAP_SHARED of PATH (made PAGES long), every page written
 *   ro NAME PATH PAGES      MAP_PRIVATE, read-only, of an existing PATH's first PAGES pages,
 *                           every page read (mevitop's own binary: pages it maps too)
 *   shm NAME PAGES          a SysV shm segment (removed at once: gone when both detach)
 *   thp NAME PAGES          2 MiB aligned, MADV_HUGEPAGE, written (PAGES a multiple of 512)
 *   ksm NAME PAGES          MADV_MERGEABLE, every page the same bytes (KSM may merge them)
 *   fork                    a child sharing everything; done says its pid
 *   cwrite NAME FROM N      the child writes pages [FROM, FROM+N) of NAME (copy-on-write)
 *   ctouch NAME             the child reads every page of NAME (maps shared pages)
 *   cmremap NAME DST        the child moves NAME onto DST's address (mremap, FIXED): its
 *                           pages, still the parent's too, at another address than his
 *   pwrite NAME FROM N      the parent writes them
 *   exit                    both exit
 */
#include <fcntl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>
#include "workload.h"

#define PAGE 4096UL
#define HUGE (2UL << 20)
#define MAX_REGIONS 32

struct region {
	char name[32];
	char *addr;
	long pages;
};

static struct region regions[MAX_REGIONS];
static int nregions;
static int to_child = -1, from_child = -1;
static pid_t child;

static struct region *find(const char *name)
{
	for (int i = 0; i < nregions; i++)
		if (!strcmp(regions[i].name, name))
			return &regions[i];
	return NULL;
}

static void write_pages(char *a, long from, long n, int val)
{
	for (long i = from; i < from + n; i++)
		a[i * PAGE] = (char)(val + i);
}

static long touch_pages(const char *a, long n)
{
	volatile long sum = 0;

	for (long i = 0; i < n; i++)
		sum += a[i * PAGE];
	return sum;
}

static char *map_thp(long pages)
{
	size_t len = pages * PAGE;
	char *raw = mmap(NULL, len + HUGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a;

	if (raw == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
	if (madvise(a, len, MADV_HUGEPAGE))
		return NULL;
	return a;
}

/* Maps a region for the parent; the child inherits it at fork. */
static char *map_region(const char *kind, const char *path, long pages)
{
	size_t len = pages * PAGE;
	char *a = MAP_FAILED;

	if (!strcmp(kind, "anon") || !strcmp(kind, "ksm")) {
		a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a != MAP_FAILED && !strcmp(kind, "ksm")) {
			if (madvise(a, len, MADV_MERGEABLE))
				return NULL;
			for (size_t i = 0; i < len; i += PAGE)
				memset(a + i, 0x5a, PAGE);	/* identical: mergeable */
			return a;
		}
	} else if (!strcmp(kind, "file")) {
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || ftruncate(fd, len))
			return NULL;
		a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
	} else if (!strcmp(kind, "ro")) {
		int fd = open(path, O_RDONLY);

		if (fd < 0)
			return NULL;
		a = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
	} else if (!strcmp(kind, "shm")) {
		int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);

		if (id < 0)
			return NULL;
		a = shmat(id, NULL, 0);
		shmctl(id, IPC_RMID, NULL);	/* destroyed once both have detached */
		if (a == (void *)-1)
			return NULL;
	} else if (!strcmp(kind, "thp")) {
		return map_thp(pages);
	}
	return a == MAP_FAILED ? NULL : a;
}

/* The child: one command a line from the parent, "ok" after each. */
static void child_loop(int in, int out)
{
	char line[256], name[32], dst[32];
	FILE *f = fdopen(in, "r");
	long from, n;

	while (f && fgets(line, sizeof(line), f)) {
		struct region *r, *d;

		if (sscanf(line, "cwrite %31s %ld %ld", name, &from, &n) == 3 && (r = find(name)))
			write_pages(r->addr, from, n, 7);
		else if (sscanf(line, "ctouch %31s", name) == 1 && (r = find(name)))
			touch_pages(r->addr, r->pages);
		else if (sscanf(line, "cmremap %31s %31s", name, dst) == 2 && (r = find(name)) &&
			 (d = find(dst)) && r->pages <= d->pages &&
			 mremap(r->addr, r->pages * PAGE, r->pages * PAGE,
				MREMAP_MAYMOVE | MREMAP_FIXED, d->addr) == d->addr)
			r->addr = d->addr;
		else
			_exit(0);
		if (write(out, "ok\n", 3) != 3)
			_exit(1);
	}
	_exit(0);
}

static int do_fork(void)
{
	int down[2], up[2];

	if (pipe(down) || pipe(up))
		return -1;
	child = fork();
	if (child < 0)
		return -1;
	if (child == 0) {
		close(down[1]);
		close(up[0]);
		child_loop(down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	to_child = down[1];
	from_child = up[0];
	return 0;
}

static int tell_child(const char *line)
{
	char ack[4];

	if (to_child < 0 || write(to_child, line, strlen(line)) != (ssize_t)strlen(line))
		return -1;
	return read(from_child, ack, 3) == 3 ? 0 : -1;
}

static void command(char *line)
{
	char kind[16], name[32], path[200], extra[64];
	long pages, from, n;
	struct region *r;

	if (sscanf(line, "file %31s %199s %ld", name, path, &pages) == 3 ||
	    sscanf(line, "ro %31s %199s %ld", name, path, &pages) == 3 ||
	    (sscanf(line, "%15s %31s %ld", kind, name, &pages) == 3 &&
	     strcmp(kind, "cwrite") && strcmp(kind, "pwrite"))) {
		if (!strncmp(line, "file ", 5) || !strncmp(line, "ro ", 3))
			sscanf(line, "%15s", kind);
		if (nregions == MAX_REGIONS || !(r = &regions[nregions])) {
			errno = ENOSPC;
			wl_fail("map");
			return;
		}
		snprintf(r->name, sizeof(r->name), "%s", name);
		r->pages = pages;
		r->addr = map_region(kind, path, pages);
		if (!r->addr) {
			wl_fail(kind);
			return;
		}
		if (!strcmp(kind, "ro"))
			touch_pages(r->addr, pages);
		else if (strcmp(kind, "ksm"))
			write_pages(r->addr, 0, pages, 1);
		nregions++;
		snprintf(extra, sizeof(extra), "0x%lx", (unsigned long)r->addr);
		wl_done(extra);
	} else if (!strcmp(line, "fork\n")) {
		if (do_fork()) {
			wl_fail("fork");
			return;
		}
		snprintf(extra, sizeof(extra), "%d", child);
		wl_done(extra);
	} else if (sscanf(line, "pwrite %31s %ld %ld", name, &from, &n) == 3 && (r = find(name))) {
		write_pages(r->addr, from, n, 3);
		wl_done(NULL);
	} else if (!strncmp(line, "cwrite ", 7) || !strncmp(line, "ctouch ", 7) ||
		   !strncmp(line, "cmremap ", 8)) {
		if (tell_child(line)) {
			wl_fail("child");
			return;
		}
		wl_done(NULL);
	} else {
		errno = EINVAL;
		wl_fail(line);
	}
}

int main(void)
{
	char line[256];

	printf("ready %d\n", getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "exit\n"))
			break;
		command(line);
	}
	if (child > 0) {
		close(to_child);	/* the child's loop ends */
		waitpid(child, NULL, 0);
	}
	return 0;
}
