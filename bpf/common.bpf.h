/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers used only by BPF code: filtering, lost-event accounting, batched wake-ups. */
#ifndef MEVITOP_COMMON_BPF_H
#define MEVITOP_COMMON_BPF_H

#include "maps.bpf.h"

#ifndef E2BIG
#define E2BIG 7
#endif

static __always_inline void bump_percpu(void *map, __u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(map, &idx);

	if (v)
		*v += 1;
}

static __always_inline bool is_target(__u32 tgid)
{
	__u32 word = tgid >> 6;
	__u64 *w = bpf_map_lookup_elem(&targets, &word);

	return w && ((*w >> (tgid & 63)) & 1);
}

/* Should events of this process be reported? */
static __always_inline bool watched(__u32 tgid)
{
	if (tgid == cfg_self_tgid)
		return false;
	if (!cfg_filter)
		return true;
	return is_target(tgid);
}

static __always_inline void set_target(__u32 tgid, bool on)
{
	__u32 word = tgid >> 6;
	__u64 *w = bpf_map_lookup_elem(&targets, &word), bit = 1ULL << (tgid & 63);

	if (!w) {
		bump_percpu(&overflow, OVF_TARGETS);
		return;
	}
	if (on)
		__sync_fetch_and_or(w, bit);
	else
		__sync_fetch_and_and(w, ~bit);
}

/* A reservation failed: count it per CPU and kind, and remember the process so the engine
 * heals exactly that one from pagemap. */
static __always_inline void count_lost(__u32 kind, __u32 tgid)
{
	__u64 one = 1, *v;

	bump_percpu(&lost, kind);
	v = bpf_map_lookup_elem(&lost_tgid, &tgid);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&lost_tgid, &tgid, &one, BPF_NOEXIST);
}

/* An events-ring record of `size` bytes, with room after it for the stamp (events.h). */
static __always_inline void *rec_reserve(__u64 size)
{
	return bpf_ringbuf_reserve(&events, size + cfg_stamp_cpus * sizeof(__u32), 0);
}

static __always_inline __u64 rec_bytes(__u64 size)
{
	return size + cfg_stamp_cpus * sizeof(__u32);
}

/* Stamps the record with every CPU's fault-ring head, then submits it.  The heads are read
 * after the reservation: a record reserved after the engine found the ring empty carries
 * heads no lower than those the engine read before looking (user/kernel/fring.c). */
static __always_inline void rec_submit(void *rec, __u64 size, __u64 flags)
{
	__u32 *heads = (__u32 *)((char *)rec + size);

	for (__u32 i = 0; i < FRING_MAX_CPUS; i++) {
		struct fring_pos *p;
		__u32 key = i;

		if (i >= cfg_stamp_cpus)
			break;
		p = bpf_map_lookup_elem(&fring_pos, &key);
		heads[i] = p ? (__u32)*(volatile __u64 *)&p->head : 0;
	}
	bpf_ringbuf_submit(rec, flags);
}

/*
 * A wake-up per record costs more than the record (FACTS: 2.5x slowdown vs 1.065x): the
 * consumer polls on a timer, and is woken only by the record that makes the backlog cross
 * cfg_wakeup_bytes -- once, not by every record after it (a stalled consumer would otherwise
 * be sent a wake-up per fault until the buffer fills).  Two CPUs crossing at once may both
 * wake it, or a race may skip it; the timer covers both.  Call after reserving `size`.
 */
static __always_inline __u64 wakeup_flag(__u64 size)
{
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);

	size += 8;	/* the record header */
	if (avail >= cfg_wakeup_bytes && avail - size < cfg_wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

#endif /* MEVITOP_COMMON_BPF_H */
