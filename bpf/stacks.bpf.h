/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --stacks in trace and chunk modes: called from the fault hooks (bpf/faults.bpf.c) for a
 * fault that maps a new page in a watched process.  At most one user stack per (process,
 * 2 MiB chunk) per cfg_stack_interval_ns is sent, so a fault loop pays a per-CPU slot
 * compare per fault and a stack walk only per chunk.
 *
 * bpf_get_stack(BPF_F_USER_STACK) from a tracepoint walks the *user* registers: the kernel's
 * perf unwinder switches to task_pt_regs(current) when the tracepoint's regs are kernel ones
 * (kernel/events/callchain.c), so frames[0] is the faulting user instruction (or, for a
 * kernel-mode fault in copy_to_user, the syscall's return address) and the rest follow the
 * frame-pointer chain.  Without frame pointers that chain is garbage: user space checks every
 * return address before it names it.
 *
 * Exact mode (cfg_stacks_only): a stack at every fault of a watched process, no rate limit;
 * user space keeps those whose (thread, page) the userfaultfd reports as a first touch.
 */
#ifndef MEVITOP_STACKS_BPF_H
#define MEVITOP_STACKS_BPF_H

#include "common.bpf.h"

/* Faults on a CPU's current chunk turned away between two clock reads: the hot path is a
 * compare and a decrement, and a new interval starts at most this many faults late. */
#define STACK_SKIP 63

/* True if this (process, chunk) had no stack taken within the interval; marks it taken
 * and sets *now. */
static __always_inline bool stack_due(__u32 tgid, __u64 chunk, __u64 *now_out)
{
	struct stack_chunk_key key = { .tgid = tgid, .chunk = chunk };
	__u32 zero = 0;
	struct stack_slot *s = bpf_map_lookup_elem(&stack_slot, &zero);
	__u64 *last, now;

	if (cfg_stacks_only) {
		*now_out = bpf_ktime_get_ns();
		return true;	/* exact mode: every fault (no rate limit) */
	}
	if (!s)
		return false;
	if (s->tgid == tgid && s->chunk == chunk && s->skip) {
		s->skip--;
		return false;
	}
	now = bpf_ktime_get_ns();
	*now_out = now;
	if (s->tgid == tgid && s->chunk == chunk && now - s->ts < cfg_stack_interval_ns) {
		s->skip = STACK_SKIP;
		return false;
	}
	last = bpf_map_lookup_elem(&stack_chunks, &key);
	if (last && now - *last < cfg_stack_interval_ns) {
		s->tgid = tgid;
		s->chunk = chunk;
		s->ts = *last;
		s->skip = STACK_SKIP;
		return false;
	}
	bpf_map_update_elem(&stack_chunks, &key, &now, BPF_ANY);
	s->tgid = tgid;
	s->chunk = chunk;
	s->ts = now;
	s->skip = STACK_SKIP;
	return true;
}

/* True while this CPU walks a user stack for stack_sample: a kernel-mode fault then is the
 * walk's own (the fault hooks run nested in it, on the same CPU). */
static __always_inline bool stack_walking(void)
{
	__u32 zero = 0;
	struct stack_slot *s = bpf_map_lookup_elem(&stack_slot, &zero);

	return s && s->walking;
}

static __always_inline void stack_sample(void *ctx, __u32 tgid, __u32 tid, __u64 addr,
					 __u8 flags)
{
	__u32 zero = 0;
	struct stack_slot *slot;
	struct ev_stack *e;
	struct pt_regs *regs;
	__u64 now;
	long n;

	/* ctx NULL: the fault is not the current task's own (see faults.bpf.c). */
	if (!cfg_stacks || !ctx || (flags & EVF_PRESENT))
		return;
	if (!stack_due(tgid, addr >> MEVITOP_CHUNK_SHIFT, &now))
		return;
	e = rec_reserve(sizeof(*e));
	if (!e) {
		/* Not count_lost(): a lost stack needs no rescan, only a count. */
		bump_percpu(&lost, EV_STACK);
		return;
	}
	slot = bpf_map_lookup_elem(&stack_slot, &zero);
	if (slot)
		slot->walking = 1;
	n = bpf_get_stack(ctx, e->frames, sizeof(e->frames), BPF_F_USER_STACK);
	/* The perf unwinder starts at %rbp and so skips the caller of a function that has no
	 * frame of its own (leaf functions, even with -fno-omit-frame-pointer): keep the top
	 * of the user stack for user space to check. */
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (bpf_probe_read_user(&e->top, sizeof(e->top), (void *)PT_REGS_SP_CORE(regs)))
		e->top = 0;
	if (slot)
		slot->walking = 0;
	e->kind = EV_STACK;
	e->flags = flags;
	e->nframes = n > 0 ? n / sizeof(__u64) : 0;
	e->tgid = tgid;
	e->tid = tid;
	e->_pad = 0;
	e->addr = addr;
	e->ts = now;
	rec_submit(e, sizeof(*e), BPF_RB_NO_WAKEUP);
}

#endif /* MEVITOP_STACKS_BPF_H */
