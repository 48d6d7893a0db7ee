// SPDX-License-Identifier: GPL-2.0
/* The task iterator's reader (taskiter.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/array.h"
#include "kernel/taskiter.h"

struct taskiter {
	struct bpf_link *link;
	struct task_rec *recs;
	size_t cap;			/* records */
};

int taskiter_open(struct bpf_program *prog, struct taskiter **out)
{
	struct taskiter *ti = calloc(1, sizeof(*ti));
	int err;

	if (!ti)
		return -ENOMEM;
	ti->link = bpf_program__attach_iter(prog, NULL);
	if (!ti->link) {
		err = -errno;
		free(ti);
		return err;
	}
	*out = ti;
	return 0;
}

void taskiter_close(struct taskiter *ti)
{
	if (!ti)
		return;
	bpf_link__destroy(ti->link);
	free(ti->recs);
	free(ti);
}

/*
 * Each read() of an iterator fd returns what the seq_file buffer holds (at most a few pages
 * of records), and a record is never split: read until 0.  The buffer only grows, so a
 * steady system costs no allocation per pass.
 */
int taskiter_pass(struct taskiter *ti, const struct task_rec **recs, size_t *n)
{
	size_t bytes = 0;
	int fd, err = 0;
	ssize_t r;

	fd = bpf_iter_create(bpf_link__fd(ti->link));
	if (fd < 0)
		return fd < -1 ? fd : -errno;
	for (;;) {
		if (array_reserve_n(ti->recs, bytes / sizeof(*ti->recs) + 512, ti->cap, 1024)) {
			err = -ENOMEM;
			break;
		}
		r = read(fd, (char *)ti->recs + bytes, ti->cap * sizeof(*ti->recs) - bytes);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		bytes += r;
	}
	close(fd);
	if (err)
		return err;
	*recs = ti->recs;
	*n = bytes / sizeof(*ti->recs);
	return 0;
}

const struct task_rec *taskiter_find(const struct task_rec *recs, size_t n, pid_t tgid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (recs[mid].tgid == (__u32)tgid)
			return &recs[mid];
		if (recs[mid].tgid < (__u32)tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

char taskiter_state_char(uint32_t state)
{
	static const char letters[] = "RSDTtXZPI";
	int i;

	/* task_state_index(): the highest reported bit, 0 for running; TASK_IDLE (an
	 * uninterruptible sleep that does not count as load) reads as 'I'. */
	if ((state & (0x0002 | 0x0400)) == (0x0002 | 0x0400))
		return 'I';
	state &= 0x7f;
	for (i = 0; state; i++)
		state >>= 1;
	return i < (int)sizeof(letters) - 1 ? letters[i] : '?';
}

uint64_t taskiter_start_ticks(uint64_t start_ns)
{
	long hz = sysconf(_SC_CLK_TCK);

	/* nsec_to_clock_t(): a division by NSEC_PER_SEC / USER_HZ. */
	return start_ns / (1000000000ULL / (uint64_t)(hz > 0 ? hz : 100));
}

void taskiter_counters(const struct task_rec *r, struct proc_counters *c)
{
	memset(c, 0, sizeof(*c));
	c->ppid = r->ppid;
	c->minflt = r->minflt;
	c->majflt = r->majflt;
	c->vsize = r->total_vm * (uint64_t)sysconf(_SC_PAGESIZE);
	c->rss = r->rss;
	c->start_time = taskiter_start_ticks(r->start_ns);
	c->state = r->io_tid != r->tgid ? 'S' : taskiter_state_char(r->state);
	memcpy(c->comm, r->comm, sizeof(c->comm));
	c->comm[sizeof(c->comm) - 1] = 0;
}
