// SPDX-License-Identifier: GPL-2.0
/*
 * pass_cost [ROUNDS] - what one refresh's counter reading costs, measured in this one
 * process so other load on the machine shows only as noise, not as the figure: CPU time
 * (CLOCK_THREAD_CPUTIME_ID) of one task-iterator pass (bpf/tasks.bpf.c, all processes) against
 * /proc/PID/stat + statm read for every process with memory (what --disable task_iter does
 * per refresh), interleaved, ROUNDS times each; medians.  Needs root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include "mevitop.skel.h"
#include "kernel/procfs.h"
#include "kernel/taskiter.h"

static double cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20, r;
	struct mevitop_bpf *s = mevitop_bpf__open();
	double *tp = calloc(rounds, sizeof(double)), *tf = calloc(rounds, sizeof(double));
	double *tl = calloc(rounds, sizeof(double));
	struct bpf_program *p;
	struct taskiter *ti;
	size_t nrecs = 0, nproc = 0;

	if (!s || !tp || !tf || !tl)
		return 1;
	bpf_object__for_each_program(p, s->obj)
		bpf_program__set_autoload(p, p == s->progs.dump_tasks);
	s->rodata->cfg_ncpus = libbpf_num_possible_cpus();
	if (mevitop_bpf__load(s) || taskiter_open(s->progs.dump_tasks, &ti)) {
		fprintf(stderr, "failed to load the task iterator (root?)\n");
		return 1;
	}
	for (r = 0; r < rounds; r++) {
		const struct task_rec *recs;
		struct proc_counters c;
		pid_t *pids;
		size_t n, i;
		double t0;

		t0 = cpu_us();
		if (taskiter_pass(ti, &recs, &nrecs))
			return 1;
		tp[r] = cpu_us() - t0;

		/* The fallback's refresh: a stat + statm read per process (the listing is
		 * not part of it: the engine keeps its table). */
		t0 = cpu_us();
		if (procfs_list_pids(&pids, &n))
			return 1;
		tl[r] = cpu_us() - t0;	/* the fallback lists /proc too (missed processes) */
		t0 = cpu_us();
		for (i = 0, nproc = 0; i < n; i++)
			nproc += procfs_read_counters(pids[i], &c) == 0 && c.vsize;
		tf[r] = cpu_us() - t0;
		free(pids);
	}
	qsort(tp, rounds, sizeof(double), cmp);
	qsort(tf, rounds, sizeof(double), cmp);
	qsort(tl, rounds, sizeof(double), cmp);
	printf("one refresh's counters, CPU time, median of %d interleaved rounds:\n", rounds);
	printf("  task iterator pass: %8.0f us for %zu processes (%.2f us each)\n",
	       tp[rounds / 2], nrecs, nrecs ? tp[rounds / 2] / nrecs : 0);
	printf("  /proc stat+statm:   %8.0f us for %zu processes (%.2f us each)\n",
	       tf[rounds / 2], nproc, nproc ? tf[rounds / 2] / nproc : 0);
	printf("  /proc listing:      %8.0f us (the fallback's search for missed processes)\n",
	       tl[rounds / 2]);
	printf("  ratio /proc : pass  %.1fx\n", tp[rounds / 2] > 0 ? tf[rounds / 2] / tp[rounds / 2] : 0);
	taskiter_close(ti);
	mevitop_bpf__destroy(s);
	return 0;
}
