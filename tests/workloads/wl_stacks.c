// SPDX-License-Identifier: GPL-2.0
/*
 * Distinct functions touching distinct memory, for --stacks (test_stacks.py).  Built twice:
 * wl_stacks (-O1: no frame pointers) and wl_stacks_fp (-fno-omit-frame-pointer).
 *
 * At start it maps one region per toucher, each 2 MiB and 2 MiB-aligned (one chunk each:
 * the unit --stacks attributes), and prints "ready PID".  Then, per line on stdin:
 *   touch a|b|c|lib PAGES [R]  the toucher writes the first PAGES pages of its region (or
 *                           of region R: a|b|c|lib) through main -> run_cmd -> caller_X ->
 *                           touch_X; answers "done MONO_NS 0xREGION"
 *   newmap PAGES            region a becomes a new 2 MiB mapping, whose first PAGES pages
 *                           touch_a writes at once; answers "done MONO_NS 0xREGION"
 *   free R PAGES            MADV_DONTNEED on the first PAGES pages of region R (they are
 *                           touched anew by the next touch); answers "done MONO_NS 0xREGION"
 *   exit
 * argv[1], if given, is a shared library to dlopen for "lib" (its wl_lib_touch).
 * With argv[2] == "touch-exit" it touches region a at once and exits (no stdin); with
 * "touch-first" it touches 64 pages of region a at once (one a millisecond), then says
 * ready and goes on.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>
#include "workload.h"

#define PAGE 4096UL
#define CHUNK (2UL << 20)

enum { R_A, R_B, R_C, R_LIB, R_COUNT };
static char *region[R_COUNT];
static const char *const region_name[R_COUNT] = { "a", "b", "c", "lib" };
static void (*lib_touch)(char *base, size_t pages);

/* noinline + a side effect after each call: every function keeps its own frame and its call
 * is not a tail call, so the expected caller chain is the source's. */
#define TOUCHER __attribute__((noinline, noclone))

TOUCHER void touch_a(char *base, size_t pages)
{
	for (size_t i = 0; i < pages; i++)
		((volatile char *)base)[i * PAGE] = 'a';
}

TOUCHER void touch_b(char *base, size_t pages)
{
	for (size_t i = 0; i < pages; i++)
		((volatile char *)base)[i * PAGE + 1] = 'b';
}

TOUCHER void touch_c(char *base, size_t pages)
{
	for (size_t i = 0; i < pages; i++)
		((volatile char *)base)[i * PAGE + 2] = 'c';
}

static volatile int sink;

TOUCHER void caller_a(char *base, size_t pages) { touch_a(base, pages); sink++; }
TOUCHER void caller_b(char *base, size_t pages) { touch_b(base, pages); sink += 2; }
TOUCHER void caller_c(char *base, size_t pages) { touch_c(base, pages); sink += 3; }
TOUCHER void caller_lib(char *base, size_t pages) { lib_touch(base, pages); sink += 4; }

static int region_of(const char *name)
{
	int r;

	for (r = 0; r < R_COUNT; r++)
		if (!strcmp(name, region_name[r]))
			return r;
	return -1;
}

static char *map_chunk(void)
{
	char *p = mmap(NULL, 2 * CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	char *aligned;

	if (p == MAP_FAILED)
		wl_die("mmap");
	aligned = (char *)(((uintptr_t)p + CHUNK - 1) & ~(CHUNK - 1));
	/* One 4 KiB page per fault, so the pages resident are the pages touched. */
	if (madvise(aligned, CHUNK, MADV_NOHUGEPAGE))
		wl_die("madvise");
	return aligned;
}

TOUCHER int run_cmd(const char *line)
{
	char which[16], where[16] = "";
	size_t pages;
	int r, n;

	if (sscanf(line, "newmap %zu", &pages) == 1 && pages <= CHUNK / PAGE) {
		/* Region a moves to a new mapping, touched at once. */
		region[R_A] = map_chunk();
		caller_a(region[R_A], pages);
		return R_A;
	}
	if (sscanf(line, "free %15s %zu", where, &pages) == 2) {
		r = region_of(where);
		if (r < 0 || pages > CHUNK / PAGE || madvise(region[r], pages * PAGE, MADV_DONTNEED))
			return -1;
		return r;
	}
	n = sscanf(line, "touch %15s %zu %15s", which, &pages, where);
	if (n < 2 || pages > CHUNK / PAGE)
		return -1;
	r = region_of(n == 3 ? where : which);
	if (r < 0)
		return -1;
	if (!strcmp(which, "a"))
		caller_a(region[r], pages);
	else if (!strcmp(which, "b"))
		caller_b(region[r], pages);
	else if (!strcmp(which, "c"))
		caller_c(region[r], pages);
	else if (!strcmp(which, "lib") && lib_touch)
		caller_lib(region[r], pages);
	else
		return -1;
	sink++;
	return r;
}

int main(int argc, char **argv)
{
	char line[256], extra[32];
	int r;

	for (r = 0; r < R_COUNT; r++)
		region[r] = map_chunk();
	if (argc > 1 && argv[1][0]) {
		void *h = dlopen(argv[1], RTLD_NOW);

		if (!h || !(lib_touch = (void (*)(char *, size_t))dlsym(h, "wl_lib_touch"))) {
			fprintf(stderr, "workload: %s\n", dlerror());
			return 3;
		}
	}
	if (argc > 2 && !strcmp(argv[2], "touch-exit")) {
		caller_a(region[R_A], 64);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[2], "touch-first")) {
		/* One page a millisecond: a process started moments ago, faulting while a
		 * monitor that watches it by name has not read its layout yet. */
		for (r = 0; r < 64; r++) {
			caller_a(region[R_A] + r * PAGE, 1);
			usleep(1000);
		}
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "exit", 4))
			break;
		r = run_cmd(line);
		if (r < 0) {
			errno = EINVAL;
			wl_fail("command");
			continue;
		}
		snprintf(extra, sizeof(extra), "0x%lx", (unsigned long)region[r]);
		wl_done(extra);
	}
	return 0;
}
