// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel behind struct engine_source (engine_int.h): /proc, pagemap, PROCMAP_QUERY
 * and the BPF target map.  Its ctx is the engine.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "engine/engine_int.h"
#include "engine/start_ahead.h"
#include "kernel/filter.h"
#include "lib/log.h"
#include "kernel/procmap.h"
#include "stacks/stacks.h"
#include "kernel/tracer.h"

static bool k_is_target(void *ctx, pid_t tgid)
{
	struct engine *e = ctx;

	return tracer_is_target(e->tracer, tgid);
}

static int k_add_target(void *ctx, pid_t tgid)
{
	struct engine *e = ctx;

	return tracer_add_target(e->tracer, tgid);
}

static void k_del_target(void *ctx, pid_t tgid)
{
	struct engine *e = ctx;

	tracer_del_target(e->tracer, tgid);
}

static bool k_passes(void *ctx, pid_t pid, const char *comm)
{
	struct engine *e = ctx;

	return filter_match(e->o.filter, pid, comm);
}

static void k_forget(void *ctx, pid_t pid)
{
	struct engine *e = ctx;

	stacks_forget(e->stacks, pid);
}

static void k_layout_known(void *ctx, struct proc *p)
{
	struct engine *e = ctx;

	stacks_on_layout(e->stacks, p);
}

static int k_read_tgid(void *ctx, pid_t tid, pid_t *tgid)
{
	return procfs_read_tgid(tid, tgid);
}

static int k_pidfd_target(void *ctx, pid_t pid, int fd, pid_t *target)
{
	return procfs_pidfd_target(pid, fd, target);
}

static const struct task_rec *pass_rec(struct engine *e, pid_t pid);

/* At start the pass names the thread to read through (io_tid): one /proc/PID/stat read
 * fewer per process. */
static int k_live_thread(void *ctx, pid_t pid, pid_t *tid)
{
	const struct task_rec *r = pass_rec(ctx, pid);

	if (r && r->io_tid) {
		*tid = (pid_t)r->io_tid;
		return 0;
	}
	return procfs_live_thread(pid, tid);
}

/* PROCMAP_QUERY (binary, one ioctl per mapping) where the kernel has it, else the text of
 * /proc/PID/maps.  A refusal of the ioctl switches to the text for good. */
static int k_read_layout(void *ctx, pid_t pid, maps_cb cb, void *arg)
{
	struct engine *e = ctx;
	int err;

	if (e->use_procmap) {
		/* The initial scans: the start's thread may have read it (start_ahead.c). */
		if (!e->pass_reads || !start_ahead_layout(e, pid, cb, arg, &err))
			err = procmap_read_layout(pid, e->use_maps_text, cb, arg);
		if (err != -ENOTTY && err != -EINVAL && err != -EOPNOTSUPP)
			return err;
		log_info("PROCMAP_QUERY refused (%s): reading /proc/PID/maps text", strerror(-err));
		e->use_procmap = false;
	}
	return procfs_read_maps(pid, cb, arg);
}

static int k_read_vmflags(void *ctx, pid_t pid, vmflags_cb cb, void *arg)
{
	return procfs_read_vmflags(pid, cb, arg);
}

/* The initial scans take what the pass taken just before them has (e->pass_reads): four
 * /proc reads fewer per process at start.  Later reads are of a process that changed, and
 * read /proc: the pass may be a refresh old. */
static const struct task_rec *pass_rec(struct engine *e, pid_t pid)
{
	return e->pass_reads ? pass_find(e, pid) : NULL;
}

static int k_read_start_brk(void *ctx, pid_t pid, uint64_t *start_brk)
{
	const struct task_rec *r = pass_rec(ctx, pid);

	if (r) {
		*start_brk = r->start_brk;
		return 0;
	}
	return procfs_read_start_brk(pid, start_brk);
}

static int k_read_comm(void *ctx, pid_t pid, char *comm, size_t len)
{
	const struct task_rec *r = pass_rec(ctx, pid);

	if (r && len) {
		snprintf(comm, len, "%.*s", (int)sizeof(r->comm), r->comm);
		return 0;
	}
	return procfs_read_comm(pid, comm, len);
}

static int k_read_uid(void *ctx, pid_t pid, uid_t *uid)
{
	const struct task_rec *r = pass_rec(ctx, pid);

	if (r) {
		*uid = r->uid;
		return 0;
	}
	return procfs_read_uid(pid, uid);
}

static int k_read_counters(void *ctx, pid_t pid, struct proc_counters *c)
{
	const struct task_rec *r = pass_rec(ctx, pid);

	if (r) {
		taskiter_counters(r, c);
		return 0;
	}
	return procfs_read_counters(pid, c);
}

static int k_read_rss(void *ctx, pid_t pid, uint64_t *rss)
{
	return procfs_read_rss(pid, rss);
}

static int k_open_pages(void *ctx, pid_t pid)
{
	struct engine *e = ctx;
	int fd = e->pass_reads ? start_ahead_pages(e, pid) : -1;

	return fd >= 0 ? fd : pagemap_open(pid);
}

static int k_scan_pages(void *ctx, int fd, uint64_t start, uint64_t end, pagemap_run_cb cb,
			void *arg)
{
	struct engine *e = ctx;

	return pagemap_scan(fd, start, end, e->use_scan, cb, arg);
}

static void k_close_pages(void *ctx, int fd)
{
	close(fd);
}

const struct engine_source engine_kernel_source = {
	.is_target = k_is_target,
	.add_target = k_add_target,
	.del_target = k_del_target,
	.passes = k_passes,
	.forget = k_forget,
	.layout_known = k_layout_known,
	.read_tgid = k_read_tgid,
	.pidfd_target = k_pidfd_target,
	.live_thread = k_live_thread,
	.read_layout = k_read_layout,
	.read_vmflags = k_read_vmflags,
	.read_start_brk = k_read_start_brk,
	.read_comm = k_read_comm,
	.read_uid = k_read_uid,
	.read_counters = k_read_counters,
	.read_rss = k_read_rss,
	.open_pages = k_open_pages,
	.scan_pages = k_scan_pages,
	.close_pages = k_close_pages,
};
