// SPDX-License-Identifier: GPL-2.0
/*
 * What a PERF_COUNT_SW_PAGE_FAULTS event costs a page fault, state by state, in one process:
 * rounds of "map SIZE MiB, write every page, unmap" alternate between the states below in a
 * rotating order, so every state sees the same machine noise, and each state's median CPU
 * time per fault is printed against the "none" rounds (no such event open anywhere from
 * here).  Sample mode's --stacks is this event with a BPF program on it.
 *
 *   swevent_cost [SIZE_MB=64] [ROUNDS_PER_STATE=15]
 *
 * States (events opened per CPU, pid -1, unless "task"; each opened for its own rounds only):
 *   none             no event of ours
 *   disabled         opened, sampling, BPF attached, then PERF_EVENT_IOC_DISABLE
 *   counting         sample_period 0: counts only
 *   never            sample_period 2^62 with an empty BPF program: never overflows
 *   never-exclk      the same with exclude_kernel (faults come from user mode: no effect
 *                    on matching, checked here)
 *   never-task       the same opened on this task only (pid 0, cpu -1)
 *   sample-251       sample_period 251, the empty BPF program runs on each overflow
 *   freq-1000        frequency mode: ~1000 samples a second, the kernel adjusting the period
 *   duty-20/100      sample-251's events opened for 20 ms of every 100 ms by a thread and
 *                    closed between, as sample mode's --stack-duty does (user/kernel/
 *                    fault_sampler.c; mevitop's default cycle is 10 times slower, so this
 *                    pays 10 times its opens and closes)
 *   duty-200/1000    the same at mevitop's default cycle (a round must last a few seconds
 *                    for its share of open time to be the duty's: SIZE_MB 256 or more)
 * Run it pinned to one CPU (taskset -c 1); it prints one JSON object.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include "fault_loop.h"

#define MAX_CPUS 256

struct state {
	const char *name;
	int open;		/* 0: no event */
	uint64_t period;	/* 0: counting */
	int bpf, exclude_kernel, per_task, disabled, freq;
	int duty_on_ms, duty_every_ms;	/* >0: opened and closed by a thread on this cycle */
	int fds[MAX_CPUS], nfds;
	double ns[256];
	int n;
};

static int prog_fd = -1;

static int load_empty_prog(void)
{
	/* r0 = 0; exit */
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uintptr_t)"GPL";
	return syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
}

static int open_state(struct state *s, int ncpus)
{
	struct perf_event_attr a;
	int cpu;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.sample_period = s->period;	/* sample_freq when freq */
	a.freq = s->freq;
	a.exclude_kernel = s->exclude_kernel;
	a.disabled = 1;		/* enabled around its own rounds only */
	for (cpu = 0; cpu < (s->per_task ? 1 : ncpus); cpu++) {
		int fd = syscall(SYS_perf_event_open, &a, s->per_task ? 0 : -1,
				 s->per_task ? -1 : cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			if (errno == ENODEV || errno == ENXIO)
				continue;
			fprintf(stderr, "failed to open perf event (%s): %s\n", s->name,
				strerror(errno));
			return -1;
		}
		if (s->bpf && ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd)) {
			fprintf(stderr, "failed to attach BPF (%s): %s\n", s->name, strerror(errno));
			return -1;
		}
		s->fds[s->nfds++] = fd;
	}
	return 0;
}

static void close_state(struct state *s)
{
	while (s->nfds)
		close(s->fds[--s->nfds]);
}

static void enable(struct state *s)
{
	int i;

	if (s->disabled)
		return;		/* opened and attached, never enabled */
	for (i = 0; i < s->nfds; i++)
		ioctl(s->fds[i], PERF_EVENT_IOC_ENABLE, 0);
}

static volatile int duty_stop;
static int ncpus;

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *duty_cycle(void *arg)
{
	struct state *s = arg;

	while (!duty_stop) {
		if (open_state(s, ncpus))
			exit(1);
		enable(s);
		sleep_ms(s->duty_on_ms);
		close_state(s);
		sleep_ms(s->duty_every_ms - s->duty_on_ms);
	}
	return NULL;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static double one_round(size_t bytes)
{
	uint64_t t0 = cpu_ns();

	fault_loop(bytes);
	return (double)(cpu_ns() - t0) / (bytes / 4096);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	struct state st[] = {
		{ .name = "none" },
		{ .name = "disabled", .open = 1, .period = 251, .bpf = 1, .disabled = 1 },
		{ .name = "counting", .open = 1 },
		{ .name = "never", .open = 1, .period = 1ULL << 62, .bpf = 1 },
		{ .name = "never-exclk", .open = 1, .period = 1ULL << 62, .bpf = 1,
		  .exclude_kernel = 1 },
		{ .name = "never-task", .open = 1, .period = 1ULL << 62, .bpf = 1, .per_task = 1 },
		{ .name = "sample-251", .open = 1, .period = 251, .bpf = 1 },
		{ .name = "freq-1000", .open = 1, .period = 1000, .bpf = 1, .freq = 1 },
		{ .name = "duty-20/100", .period = 251, .bpf = 1, .duty_on_ms = 20,
		  .duty_every_ms = 100 },
		{ .name = "duty-200/1000", .period = 251, .bpf = 1, .duty_on_ms = 200,
		  .duty_every_ms = 1000 },
	};
	int nst = sizeof(st) / sizeof(st[0]), r, i, rounds;
	size_t bytes = (argc > 1 ? strtoul(argv[1], NULL, 0) : 64) << 20;
	double base;

	ncpus = sysconf(_SC_NPROCESSORS_CONF);
	rounds = argc > 2 ? atoi(argv[2]) : 15;
	if (!bytes || rounds < 1 || rounds > 256 || ncpus > MAX_CPUS)
		return 2;
	prog_fd = load_empty_prog();
	if (prog_fd < 0) {
		fprintf(stderr, "failed to load BPF program: %s\n", strerror(errno));
		return 1;
	}
	one_round(bytes);	/* warm up */
	for (r = 0; r < rounds; r++)
		for (i = 0; i < nst; i++) {
			struct state *s = &st[(i + r) % nst];

			/* Opened for its own round only: with none of ours open, the page-fault
			 * event's static key is off again (unless another tool holds one). */
			pthread_t cycler;

			if (s->open && open_state(s, ncpus))
				return 1;
			enable(s);
			duty_stop = 0;
			if (s->duty_every_ms && pthread_create(&cycler, NULL, duty_cycle, s))
				return 1;
			s->ns[s->n++] = one_round(bytes);
			duty_stop = 1;
			if (s->duty_every_ms)
				pthread_join(cycler, NULL);
			close_state(s);
		}
	base = median(st[0].ns, st[0].n);
	printf("{\"none_cpu_ns_per_fault\": %.1f", base);
	for (i = 1; i < nst; i++)
		printf(", \"%s\": %.4f", st[i].name, median(st[i].ns, st[i].n) / base);
	printf("}\n");
	return 0;
}
