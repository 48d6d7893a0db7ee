// SPDX-License-Identifier: GPL-2.0
/*
 * kmem:rss_stat fires whenever a per-mm rss counter changes (from 6.2 on, at every change).
 * The latest values go to the `rss` map; nothing is streamed.  The engine compares them with
 * its model each interval to catch what no event reports: reclaim, swap-out, khugepaged,
 * pages populated through GUP.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"

/* Before 6.2 the counters were atomics in struct mm_rss_stat. */
struct mm_rss_stat___old {
	atomic_long_t count[4];
};

struct mm_struct___old {
	struct mm_rss_stat___old rss_stat;
};

static __always_inline void store(__u32 tgid, int member, __s64 pages)
{
	__u32 slot = tgid & (RSS_SLOTS - 1);
	struct rss_val *v;

	if (!tgid || member < 0 || member >= MEVITOP_NR_RSS || !watched(tgid))
		return;
	/* An array slot, not a hash entry: this runs at every rss change, i.e. every fault. */
	v = bpf_map_lookup_elem(&rss, &slot);
	if (!v)
		return;
	v->tgid = tgid;
	v->count[member & 3] = pages;
	v->updates++;	/* a racy increment is fine: any change of the value is the signal */
}

/*
 * This runs at every rss change -- every fault -- so it reads through BTF pointers (plain
 * loads the verifier guards) rather than bpf_probe_read, and touches one array slot.
 */
SEC("tp_btf/rss_stat")
int BPF_PROG(btf_rss_stat, struct mm_struct *mm, int member)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	__s64 pages;
	__u32 tgid;

	if (member < 0 || member >= MEVITOP_NR_RSS)
		return 0;
	if (cur->mm == mm)
		tgid = cur->tgid;
	else if (bpf_core_field_exists(mm->owner) && mm->owner)
		tgid = mm->owner->tgid;	/* kswapd, khugepaged, process_madvise: the owner */
	else
		return 0;
	if (bpf_core_field_exists(mm->rss_stat[0].count)) {
		/* percpu_counter_read(): the approximate global value, as the trace event shows.
		 * Constant indices: BTF pointers take no variable offsets. */
		switch (member) {
		case 0: pages = mm->rss_stat[0].count; break;
		case 1: pages = mm->rss_stat[1].count; break;
		case 2: pages = mm->rss_stat[2].count; break;
		default: pages = mm->rss_stat[3].count; break;
		}
	} else {
		struct mm_struct___old *old = (void *)mm;

		pages = BPF_CORE_READ(old, rss_stat.count[member & 3].counter);
	}
	store(tgid, member, pages);
	return 0;
}

SEC("tp/kmem/rss_stat")
int tp_rss_stat(struct trace_event_raw_rss_stat *ctx)
{
	/* The classic event identifies the mm only by a hashed id; `curr` says whether it is
	 * current's.  Changes to other mms are left to periodic reconciliation. */
	if (!BPF_CORE_READ(ctx, curr))
		return 0;
	store(bpf_get_current_pid_tgid() >> 32, BPF_CORE_READ(ctx, member),
	      BPF_CORE_READ(ctx, size) >> 12);
	return 0;
}
