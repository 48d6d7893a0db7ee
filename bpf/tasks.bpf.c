// SPDX-License-Identifier: GPL-2.0
/*
 * The per-refresh pass: a task iterator (iter/task) that writes one struct task_rec
 * (tasks.h) per process, so one read() of the iterator tells the engine what a
 * /proc/PID/stat + statm read per process did: faults, rss, size, state, start time.
 *
 * The iterator visits every thread; only thread-group leaders write a record, with the
 * group's fault counts summed as do_task_stat() sums them.  No map, no ring buffer: the
 * records go to the reader through bpf_seq_write.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "tasks.h"

#define PF_KTHREAD_	0x00200000
#define MAX_THREADS	65536	/* threads walked per process at most (bpf_loop bound) */

const volatile __u32 cfg_ncpus = 1;	/* possible CPUs, set by the loader */

/*
 * A percpu_counter's per-CPU parts are at counters + __per_cpu_offset[cpu].  Neither that
 * array nor a per-CPU variable's address is reachable here (no data symbols in kallsyms,
 * no percpu type tags in BTF), so the offsets are measured once: a per-CPU array's value
 * pointer for each CPU (bpf_map_lookup_percpu_elem) minus the raw percpu pointer the array
 * keeps (bpf_array.pptrs[0]).  They never change after boot.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cpu_probe SEC(".maps");

#define CPU_OFF_MAX	1024
static __u64 cpu_off[CPU_OFF_MAX];
static __u32 cpu_offs;			/* CPUs measured (0: not yet) */
static volatile __u64 ptr_bits;		/* a pointer made a number (root may store one) */

static long measure_cpu(__u64 cpu, void *arg)
{
	__u64 base = *(__u64 *)arg;
	__u32 zero = 0;
	void *v = bpf_map_lookup_percpu_elem(&cpu_probe, &zero, (__u32)cpu);

	if (!v || cpu >= CPU_OFF_MAX)
		return 1;
	ptr_bits = (__u64)v;
	cpu_off[cpu] = ptr_bits - base;
	cpu_offs = cpu + 1;
	return 0;
}

static __always_inline bool measure_offsets(void)
{
	__u64 base = 0;

	if (cpu_offs)
		return true;
	/* The verifier allows no arithmetic on a map pointer: read through its number. */
	ptr_bits = (__u64)(void *)&cpu_probe;
	bpf_probe_read_kernel(&base, sizeof(base),
			      (void *)(ptr_bits + bpf_core_field_offset(struct bpf_array, pptrs)));
	if (base)
		bpf_loop(cfg_ncpus < CPU_OFF_MAX ? cfg_ncpus : CPU_OFF_MAX, measure_cpu, &base, 0);
	return cpu_offs != 0;
}

struct thread_walk {
	struct list_head *head;		/* &signal->thread_head */
	struct list_head *node;
	__u64 minflt, majflt;
	struct mm_struct *mm;		/* of the first live thread that has one */
	__u32 tid;
	__u32 threads;
};

static long walk_thread(__u64 i, void *arg)
{
	struct thread_walk *w = arg;
	struct task_struct *t;
	struct list_head *next = NULL;

	bpf_probe_read_kernel(&next, sizeof(next), &w->node->next);
	if (!next || next == w->head)
		return 1;
	w->node = next;
	t = (void *)next - bpf_core_field_offset(struct task_struct, thread_node);
	w->minflt += BPF_CORE_READ(t, min_flt);
	w->majflt += BPF_CORE_READ(t, maj_flt);
	w->threads++;
	if (!w->mm) {
		w->mm = BPF_CORE_READ(t, mm);
		if (w->mm)
			w->tid = BPF_CORE_READ(t, pid);
	}
	return 0;
}

struct counter_sum {
	__s32 *counters[3];
	__s64 sum[3];
};

static long sum_cpu(__u64 cpu, void *arg)
{
	struct counter_sum *c = arg;
	__u64 off;
	__s32 v;
	int k;

	if (cpu >= CPU_OFF_MAX)
		return 1;
	off = cpu_off[cpu];
	for (k = 0; k < 3; k++) {
		v = 0;
		bpf_probe_read_kernel(&v, sizeof(v), (void *)c->counters[k] + off);
		c->sum[k] += v;
	}
	return 0;
}

/*
 * An mm's figures, field by field with LOAD(mm, field): a plain load (PLAIN) when mm is the
 * typed pointer task->mm, a probe read (BPF_CORE_READ) when it went through a number (the
 * thread walk's).  A pass reads these of every process: plain loads cost a fraction of a
 * helper call each, and most processes have one thread.
 */
#define PLAIN(p, field) ((p)->field)
#define MM_FIGURES(c, r, mm, LOAD) do {						\
	(c)->counters[0] = LOAD(mm, rss_stat[MM_FILEPAGES].counters);		\
	(c)->sum[0] = LOAD(mm, rss_stat[MM_FILEPAGES].count);			\
	(c)->counters[1] = LOAD(mm, rss_stat[MM_ANONPAGES].counters);		\
	(c)->sum[1] = LOAD(mm, rss_stat[MM_ANONPAGES].count);			\
	(c)->counters[2] = LOAD(mm, rss_stat[MM_SHMEMPAGES].counters);		\
	(c)->sum[2] = LOAD(mm, rss_stat[MM_SHMEMPAGES].count);			\
	(r)->total_vm = LOAD(mm, total_vm);					\
	(r)->start_brk = LOAD(mm, start_brk);					\
} while (0)

/* get_mm_counter_sum(): count plus every CPU's part, clamped at 0 (per counter); c holds
 * each counter's count and per-CPU pointer (MM_FIGURES). */
static __u64 rss_pages(struct counter_sum *c)
{
	__u64 rss = 0;
	int k;

	bpf_loop(cpu_offs, sum_cpu, c, 0);
	for (k = 0; k < 3; k++)
		if (c->sum[k] > 0)
			rss += c->sum[k];
	return rss;
}

SEC("iter/task")
int dump_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct signal_struct *sig;
	struct thread_walk w = {};
	struct counter_sum c = {};
	struct task_rec r = {};

	if (!task || !measure_offsets())
		return 0;
	/* ctx->task is a trusted pointer: plain loads (the JIT's exception-handled ones)
	 * cost less than a helper call per field, and a pass reads ~20 fields of every
	 * process. */
	r.tgid = task->tgid;
	if (task->pid != r.tgid || (task->flags & PF_KTHREAD_))
		return 0;
	sig = task->signal;
	if (!sig)
		return 0;
	w.minflt = sig->min_flt;
	w.majflt = sig->maj_flt;
	w.tid = r.tgid;
	if (sig->nr_threads == 1) {
		/* The common case: no thread list to walk, and task->mm stays typed. */
		struct mm_struct *mm = task->mm;

		if (!mm)
			return 0;	/* no address space: not a process with memory */
		w.minflt += task->min_flt;
		w.majflt += task->maj_flt;
		w.threads = 1;
		MM_FIGURES(&c, &r, mm, PLAIN);
	} else {
		struct mm_struct *mm;

		/* The leader's mm first: a zombie leader (pthread_exit()) has none, a live
		 * thread has the process's. */
		w.head = &sig->thread_head;
		w.node = w.head;
		w.mm = task->mm;
		bpf_loop(MAX_THREADS, walk_thread, &w, 0);
		mm = w.mm;	/* a number now (a local: CO-RE relocates mm's fields only) */
		if (!mm)
			return 0;	/* no address space left: not a process with memory */
		MM_FIGURES(&c, &r, mm, BPF_CORE_READ);
	}
	r.io_tid = w.tid;
	r.threads = w.threads;
	r.ppid = task->real_parent->tgid;
	r.uid = task->real_cred->uid.val;
	r.state = task->__state | task->exit_state;
	r.start_ns = task->start_boottime;
	r.minflt = w.minflt;
	r.majflt = w.majflt;
	r.rss = rss_pages(&c);
	r.cgroup_id = task->cgroups->dfl_cgrp->kn->id;
	bpf_probe_read_kernel_str(&r.comm, sizeof(r.comm), task->comm);
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}
