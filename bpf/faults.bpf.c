// SPDX-License-Identifier: GPL-2.0
/*
 * Page faults on user addresses.  Attach points, best first (the loader picks one per kernel,
 * see user/kernel/kfeatures.c):
 *   tp_btf/page_fault_user + tp_btf/page_fault_kernel   (x86; no tracefs needed)
 *   tp/exceptions/page_fault_user + page_fault_kernel   (x86; needs tracefs)
 *   fentry/handle_mm_fault, kprobe/handle_mm_fault       (any arch; also sees GUP faults)
 * The exceptions tracepoints fire at fault entry, before the page is mapped: the record says
 * "this page is being faulted in", and the engine knows the outcome (one page, a THP, a
 * fault-around window) from the mapping.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "stacks.bpf.h"

/* x86 page-fault error code bits (arch/x86/include/asm/trap_pf.h). */
#define X86_PF_PROT	(1UL << 0)
#define X86_PF_WRITE	(1UL << 1)
#define X86_PF_INSTR	(1UL << 4)

/* mm/internal fault flags for handle_mm_fault (include/linux/mm_types.h, stable since 5.x). */
#define FAULT_FLAG_WRITE	(1U << 0)
#define FAULT_FLAG_USER		(1U << 6)
#define FAULT_FLAG_INSTRUCTION	(1U << 8)

/*
 * Sample mode: count faults per (process, 2 MiB chunk).  Faults come in runs on one chunk, so
 * each CPU keeps its current chunk in a per-CPU slot and only touches the shared hash map
 * when it moves to another chunk.  The engine reads the slots as well as the map each tick
 * (a slot's chunk is dirty too); a torn read of a slot only costs an extra scan.
 */
static __always_inline void flush_chunk(struct chunk_slot *s)
{
	struct chunk_key key = { .tgid = s->tgid, .chunk = s->chunk };
	struct chunk_val *v, init = { .faults = s->faults };

	v = bpf_map_lookup_elem(&chunks, &key);
	if (v) {
		__sync_fetch_and_add(&v->faults, s->faults);
		return;
	}
	if (bpf_map_update_elem(&chunks, &key, &init, BPF_NOEXIST) == -E2BIG) {
		/* Full: the engine sees the overflow count and rescans the process instead. */
		bump_percpu(&overflow, OVF_CHUNKS);
		count_lost(EV_FAULT, s->tgid);
	}
}

static __always_inline void aggregate(__u32 tgid, __u64 addr)
{
	__u32 zero = 0;
	struct chunk_slot *s = bpf_map_lookup_elem(&chunk_slot, &zero);
	__u64 chunk = addr >> MEVITOP_CHUNK_SHIFT;

	if (!s)
		return;
	if (s->tgid == tgid && s->chunk == chunk) {
		s->faults++;
		return;
	}
	if (s->faults)
		flush_chunk(s);
	s->tgid = tgid;
	s->chunk = chunk;
	s->faults = 1;
}

static __always_inline fault_rec *fring_slot(__u32 cpu, __u64 n)
{
	__u32 idx = cpu * cfg_fring_slots + (n & (cfg_fring_slots - 1));

	return bpf_map_lookup_elem(&fring, &idx);
}

/*
 * A user-mode fault into this CPU's fault ring (events.h): no lock, no atomic (the program
 * costs ~20 ns a fault beyond an empty one here, ~43 with the events ring).  Only
 * from the exceptions tracepoints' user-mode faults: x86 (a store-ordered architecture, so
 * the record's stores are seen before the head's without a fence), and never nested on one
 * CPU (a user-mode fault is taken neither in an interrupt nor in an NMI, and the program
 * does not recurse), so the CPU is the ring's only writer.  The kernel-mode hook can run in
 * an NMI (copy_from_user_nmi) inside this one: it uses the events ring.
 */
static __always_inline void fring_push(__u32 tgid, __u64 addr, __u8 flags)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct fring_pos *pos = bpf_map_lookup_elem(&fring_pos, &cpu);
	bool mark;
	fault_rec *r;
	__u64 head;

	if (!pos)
		return;
	head = pos->head;
	mark = pos->last_tgid != tgid;
	if (head + mark - *(volatile __u64 *)&pos->tail >= cfg_fring_slots) {
		count_lost(EV_FAULT, tgid);	/* full: the engine rescans the process */
		return;
	}
	if (mark) {
		r = fring_slot(cpu, head);
		if (!r)
			return;
		*r = ((__u64)tgid << 32) | FR_MARK;
		pos->last_tgid = tgid;
		head++;
	}
	r = fring_slot(cpu, head);
	if (!r)
		return;
	*r = (addr & ~(__u64)0xfff) | (flags & FR_FLAGS);
	asm volatile("" ::: "memory");	/* the compiler keeps the records before the head */
	*(volatile __u64 *)&pos->head = head + 1;
}

static __always_inline int emit_fault(void *ctx, __u32 tgid, __u32 tid, __u64 addr, __u8 flags,
				      bool percpu)
{
	struct ev_fault *e;

	stack_sample(ctx, tgid, tid, addr, flags);
	if (cfg_stacks_only)
		return 0;
	if (cfg_sample) {
		aggregate(tgid, addr);
		return 0;
	}
	if (percpu && cfg_fring_slots) {
		fring_push(tgid, addr, flags);
		return 0;
	}
	e = rec_reserve(sizeof(*e));
	if (!e) {
		count_lost(EV_FAULT, tgid);
		return 0;
	}
	e->kind = EV_FAULT;
	e->flags = flags;
	e->cpu = 0;
	e->tgid = tgid;
	e->tid = tid;
	e->_pad = 0;
	e->addr = addr;
	/* Never a wake-up from the fault path (not even the backlog check: one helper call less
	 * per fault): the consumer drains every 10 ms, and an 8 MiB buffer holds 262,144
	 * records, 26 million faults a second. */
	rec_submit(e, sizeof(*e), BPF_RB_NO_WAKEUP);
	return 0;
}

/* Faults taken by the current task on its own address space (the exceptions tracepoints). */
static __always_inline int on_x86_fault(void *ctx, __u64 addr, __u64 error_code, bool kernel_mode)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	__u8 flags;

	/* Kernel-mode faults count only on user addresses (copy_to_user into a fresh buffer);
	 * the lower canonical half is user space on x86_64 with 4- and 5-level paging. */
	if (kernel_mode && (addr >> 63))
		return 0;
	/* --stacks' own stack walk faults: bpf_get_stack's frame-pointer chain and
	 * bpf_probe_read_user read with page faults disabled, and in code without frame
	 * pointers %rbp often points at memory not faulted in yet (a fault loop's next page).
	 * Such a fault is never handled (it is fixed up, the read fails), so nothing becomes
	 * resident; each used to count as a fault, and in exact mode sent a second stack for
	 * every fault.  Not every fault with page faults disabled is ours: read() into fresh
	 * pages copies with them disabled, then faults the pages in through GUP (no exception,
	 * no tracepoint), so that first fault is the only sign of them here. */
	if (kernel_mode && stack_walking())
		return 0;
	if (!watched(tgid))
		return 0;
	/* The error code's bits moved to ours by shifts.  Clang takes a swap of two bits for
	 * a bit reversal, which BPF has no instruction for: ~25 instructions, a good part of
	 * this program.  The empty asm hides that the parts come from one word. */
	_Static_assert(EVF_WRITE == X86_PF_WRITE >> 1 && EVF_PRESENT == X86_PF_PROT << 1 &&
		       EVF_INSTR == X86_PF_INSTR >> 2, "the shifts below");
	{
		__u64 w = (error_code & X86_PF_WRITE) >> 1;

		asm volatile("" : "+r"(w));
		flags = w | ((error_code & X86_PF_PROT) << 1) | ((error_code & X86_PF_INSTR) >> 2);
	}
	if (kernel_mode)
		flags |= EVF_KERNEL;
	/* A user-mode fault with nothing else to do: straight to this CPU's ring. */
	if (!kernel_mode && cfg_fring_slots && !cfg_stacks) {
		fring_push(tgid, addr, flags);
		return 0;
	}
	return emit_fault(ctx, tgid, (__u32)pid_tgid, addr, flags, !kernel_mode);
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(btf_fault_user, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	return on_x86_fault(ctx, address, error_code, false);
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(btf_fault_kernel, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	return on_x86_fault(ctx, address, error_code, true);
}

SEC("tp/exceptions/page_fault_user")
int tp_fault_user(struct trace_event_raw_exceptions *ctx)
{
	return on_x86_fault(ctx, BPF_CORE_READ(ctx, address), BPF_CORE_READ(ctx, error_code), false);
}

SEC("tp/exceptions/page_fault_kernel")
int tp_fault_kernel(struct trace_event_raw_exceptions *ctx)
{
	return on_x86_fault(ctx, BPF_CORE_READ(ctx, address), BPF_CORE_READ(ctx, error_code), true);
}

/*
 * handle_mm_fault(vma, address, flags, regs): every architecture, and it also sees faults
 * taken on behalf of another process (GUP: ptrace, process_vm_writev, O_DIRECT).  The
 * process is the owner of the vma's mm, not necessarily current.
 */
static __always_inline int on_handle_mm_fault(void *ctx, struct vm_area_struct *vma, __u64 addr,
					      __u32 fflags)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct mm_struct *mm = BPF_CORE_READ(vma, vm_mm);
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = pid_tgid >> 32;
	__u8 flags = 0;

	if (mm != BPF_CORE_READ(cur, mm)) {
		if (!bpf_core_field_exists(mm->owner))
			return 0;
		tgid = BPF_CORE_READ(mm, owner, tgid);
	}
	if (!watched(tgid))
		return 0;
	if (fflags & FAULT_FLAG_WRITE)
		flags |= EVF_WRITE;
	if (fflags & FAULT_FLAG_INSTRUCTION)
		flags |= EVF_INSTR;
	if (!(fflags & FAULT_FLAG_USER))
		flags |= EVF_KERNEL;
	/* A fault on another process's memory (GUP): current's stack says nothing about it. */
	if (tgid != pid_tgid >> 32)
		return emit_fault(NULL, tgid, (__u32)pid_tgid, addr, flags, false);
	return emit_fault(ctx, tgid, (__u32)pid_tgid, addr, flags, false);
}

SEC("fentry/handle_mm_fault")
int BPF_PROG(fentry_fault, struct vm_area_struct *vma, unsigned long address, unsigned int flags)
{
	return on_handle_mm_fault(ctx, vma, address, flags);
}

SEC("kprobe/handle_mm_fault")
int BPF_KPROBE(kprobe_fault, struct vm_area_struct *vma, unsigned long address, unsigned int flags)
{
	return on_handle_mm_fault(ctx, vma, address, flags);
}
