// SPDX-License-Identifier: GPL-2.0
/*
 * Process lifecycle: fork (processes, not threads), exec and group exit.  tp_btf first; the
 * classic sched tracepoints (through tracefs) are the fallback.  Children of a watched process
 * are added to the target set here, in the kernel, so none of their first faults is missed.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"

static __always_inline void emit_proc(__u8 kind, __u8 flags, __u32 tgid, __u32 ptgid,
				      struct task_struct *task)
{
	struct ev_proc *e = rec_reserve(sizeof(*e));

	if (!e) {
		count_lost(kind, tgid);
		return;
	}
	e->kind = kind;
	e->flags = flags;
	e->cpu = bpf_get_smp_processor_id();
	e->tgid = tgid;
	e->tid = BPF_CORE_READ(task, pid);
	e->ptgid = ptgid;
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	e->ts = bpf_ktime_get_ns();
	/* Process events are rare; wake the consumer so a new process is modelled at once. */
	rec_submit(e, sizeof(*e), 0);
}

#define PF_KTHREAD 0x00200000	/* include/linux/sched.h */

/* With filters (-u, --comm, --cgroup), every process's lifecycle is reported and the engine
 * decides; otherwise only watched processes'. */
static __always_inline bool report_lifecycle(__u32 tgid)
{
	return cfg_all_proc_events ? tgid != cfg_self_tgid : watched(tgid);
}

static __always_inline int on_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u8 flags = 0;

	if (ctgid == ptgid)	/* a new thread: same process */
		return 0;
	if (ptgid == cfg_self_tgid || (BPF_CORE_READ(child, flags) & PF_KTHREAD))
		return 0;
	if (cfg_filter) {
		bool parent_watched = is_target(ptgid);

		/* Children of a watched process are watched from their first instruction. */
		if (parent_watched && cfg_follow_children)
			set_target(ctgid, true);
		else if (!cfg_all_proc_events)
			return 0;
	}
	if (BPF_CORE_READ(child, mm) == BPF_CORE_READ(parent, mm))
		flags |= EVP_SHARED_MM;
	emit_proc(EV_FORK, flags, ctgid, ptgid, child);
	return 0;
}

static __always_inline int on_exec(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	if (!report_lifecycle(tgid))
		return 0;
	emit_proc(EV_EXEC, 0, tgid, 0, task);
	return 0;
}

static __always_inline int on_exit(struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	/* Only the last thread's exit ends the process: do_exit() decrements signal->live
	 * before this tracepoint fires. */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	if ((BPF_CORE_READ(task, flags) & PF_KTHREAD) || !report_lifecycle(tgid))
		return 0;
	emit_proc(EV_EXIT, 0, tgid, 0, task);
	if (cfg_filter)
		set_target(tgid, false);	/* the pid may be reused by someone else */
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(btf_fork, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(parent, child);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(btf_exec, struct task_struct *p)
{
	return on_exec(p);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(btf_exit, struct task_struct *p)
{
	return on_exit(p);
}

/* The classic events carry pids, not tasks; the task is current in each of them (fork runs
 * in the parent, exec and exit in the task itself).  The child is looked up by pid. */
SEC("tp/sched/sched_process_fork")
int tp_fork(struct trace_event_raw_sched_process_fork *ctx)
{
	struct task_struct *parent = (struct task_struct *)bpf_get_current_task();
	__u32 ptgid = BPF_CORE_READ(parent, tgid);

	/* Without a task pointer for the child, treat every fork as a process fork unless the
	 * child pid is a thread of the parent: CLONE_THREAD children get the parent's tgid, and
	 * the classic event does not say which.  The engine checks /proc when it matters. */
	if (ptgid == cfg_self_tgid || (BPF_CORE_READ(parent, flags) & PF_KTHREAD))
		return 0;
	if (cfg_filter) {
		if (is_target(ptgid) && cfg_follow_children)
			set_target(BPF_CORE_READ(ctx, child_pid), true);
		else if (!cfg_all_proc_events)
			return 0;
	}
	struct ev_proc *e = rec_reserve(sizeof(*e));
	if (!e) {
		count_lost(EV_FORK, ptgid);
		return 0;
	}
	e->kind = EV_FORK;
	e->flags = EVP_MAYBE_THREAD;
	e->cpu = bpf_get_smp_processor_id();
	e->tgid = BPF_CORE_READ(ctx, child_pid);
	e->tid = e->tgid;
	e->ptgid = ptgid;
	BPF_CORE_READ_STR_INTO(&e->comm, parent, comm);
	e->ts = bpf_ktime_get_ns();
	rec_submit(e, sizeof(*e), 0);
	return 0;
}

SEC("tp/sched/sched_process_exec")
int tp_exec(void *ctx)
{
	return on_exec((struct task_struct *)bpf_get_current_task());
}

SEC("tp/sched/sched_process_exit")
int tp_exit(void *ctx)
{
	return on_exit((struct task_struct *)bpf_get_current_task());
}
