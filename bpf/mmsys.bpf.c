// SPDX-License-Identifier: GPL-2.0
/*
 * Syscalls that change an address space: arguments are stashed per thread at entry and one
 * record is emitted at exit, when the kernel has done the work (so a range the engine rescans
 * already shows the result).  Attach points, best first:
 *   tp/syscalls/sys_{enter,exit}_<name>  only mm syscalls pay (needs tracefs)
 *   tp_btf/sys_enter + tp_btf/sys_exit     every syscall pays a switch on its number
 *   tp/raw_syscalls/sys_{enter,exit}       same, through tracefs
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"
#include "syscalls.h"

struct stash {
	__u32 nr;
	__u32 _pad;
	__u64 args[6];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);		/* tid */
	__type(value, struct stash);
} sc_stash SEC(".maps");

static __always_inline bool interesting(long nr)
{
	switch (nr) {
	case MEVITOP_SYSCALL_CASES:
		return true;
	default:
		return false;
	}
}

static __always_inline int on_enter(long nr, const unsigned long *args_kernel,
				    struct pt_regs *regs)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct stash s = { .nr = nr };

	if (!interesting(nr) || !watched(pid_tgid >> 32))
		return 0;
	if (regs) {
		/* x86_64 syscall ABI: di, si, dx, r10, r8, r9. */
		s.args[0] = BPF_CORE_READ(regs, di);
		s.args[1] = BPF_CORE_READ(regs, si);
		s.args[2] = BPF_CORE_READ(regs, dx);
		s.args[3] = BPF_CORE_READ(regs, r10);
		s.args[4] = BPF_CORE_READ(regs, r8);
		s.args[5] = BPF_CORE_READ(regs, r9);
	} else {
		bpf_probe_read_kernel(s.args, sizeof(s.args), args_kernel);
	}
	if (bpf_map_update_elem(&sc_stash, &tid, &s, BPF_ANY))
		bump_percpu(&overflow, OVF_SYSCALL_STASH);
	return 0;
}

static __always_inline int on_exit(long nr, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, tgid = pid_tgid >> 32;
	struct ev_syscall *e;
	struct stash *s;

	if (!interesting(nr))
		return 0;
	s = bpf_map_lookup_elem(&sc_stash, &tid);
	if (!s)
		return 0;
	if (s->nr != nr) {
		bpf_map_delete_elem(&sc_stash, &tid);
		return 0;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost(EV_SYSCALL, tgid);
		bpf_map_delete_elem(&sc_stash, &tid);
		return 0;
	}
	e->kind = EV_SYSCALL;
	e->_pad0 = 0;
	e->cpu = bpf_get_smp_processor_id();
	e->tgid = tgid;
	e->tid = tid;
	e->nr = nr;
	e->ret = ret;
	__builtin_memcpy(e->args, s->args, sizeof(e->args));
	e->ts = bpf_ktime_get_ns();
	bpf_map_delete_elem(&sc_stash, &tid);
	/* Layout changes are rare and the engine wants them promptly. */
	bpf_ringbuf_submit(e, wakeup_flag(sizeof(*e)));
	return 0;
}

/* --- raw syscall tracepoints (every syscall) --- */

SEC("tp_btf/sys_enter")
int BPF_PROG(btf_sys_enter, struct pt_regs *regs, long id)
{
	return on_enter(id, NULL, regs);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(btf_sys_exit, struct pt_regs *regs, long ret)
{
	/* orig_ax holds the syscall number at exit. */
	return on_exit(BPF_CORE_READ(regs, orig_ax), ret);
}

SEC("tp/raw_syscalls/sys_enter")
int tp_raw_sys_enter(struct trace_event_raw_sys_enter *ctx)
{
	return on_enter(BPF_CORE_READ(ctx, id), ctx->args, NULL);
}

SEC("tp/raw_syscalls/sys_exit")
int tp_raw_sys_exit(struct trace_event_raw_sys_exit *ctx)
{
	return on_exit(BPF_CORE_READ(ctx, id), BPF_CORE_READ(ctx, ret));
}

/* --- per-syscall tracepoints (only mm syscalls pay) --- */

/* The per-syscall events share the raw layout: ent, __syscall_nr (int), args[6] / ret. */
struct sc_enter_ctx {
	struct trace_entry ent;
	int nr;
	unsigned long args[6];
};

struct sc_exit_ctx {
	struct trace_entry ent;
	int nr;
	long ret;
};

#define SC_PROGS(name)							\
SEC("tp/syscalls/sys_enter_" #name)					\
int tp_enter_##name(struct sc_enter_ctx *ctx)				\
{									\
	return on_enter(ctx->nr, ctx->args, NULL);			\
}									\
SEC("tp/syscalls/sys_exit_" #name)					\
int tp_exit_##name(struct sc_exit_ctx *ctx)				\
{									\
	return on_exit(ctx->nr, ctx->ret);				\
}

MEVITOP_SYSCALL_LIST(SC_PROGS)
