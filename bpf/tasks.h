/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One record per process (thread-group leader) from the task iterator (bpf/tasks.bpf.c):
 * what /proc/PID/stat, statm and status told the engine each refresh, for every process in
 * one read().  Fixed-width fields, explicit padding (events.h's rules).
 *
 * What each field equals, so a record and /proc agree exactly:
 *   minflt/majflt  /proc/PID/stat fields 10 and 12: signal->min_flt (threads that exited)
 *                  plus every live thread's min_flt (fs/proc/array.c, do_task_stat, whole)
 *   rss            /proc/PID/statm field 2: file + anon + shmem pages, each per-CPU counter
 *                  summed exactly and clamped at 0 (get_mm_counter_sum, 6.16+)
 *   total_vm       pages; /proc/PID/stat's vsize is total_vm * PAGE_SIZE
 *   start_ns       task->start_boottime; /proc/PID/stat's start time is start_ns / (1e9 / HZ)
 *   state          __state | exit_state of the leader; the letter is made in user space
 *                  as task_state_index() makes it ("RSDTtXZPI")
 *   uid            the real uid (status "Uid:" first field)
 *   ppid           real_parent's tgid (root pid namespace)
 * A process with no address space anywhere (a kernel thread, a zombie whose threads are all
 * gone) has no record: not in a pass means no longer a process with memory.
 */
#ifndef MEVITOP_TASKS_H
#define MEVITOP_TASKS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define TASK_REC_COMM_LEN 16

struct task_rec {
	__u32 tgid;
	__u32 ppid;
	__u32 uid;
	__u32 state;		/* __state | exit_state, of the leader */
	__u32 io_tid;		/* the thread whose mm the figures are of (the leader, or a live
				 * thread when the leader has exited: pthread_exit()) */
	__u32 threads;		/* live threads walked */
	__u64 start_ns;		/* task->start_boottime of the leader */
	__u64 minflt;
	__u64 majflt;
	__u64 rss;		/* pages */
	__u64 total_vm;		/* pages */
	__u64 start_brk;	/* bytes */
	__u64 cgroup_id;	/* the cgroup v2 id (kernfs node id), 0 if none */
	char comm[TASK_REC_COMM_LEN];	/* the leader's */
};

#endif
