// SPDX-License-Identifier: GPL-2.0
/*
 * uffd_bench - what does it cost a program when mevitop watches every first touch?
 *
 * Measures the per-page cost of writing every page of fresh anonymous memory (64 MiB
 * by default) under different ways of serving userfaultfd faults, interleaved (every
 * round runs every strategy, in a rotated order) and reports the median:
 *
 *   plain         no userfaultfd
 *   mevi          handler thread blocks in poll(), read()s one message, UFFDIO_ZEROPAGE;
 *                 the retried write then copies the zero page (measured: in the same
 *                 fault, not a second trap - see flt/pg)
 *   copy          same, but write faults get UFFDIO_COPY of a zero page: one fault
 *   copy-batch    copy, read()ing up to 64 messages per call
 *   copy-pinned   copy, handler and toucher pinned to the same CPU
 *   zero-pinned   mevi's way, pinned to the same CPU
 *   copy-busy     copy, handler spinning on a non-blocking read() on another CPU
 *   copy-pinned-read  copy-pinned with a blocking read() (no poll(): one wake-up less)
 *   copy-busy-nohalt  copy-busy plus a SCHED_IDLE spinner on the toucher's CPU, so that
 *                 vCPU never halts while the toucher sleeps in the fault (explains the
 *                 cost: waking a halted vCPU; burns two CPUs, not a real option)
 *   copy-nohalt   copy (blocking handler, not pinned) with SCHED_IDLE spinners on every CPU
 *   copy-hpin     copy with only the handler pinned (to CPU 0): what mevitop can do without
 *                 touching the target's affinity; does the scheduler co-locate them?
 *   wp-async      no per-fault round trip: UFFD_FEATURE_WP_ASYNC + WP_UNPOPULATED, the
 *                 kernel resolves faults itself; a scanner thread reads PAGEMAP_SCAN
 *                 (WRITTEN, and re-protects what it reported) every 10 ms
 *   wp-async-noscan  the same without the scanner (the kernel's share of the cost)
 *   scan-present  no userfaultfd at all: PAGEMAP_SCAN for PRESENT pages every 10 ms
 *
 * Measured on Linux 6.18 (kept out of the table on purpose):
 *  - UFFDIO_WRITEPROTECT of never-touched anonymous memory in a WP_ASYNC range makes each
 *    first write take two faults (column flt/pg), with or without WP_UNPOPULATED;
 *  - skipping that write-protect is not an option: PAGEMAP_SCAN then reports every
 *    never-touched page of the range as WRITTEN (they are "not write-protected"), and
 *    its WP_MATCHING marks them, so they still take two faults later.
 *
 * Build: gcc -O2 -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -o uffd_bench bench/uffd_bench.c -lpthread -lm
 * Usage: uffd_bench [-m MiB] [-r rounds] [-t touching_threads] [-x] [-s strategy,...]
 *   -x  touch in a separate process, as mevitop does (the handler's wake-ups then also
 *       switch address spaces); without it the toucher is a thread of the handler's process
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open		434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd		438
#endif

#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED	(1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC		(1 << 15)
#endif

/* PAGEMAP_SCAN (Linux 6.7), missing from Debian 12's headers */
#ifndef PAGEMAP_SCAN
struct page_region {
	uint64_t start;
	uint64_t end;
	uint64_t categories;
};

struct pm_scan_arg {
	uint64_t size;
	uint64_t flags;
	uint64_t start;
	uint64_t end;
	uint64_t walk_end;
	uint64_t vec;
	uint64_t vec_len;
	uint64_t max_pages;
	uint64_t category_inverted;
	uint64_t category_mask;
	uint64_t category_anyof_mask;
	uint64_t return_mask;
};

#define PAGEMAP_SCAN		_IOWR('f', 16, struct pm_scan_arg)
#define PM_SCAN_WP_MATCHING	(1 << 0)
#define PM_SCAN_CHECK_WPASYNC	(1 << 1)
#define PAGE_IS_WPALLOWED	(1 << 0)
#define PAGE_IS_WRITTEN		(1 << 1)
#define PAGE_IS_PRESENT		(1 << 3)
#endif

#define PG		4096ul
#define MAX_THREADS	8
#define MAX_ROUNDS	64

enum strat {
	S_PLAIN, S_MEVI, S_COPY, S_COPY_BATCH, S_COPY_PINNED, S_ZERO_PINNED, S_COPY_BUSY,
	S_WP_ASYNC, S_WP_NOSCAN, S_PINNED_READ, S_BUSY_NOHALT, S_COPY_NOHALT, S_COPY_HPIN,
	S_SCAN_PRESENT, S_NR,
};

static const char *const strat_name[S_NR] = {
	"plain", "mevi", "copy", "copy-batch", "copy-pinned", "zero-pinned", "copy-busy",
	"wp-async", "wp-async-noscan", "copy-pinned-read", "copy-busy-nohalt", "copy-nohalt",
	"copy-hpin", "scan-present",
};

static const char *const strat_desc[S_NR] = {
	"no userfaultfd",
	"poll+read 1 msg, ZEROPAGE, COW on the retry",
	"poll+read 1 msg, COPY zero page for writes",
	"poll+read up to 64 msgs, COPY",
	"COPY, handler+toucher on one CPU",
	"ZEROPAGE, handler+toucher on one CPU",
	"COPY, handler spins on another CPU",
	"WP_ASYNC, PAGEMAP_SCAN every 10 ms",
	"WP_ASYNC, no scanner",
	"COPY, one CPU, blocking read() without poll()",
	"copy-busy + SCHED_IDLE spinner on toucher CPU",
	"COPY, SCHED_IDLE spinners keep all CPUs awake",
	"COPY, only the handler pinned (CPU 0)",
	"no uffd, PAGEMAP_SCAN PRESENT every 10 ms",
};

static size_t region_bytes = 64ul << 20;
static int nthreads = 1;
static int ncpus;
static bool cross;		/* -x: the toucher is another process, as with mevitop */
static uint64_t dup_reports;	/* PAGEMAP_SCAN reports of an already reported page */
static uint64_t last_faults;	/* page faults the touching thread(s) took in the last run */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "uffd_bench: failed to %s: %s\n", what, strerror(errno));
	exit(1);
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (cpu < 0) {
		for (int i = 0; i < ncpus; i++)
			CPU_SET(i, &set);
	} else {
		CPU_SET(cpu, &set);
	}
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		die("set CPU affinity");
}

/* ---- the fault handler ---- */

struct handler {
	int fd;
	int evfd;
	bool copy;		/* UFFDIO_COPY for write faults (else ZEROPAGE) */
	bool busy;		/* spin on read() instead of poll() */
	bool block;		/* blocking read() without poll() (fd made blocking) */
	int batch;		/* messages per read() */
	int cpu;		/* -1: not pinned */
	volatile int stop;
	volatile int ready;
	uint64_t served;
	void *zero;
};

static void *handler_main(void *arg)
{
	struct handler *h = arg;
	struct uffd_msg msg[64];

	if (h->cpu >= 0)
		pin_to(h->cpu);
	h->ready = 1;
	while (!h->stop) {
		ssize_t n;

		if (!h->busy && !h->block) {
			struct pollfd p[2] = {
				{ .fd = h->fd, .events = POLLIN },
				{ .fd = h->evfd, .events = POLLIN },
			};

			if (poll(p, 2, -1) < 0 && errno != EINTR)
				die("poll userfaultfd");
			if (h->stop)
				break;
		}
		n = read(h->fd, msg, (size_t)h->batch * sizeof(msg[0]));
		if (n < 0) {
			if (errno == EAGAIN) {
				if (h->busy)
					__asm__ __volatile__("pause");
				continue;
			}
			if (errno == EINTR && h->stop)
				break;
			die("read userfaultfd");
		}
		for (ssize_t i = 0; i < n / (ssize_t)sizeof(msg[0]); i++) {
			uint64_t addr = msg[i].arg.pagefault.address & ~(PG - 1);
			int r;

			if (msg[i].event != UFFD_EVENT_PAGEFAULT)
				continue;
			if (h->copy && (msg[i].arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WRITE)) {
				struct uffdio_copy c = {
					.dst = addr, .src = (uint64_t)(uintptr_t)h->zero, .len = PG,
				};

				r = ioctl(h->fd, UFFDIO_COPY, &c);
			} else {
				struct uffdio_zeropage z = { .range = { .start = addr, .len = PG } };

				r = ioctl(h->fd, UFFDIO_ZEROPAGE, &z);
			}
			if (r < 0 && errno == EEXIST) {
				struct uffdio_range w = { .start = addr, .len = PG };

				ioctl(h->fd, UFFDIO_WAKE, &w);
			} else if (r < 0) {
				die("resolve a fault");
			}
			h->served++;
		}
	}
	return NULL;
}

/* ---- SCHED_IDLE spinners: keep a vCPU from halting when it has nothing to do ---- */

struct idler {
	int cpu;
	volatile int *stop;
};

static void *idler_main(void *arg)
{
	struct idler *i = arg;
	struct sched_param sp = { 0 };

	pin_to(i->cpu);
	if (sched_setscheduler(0, SCHED_IDLE, &sp) < 0)
		die("make a SCHED_IDLE thread");
	while (!*i->stop)
		__asm__ __volatile__("pause");
	return NULL;
}

/* ---- the WP_ASYNC scanner ---- */

struct scanner {
	int pagemap;
	uint64_t start, end;
	volatile int stop;
	bool present;		/* scan for PRESENT pages (no uffd) instead of WRITTEN */
	uint64_t *seen;		/* bitmap of pages reported written */
	uint64_t distinct;	/* pages reported at least once */
	uint64_t reported;	/* reports, duplicates included */
	uint64_t scans;
	uint64_t scan_ns;
};

static uint64_t scan_once(struct scanner *sc)
{
	static struct page_region vec[512];
	uint64_t start = sc->start, pages = 0, t0 = now_ns();

	while (start < sc->end) {
		struct pm_scan_arg a = {
			.size = sizeof(a),
			.flags = sc->present ? 0 : PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
			.start = start,
			.end = sc->end,
			.vec = (uint64_t)(uintptr_t)vec,
			.vec_len = sizeof(vec) / sizeof(vec[0]),	/* never 0 */
			.category_mask = sc->present ? PAGE_IS_PRESENT : PAGE_IS_WRITTEN,
			.return_mask = sc->present ? PAGE_IS_PRESENT : PAGE_IS_WRITTEN,
		};
		long n = ioctl(sc->pagemap, PAGEMAP_SCAN, &a);

		if (n < 0)
			die("PAGEMAP_SCAN");
		for (long i = 0; i < n; i++) {
			for (uint64_t p = vec[i].start; p < vec[i].end; p += PG) {
				uint64_t idx = (p - sc->start) / PG, bit = 1ull << (idx % 64);

				if (!(sc->seen[idx / 64] & bit)) {
					sc->seen[idx / 64] |= bit;
					sc->distinct++;
					sc->reported++;
				} else if (!sc->present) {
					sc->reported++;	/* written again, or reported twice */
				}
				pages++;
			}
		}
		if (a.walk_end <= start)
			break;
		start = a.walk_end;
	}
	sc->scans++;
	sc->scan_ns += now_ns() - t0;
	return pages;
}

static void *scanner_main(void *arg)
{
	struct scanner *sc = arg;
	struct timespec ts = { .tv_nsec = 10 * 1000000L };

	while (!sc->stop) {
		nanosleep(&ts, NULL);
		scan_once(sc);
	}
	return NULL;
}

/* ---- touching ---- */

struct toucher {
	char *base;
	size_t len;
	int cpu;
	uint64_t ns;
	uint64_t faults;
};

static uint64_t thread_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
}

static void touch(char *p, size_t len)
{
	for (size_t off = 0; off < len; off += PG)
		((volatile char *)p)[off] = 1;
}

static void *toucher_main(void *arg)
{
	struct toucher *t = arg;
	uint64_t t0;

	if (t->cpu >= 0)
		pin_to(t->cpu);
	t->faults = thread_faults();
	t0 = now_ns();
	touch(t->base, t->len);
	t->ns = now_ns() - t0;
	t->faults = thread_faults() - t->faults;
	return NULL;
}

/* Touch the region with nthreads threads; returns wall time in ns. */
static uint64_t touch_all(char *base, int cpu)
{
	struct toucher t[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	size_t per = region_bytes / (size_t)nthreads / PG * PG;
	uint64_t t0;

	if (nthreads == 1) {
		if (cpu >= 0)
			pin_to(cpu);
		last_faults = thread_faults();
		t0 = now_ns();
		touch(base, region_bytes);
		t0 = now_ns() - t0;
		last_faults = thread_faults() - last_faults;
		if (cpu >= 0)
			pin_to(-1);
		return t0;
	}
	last_faults = 0;
	t0 = now_ns();
	for (int i = 0; i < nthreads; i++) {
		t[i] = (struct toucher){ .base = base + per * (size_t)i, .len = per, .cpu = cpu };
		pthread_create(&th[i], NULL, toucher_main, &t[i]);
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		last_faults += t[i].faults;
	}
	return now_ns() - t0;
}

static int make_uffd(uint64_t features)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	int fd = (int)syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		die("create userfaultfd (needs root or vm.unprivileged_userfaultfd=1)");
	if (ioctl(fd, UFFDIO_API, &api) < 0)
		die("enable userfaultfd API");
	return fd;
}

static void reg(int fd, char *base, uint64_t mode)
{
	struct uffdio_register r = {
		.range = { .start = (uint64_t)(uintptr_t)base, .len = region_bytes },
		.mode = mode,
	};

	if (ioctl(fd, UFFDIO_REGISTER, &r) < 0)
		die("register the region");
}

/* Map the region and set up userfaultfd as strategy @s needs (in the process that touches). */
static char *setup_region(enum strat s, int *fd, uint64_t *setup_ns)
{
	char *base;

	*fd = -1;
	*setup_ns = 0;
	base = mmap(NULL, region_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		die("map the region");
	madvise(base, region_bytes, MADV_NOHUGEPAGE);
	if (s == S_PLAIN)
		return base;
	if (s == S_SCAN_PRESENT)
		return base;
	if (s == S_WP_ASYNC || s == S_WP_NOSCAN) {
		struct uffdio_writeprotect wp = {
			.range = { .start = (uint64_t)(uintptr_t)base, .len = region_bytes },
			.mode = UFFDIO_WRITEPROTECT_MODE_WP,
		};
		uint64_t t0 = now_ns();

		*fd = make_uffd(UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED);
		reg(*fd, base, UFFDIO_REGISTER_MODE_WP);
		if (ioctl(*fd, UFFDIO_WRITEPROTECT, &wp) < 0)
			die("write-protect the region");
		*setup_ns = now_ns() - t0;
		return base;
	}
	*fd = make_uffd(0);
	reg(*fd, base, UFFDIO_REGISTER_MODE_MISSING);
	return base;
}

static int touch_cpu_of(enum strat s)
{
	switch (s) {
	case S_COPY_PINNED:
	case S_ZERO_PINNED:
	case S_PINNED_READ:
	case S_COPY_BUSY:
	case S_BUSY_NOHALT:
		return 0;
	default:
		return -1;
	}
}

struct child_hello {
	uint64_t base;
	uint64_t setup_ns;
	int fd;
};

/* The touching process of a cross-process run: mevitop's real setup (other mm). */
static void __attribute__((noreturn)) child_main(enum strat s, int to_parent, int from_parent)
{
	struct child_hello hi;
	uint64_t ns;
	char *base, c;

	base = setup_region(s, &hi.fd, &hi.setup_ns);
	hi.base = (uint64_t)(uintptr_t)base;
	if (write(to_parent, &hi, sizeof(hi)) != sizeof(hi) || read(from_parent, &c, 1) != 1)
		_exit(1);
	ns = touch_all(base, touch_cpu_of(s));
	if (write(to_parent, &ns, sizeof(ns)) != sizeof(ns) ||
	    write(to_parent, &last_faults, sizeof(last_faults)) != sizeof(last_faults))
		_exit(1);
	/* stay alive until the parent has done its final scan */
	if (read(from_parent, &c, 1) < 0)
		_exit(1);
	_exit(0);
}

/* One run of one strategy: ns per page of the touching. */
static double run(enum strat s, uint64_t *aux)
{
	struct handler h = { .fd = -1, .batch = 1, .cpu = -1 };
	struct scanner sc = { .pagemap = -1 };
	pthread_t hth, sth;
	bool scanner = s == S_WP_ASYNC || s == S_SCAN_PRESENT;
	bool wp = scanner || s == S_WP_NOSCAN, handler;
	int touch_cpu = touch_cpu_of(s), nidle = 0, up[2] = { -1, -1 }, down[2] = { -1, -1 };
	volatile int idle_stop = 0;
	struct idler idl[MAX_THREADS];
	pthread_t ith[MAX_THREADS];
	uint64_t ns, pages = region_bytes / PG;
	char pm_path[64] = "/proc/self/pagemap";
	pid_t child = 0;
	char *base;

	handler = s != S_PLAIN && !wp;
	sc.present = s == S_SCAN_PRESENT;
	if (cross) {
		struct child_hello hi;
		int pidfd;

		if (pipe(up) < 0 || pipe(down) < 0)
			die("create pipes");
		child = fork();
		if (child < 0)
			die("fork");
		if (child == 0)
			child_main(s, up[1], down[0]);
		if (read(up[0], &hi, sizeof(hi)) != sizeof(hi))
			die("hear from the touching process");
		base = (char *)(uintptr_t)hi.base;
		*aux = hi.setup_ns;
		if (hi.fd >= 0) {
			pidfd = (int)syscall(SYS_pidfd_open, child, 0);
			if (pidfd < 0)
				die("open a pidfd");
			h.fd = (int)syscall(SYS_pidfd_getfd, pidfd, hi.fd, 0);
			if (h.fd < 0)
				die("take the userfaultfd");
			close(pidfd);
		}
		snprintf(pm_path, sizeof(pm_path), "/proc/%d/pagemap", child);
	} else {
		base = setup_region(s, &h.fd, aux);
	}

	if (handler) {
		h.copy = s != S_MEVI && s != S_ZERO_PINNED;
		h.batch = s == S_COPY_BATCH ? 64 : 1;
		h.busy = s == S_COPY_BUSY || s == S_BUSY_NOHALT;
		h.block = s == S_PINNED_READ;
		if (s == S_COPY_PINNED || s == S_ZERO_PINNED || s == S_PINNED_READ || s == S_COPY_HPIN)
			h.cpu = 0;
		if (h.busy)
			h.cpu = 1;
		if (h.block && fcntl(h.fd, F_SETFL, 0) < 0)
			die("make the userfaultfd blocking");
		if (s == S_BUSY_NOHALT)
			nidle = 1;
		if (s == S_COPY_NOHALT)
			nidle = ncpus;
		h.evfd = eventfd(0, EFD_CLOEXEC);
		h.zero = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (h.evfd < 0 || h.zero == MAP_FAILED)
			die("set up the handler");
		pthread_create(&hth, NULL, handler_main, &h);
		while (!h.ready)
			sched_yield();
	}
	if (wp) {
		sc.pagemap = open(pm_path, O_RDONLY | O_CLOEXEC);
		if (sc.pagemap < 0)
			die("open pagemap");
		sc.start = (uint64_t)(uintptr_t)base;
		sc.end = sc.start + region_bytes;
		sc.seen = calloc(pages / 64 + 1, sizeof(uint64_t));
		if (!sc.seen)
			die("allocate a bitmap");
	}
	if (scanner)
		pthread_create(&sth, NULL, scanner_main, &sc);
	for (int i = 0; i < nidle && i < MAX_THREADS; i++) {
		idl[i] = (struct idler){ .cpu = i, .stop = &idle_stop };
		pthread_create(&ith[i], NULL, idler_main, &idl[i]);
	}

	if (cross) {
		if (write(down[1], "g", 1) != 1 || read(up[0], &ns, sizeof(ns)) != sizeof(ns) ||
		    read(up[0], &last_faults, sizeof(last_faults)) != sizeof(last_faults))
			die("run the touching process");
	} else {
		ns = touch_all(base, touch_cpu);
	}

	idle_stop = 1;
	for (int i = 0; i < nidle && i < MAX_THREADS; i++)
		pthread_join(ith[i], NULL);
	if (handler) {
		uint64_t one = 1;

		h.stop = 1;
		if (write(h.evfd, &one, sizeof(one)) < 0)
			die("stop the handler");
		if (h.block)
			pthread_kill(hth, SIGUSR1);	/* interrupt the blocking read() */
		pthread_join(hth, NULL);
		if (h.served < pages)
			fprintf(stderr, "uffd_bench: %s served %llu of %llu faults\n", strat_name[s],
				(unsigned long long)h.served, (unsigned long long)pages);
		close(h.evfd);
		munmap(h.zero, PG);
	}
	if (scanner) {
		sc.stop = 1;
		pthread_join(sth, NULL);
	}
	if (wp) {
		/* a final scan, then every page must have been reported (as a set) */
		scan_once(&sc);
		if (sc.distinct != pages)
			fprintf(stderr, "uffd_bench: %s saw %llu distinct written pages, expected %llu\n",
				strat_name[s], (unsigned long long)sc.distinct,
				(unsigned long long)pages);
		dup_reports += sc.reported - sc.distinct;
		close(sc.pagemap);
		free(sc.seen);
	}
	if (h.fd >= 0)
		close(h.fd);
	if (cross) {
		int st;

		if (write(down[1], "q", 1) != 1)
			die("stop the touching process");
		waitpid(child, &st, 0);
		for (int i = 0; i < 2; i++) {
			close(up[i]);
			close(down[i]);
		}
	} else {
		munmap(base, region_bytes);
	}
	return (double)ns / (double)pages;
}

static void on_usr1(int sig)
{
	(void)sig;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	double tmp[MAX_ROUNDS];

	memcpy(tmp, v, sizeof(double) * (size_t)n);
	qsort(tmp, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	static double res[S_NR][MAX_ROUNDS], flt[S_NR][MAX_ROUNDS];
	bool enabled[S_NR];
	uint64_t setup_ns = 0, setup_n = 0;
	int rounds = 5, opt;
	double plain;

	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	for (int s = 0; s < S_NR; s++)
		enabled[s] = true;
	while ((opt = getopt(argc, argv, "m:r:t:s:xh")) != -1) {
		switch (opt) {
		case 'm':
			region_bytes = strtoul(optarg, NULL, 10) << 20;
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'x':
			cross = true;
			break;
		case 's':
			for (int s = 0; s < S_NR; s++)
				enabled[s] = s == S_PLAIN || strstr(optarg, strat_name[s]);
			break;
		default:
			fprintf(stderr, "usage: %s [-m MiB] [-r rounds] [-t threads] [-x] [-s a,b,...]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || nthreads < 1 || nthreads > MAX_THREADS ||
	    region_bytes < PG * (size_t)nthreads) {
		fprintf(stderr, "uffd_bench: bad arguments\n");
		return 2;
	}
	if (ncpus < 2) {
		/* a spinning handler would starve the toucher */
		enabled[S_COPY_BUSY] = enabled[S_BUSY_NOHALT] = false;
	}
	{
		/* SIGUSR1 interrupts a handler blocked in read() (no SA_RESTART) */
		struct sigaction sa = { .sa_handler = on_usr1 };

		sigaction(SIGUSR1, &sa, NULL);
	}

	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < S_NR; k++) {
			int s = (k + r) % S_NR;	/* rotate the order every round */
			uint64_t aux;

			if (!enabled[s])
				continue;
			res[s][r] = run((enum strat)s, &aux);
			flt[s][r] = (double)last_faults / (double)(region_bytes / PG);
			if (s == S_WP_ASYNC || s == S_WP_NOSCAN) {	/* WP_UNPOPULATED ones */
				setup_ns += aux;
				setup_n++;
			}
		}
	}

	printf("uffd_bench: %zu MiB, %d touching thread(s) in %s, %d CPUs, %d interleaved rounds, "
	       "median\n", region_bytes >> 20, nthreads,
	       cross ? "another process (-x)" : "the handler's process", ncpus, rounds);
	printf("%-16s %10s %8s %7s  %s\n", "strategy", "us/page", "x plain", "flt/pg", "how");
	plain = median(res[S_PLAIN], rounds);
	for (int s = 0; s < S_NR; s++) {
		double m;

		if (!enabled[s])
			continue;
		m = median(res[s], rounds);
		printf("%-16s %10.2f %8.2f %7.2f  %s\n", strat_name[s], m / 1000.0, m / plain,
		       median(flt[s], rounds), strat_desc[s]);
	}
	if (dup_reports)
		printf("PAGEMAP_SCAN reported %llu page(s) more than once (a set, not exactly-once)\n",
		       (unsigned long long)dup_reports);
	if (setup_n)
		printf("wp-async setup (register + write-protect with WP_UNPOPULATED): %.2f us/page\n",
		       (double)setup_ns / (double)setup_n / (double)(region_bytes / PG) / 1000.0);
	return 0;
}
