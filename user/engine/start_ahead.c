// SPDX-License-Identifier: GPL-2.0
/*
 * The first snapshot's work that needs no process model, done on another CPU while the
 * initial scans read every process's layout (issue 24: the first complete snapshot with
 * 5,000 processes within 0.3 s).  Measured here at 5,084 processes, one after the other:
 * the scans take ~140 ms, then loading the page cache's BPF programs ~40 ms (most of it
 * the verifier) and reading every smaps_rollup for the anonymous memory summary ~70 ms
 * (~14 µs each; the kernel walks the page tables).  Neither needs the scans' results:
 * the BPF programs only need to be attached before the page cache walk (files.c), and
 * a rollup only the pid.  So a thread started as soon as the pids are listed does both,
 * and the first tick takes what it made.
 *
 * Only the whole-system start uses it (a few -p processes have nothing to hide), and only
 * once: what the thread read is the first snapshot's, later refreshes read their own.
 * Without a thread (pthread_create failed) everything happens as before, inline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/engine_int.h"
#include "engine/start_ahead.h"
#include "kernel/fcache_bpf.h"
#include "kernel/kbtf.h"

struct ahead_rollup {
	pid_t pid;
	int err;
	struct rollup r;
};

struct start_ahead {
	pthread_t th;
	bool joined;
	bool bpf_wanted;
	/* written by the thread, read after the join */
	struct fcbpf *bpf;
	int bpf_err;
	char bpf_why[256];
	struct ahead_rollup *v;		/* sorted by pid (the listing's order) */
	size_t n;
};

static void *run(void *arg)
{
	struct start_ahead *a = arg;

	/* The BPF programs first: the page cache walk waits for them, the rollups only
	 * for the end of the scans' whole. */
	if (a->bpf_wanted)
		a->bpf_err = fcache_bpf_open(true, &a->bpf, a->bpf_why, sizeof(a->bpf_why));
	/* That was the start's last BPF object (the main skeleton loaded before the pids
	 * were listed): the kernel's BTF parse (~5.5 MiB at 6.18) goes now, not after the
	 * scans, whose model would otherwise pile up on top of it (VmHWM). */
	kbtf_release();
	for (size_t i = 0; i < a->n; i++)
		a->v[i].err = rollup_read(a->v[i].pid, &a->v[i].r);
	return NULL;
}

static int by_pid(const void *x, const void *y)
{
	pid_t a = ((const struct ahead_rollup *)x)->pid, b = ((const struct ahead_rollup *)y)->pid;

	return (a > b) - (a < b);
}

void start_ahead_begin(struct engine *e, const pid_t *pids, size_t n)
{
	struct start_ahead *a = calloc(1, sizeof(*a));

	if (!a)
		return;
	a->bpf_wanted = e->files && e->f.fcache_walk && e->f.filemap_tp;
	a->v = calloc(n ? n : 1, sizeof(*a->v));
	if (!a->v) {
		free(a);
		return;
	}
	for (size_t i = 0; i < n; i++)
		a->v[i].pid = pids[i];
	a->n = n;
	qsort(a->v, a->n, sizeof(*a->v), by_pid);
	if (pthread_create(&a->th, NULL, run, a)) {
		free(a->v);
		free(a);
		return;
	}
	e->ahead = a;
}

/* Waits for the thread (once); NULL when there is none. */
static struct start_ahead *joined(struct engine *e)
{
	struct start_ahead *a = e->ahead;

	if (a && !a->joined) {
		pthread_join(a->th, NULL);	/* from here on the fields are this thread's */
		a->joined = true;
	}
	return a;
}

int start_ahead_fcache(struct engine *e, struct fcbpf **bpf, char *why, size_t whylen)
{
	struct start_ahead *a = joined(e);

	if (!a || !a->bpf_wanted)
		return fcache_bpf_open(true, bpf, why, whylen);
	*bpf = a->bpf;
	a->bpf = NULL;
	a->bpf_wanted = false;	/* taken */
	if (a->bpf_err)
		snprintf(why, whylen, "%s", a->bpf_why);
	return a->bpf_err;
}

int start_ahead_rollup(struct engine *e, pid_t pid, struct rollup *r, bool *ahead)
{
	struct start_ahead *a = joined(e);
	struct ahead_rollup key = { .pid = pid }, *x;

	*ahead = false;
	if (!a)
		return rollup_read(pid, r);
	x = bsearch(&key, a->v, a->n, sizeof(*a->v), by_pid);
	if (!x)
		return rollup_read(pid, r);
	*r = x->r;
	*ahead = true;
	return x->err;
}

void start_ahead_end(struct engine *e)
{
	struct start_ahead *a = joined(e);

	if (!a)
		return;
	if (a->bpf)
		fcache_bpf_close(a->bpf);
	free(a->v);
	free(a);
	e->ahead = NULL;
}
