// SPDX-License-Identifier: GPL-2.0
/*
 * Syscalls that change an address space: one record at syscall exit, when the kernel has
 * done the work (so a range the engine rescans already shows the result).  Only the exit is
 * hooked: the arguments are still in the task's saved user registers, read at exit through
 * bpf_tracing.h's PT_REGS_PARMn_CORE_SYSCALL (which know each architecture's registers,
 * including the one the return value overwrites: arm64's x0 is read from orig_x0), so no
 * entry program and no per-thread stash are needed -- half the programs to attach and to
 * detach (each detach waits for an RCU grace period) and nothing to leak when a thread dies
 * inside a syscall.  Attach points, best first:
 *   tp/syscalls/sys_exit_<name>   only mm syscalls pay (needs tracefs)
 *   tp_btf/sys_exit               every syscall pays a switch on its number
 *   tp/raw_syscalls/sys_exit      same, through tracefs
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "syscalls.h"

static __always_inline bool interesting(long nr)
{
	switch (nr) {
	case MEVITOP_SYSCALL_CASES:
		return true;
	default:
		return false;
	}
}

static __always_inline int on_exit(long nr, long ret, struct pt_regs *regs)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct ev_syscall *e;

	if (!interesting(nr) || !watched(tgid))
		return 0;
	if (!regs)
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!regs)
		return 0;
	e = rec_reserve(sizeof(*e));
	if (!e) {
		count_lost(EV_SYSCALL, tgid);
		return 0;
	}
	e->kind = EV_SYSCALL;
	e->_pad0 = 0;
	e->cpu = bpf_get_smp_processor_id();
	e->tgid = tgid;
	e->tid = (__u32)pid_tgid;
	e->nr = nr;
	e->ret = ret;
	e->args[0] = PT_REGS_PARM1_CORE_SYSCALL(regs);
	e->args[1] = PT_REGS_PARM2_CORE_SYSCALL(regs);
	e->args[2] = PT_REGS_PARM3_CORE_SYSCALL(regs);
	e->args[3] = PT_REGS_PARM4_CORE_SYSCALL(regs);
	e->args[4] = PT_REGS_PARM5_CORE_SYSCALL(regs);
	e->args[5] = PT_REGS_PARM6_CORE_SYSCALL(regs);
	e->ts = bpf_ktime_get_ns();
	/* Layout changes are rare and the engine wants them promptly. */
	rec_submit(e, sizeof(*e), wakeup_flag(rec_bytes(sizeof(*e))));
	return 0;
}

/* --- raw syscall tracepoints (every syscall) --- */

SEC("tp_btf/sys_exit")
int BPF_PROG(btf_sys_exit, struct pt_regs *regs, long ret)
{
	return on_exit(MEVITOP_SYSCALL_NR_CORE(regs), ret, regs);
}

SEC("tp/raw_syscalls/sys_exit")
int tp_raw_sys_exit(struct trace_event_raw_sys_exit *ctx)
{
	return on_exit(BPF_CORE_READ(ctx, id), BPF_CORE_READ(ctx, ret), NULL);
}

/* --- per-syscall tracepoints (only mm syscalls pay) --- */

/* The per-syscall exit events share one layout: ent, __syscall_nr (int), ret. */
struct sc_exit_ctx {
	struct trace_entry ent;
	int nr;
	long ret;
};

#define SC_PROG(name)							\
SEC("tp/syscalls/sys_exit_" #name)					\
int tp_exit_##name(struct sc_exit_ctx *ctx)				\
{									\
	return on_exit(ctx->nr, ctx->ret, NULL);			\
}

MEVITOP_SYSCALL_LIST(SC_PROG)
