// SPDX-License-Identifier: GPL-2.0
/* The one definition of the maps and configuration every object shares (see maps.bpf.h). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define MEVITOP_MAPS_OWNER
#include "maps.bpf.h"

const volatile __u32 cfg_filter = 0;
const volatile __u32 cfg_self_tgid = 0;
const volatile __u32 cfg_sample = 0;
const volatile __u64 cfg_wakeup_bytes = 1 << 20;
const volatile __u32 cfg_follow_children = 1;
const volatile __u32 cfg_all_proc_events = 0;
const volatile __u32 cfg_stacks = 0;
const volatile __u64 cfg_stack_interval_ns = 1000000000ULL;
const volatile __u32 cfg_stacks_only = 0;
const volatile __u32 cfg_fring_slots = 0;
const volatile __u32 cfg_stamp_cpus = 0;

char LICENSE[] SEC("license") = "GPL";
