// SPDX-License-Identifier: GPL-2.0
/*
 * The UI's drawing-cost workload: many mappings, many pages, a known resident pattern, and
 * optionally a steady stream of faults so the picture is live.
 *
 *   ui_big [--maps N] [--pages TOTAL] [--churn FAULTS_PER_SEC]
 *
 * Defaults: 1000 mappings totalling 1048576 pages (4 GiB), at fixed addresses from
 * 0x100000000000, 16 unmapped pages between neighbours (so none merge).  In mapping i the
 * first (i % 10 + 1) tenths of the pages are written with a stride of i % 3 + 1 pages: a
 * contiguous prefix, every 2nd page, or every 3rd page.  Prints "ready PID" once all of it
 * is resident, then churns if asked (MADV_DONTNEED of 64-page chunks of the written part,
 * then its pattern pages written again, walking the mappings: the pattern stays, the
 * faults flow) until stdin closes or says "exit".
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>
#include "workload.h"

#define PAGE 4096UL
#define BASE 0x100000000000UL
#define GAP 16UL

static unsigned long nmaps = 1000, total = 1UL << 20, churn;
static unsigned long per_map;
static atomic_bool stop;

static char *map_addr(unsigned long i)
{
	return (char *)(BASE + i * (per_map + GAP) * PAGE);
}

static void fill(unsigned long i)
{
	unsigned long stride = i % 3 + 1, upto = per_map * (i % 10 + 1) / 10, j;
	volatile char *p = map_addr(i);

	for (j = 0; j < upto; j += stride)
		p[j * PAGE] = 1;
}

/* Drops 64-page chunks of the written part of each mapping and writes their pattern
 * pages again: faults at a steady rate, the resident pattern unchanged between chunks. */
static void *churn_main(void *arg)
{
	unsigned long i = 0, chunk = 64, off = 0, faults;
	uint64_t next = wl_now_ns();

	(void)arg;
	while (!atomic_load(&stop)) {
		unsigned long stride = i % 3 + 1, upto = per_map * (i % 10 + 1) / 10, j;
		char *p = map_addr(i);
		uint64_t now;

		if (off + chunk > upto) {
			off = 0;
			i = (i + 1) % nmaps;
			continue;
		}
		madvise(p + off * PAGE, chunk * PAGE, MADV_DONTNEED);
		faults = 0;
		for (j = off; j < off + chunk; j++) {
			if (j % stride == 0) {
				((volatile char *)p)[j * PAGE] = 2;
				faults++;
			}
		}
		off += chunk;
		next += 1000000000ULL * faults / churn;
		now = wl_now_ns();
		if (next > now) {
			struct timespec ts = { (next - now) / 1000000000ULL,
					       (next - now) % 1000000000ULL };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tid;
	char line[64];
	unsigned long i;
	int a;

	for (a = 1; a + 1 < argc; a += 2) {
		if (!strcmp(argv[a], "--maps"))
			nmaps = strtoul(argv[a + 1], NULL, 0);
		else if (!strcmp(argv[a], "--pages"))
			total = strtoul(argv[a + 1], NULL, 0);
		else if (!strcmp(argv[a], "--churn"))
			churn = strtoul(argv[a + 1], NULL, 0);
	}
	if (!nmaps || total < nmaps) {
		fprintf(stderr, "usage: ui_big [--maps N] [--pages TOTAL] [--churn FAULTS_PER_SEC]\n");
		return 2;
	}
	per_map = total / nmaps;
	for (i = 0; i < nmaps; i++) {
		void *p = mmap(map_addr(i), per_map * PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_NORESERVE,
			       -1, 0);

		if (p != map_addr(i))
			wl_die("mmap %lu", i);
		madvise(p, per_map * PAGE, MADV_NOHUGEPAGE);	/* keep the pattern exact */
		fill(i);
	}
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (churn && pthread_create(&tid, NULL, churn_main, NULL))
		wl_die("pthread_create");
	while (fgets(line, sizeof(line), stdin) && strncmp(line, "exit", 4))
		;
	atomic_store(&stop, true);
	if (churn)
		pthread_join(tid, NULL);
	return 0;
}
