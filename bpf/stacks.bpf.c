// SPDX-License-Identifier: GPL-2.0
/*
 * --stacks in sample mode: nothing runs at every fault.  The loader opens a perf software
 * event per CPU (PERF_COUNT_SW_PAGE_FAULTS, sample_period N) and attaches this program, so
 * one page fault in N of any process reaches it, the way `perf record -e page-faults`
 * samples.  The event's regs are the faulting user registers and ctx->addr the faulting
 * address; the rest is the fault hooks' stack_sample (bpf/stacks.bpf.h), rate limit included.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "stacks.bpf.h"

SEC("perf_event")
int stacks_fault_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;

	if (!watched(tgid))
		return 0;
	stack_sample(ctx, tgid, (__u32)pid_tgid, ctx->addr, 0);
	return 0;
}
