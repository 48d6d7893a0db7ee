/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Maps and configuration shared by every mevitop BPF object.  maps.bpf.c defines them (it sets
 * MEVITOP_MAPS_OWNER); every other object sees `extern` declarations, and bpftool's static
 * linker resolves them into one skeleton: one ring buffer, one target set for all hooks.
 */
#ifndef MEVITOP_MAPS_BPF_H
#define MEVITOP_MAPS_BPF_H

#include "events.h"

#ifdef MEVITOP_MAPS_OWNER
#define MEVITOP_SHARED
#else
#define MEVITOP_SHARED extern
#endif

/* Configuration, set by the loader between open and load so the verifier can fold it. */
MEVITOP_SHARED const volatile __u32 cfg_filter;		/* 1: only tgids in `targets` */
MEVITOP_SHARED const volatile __u32 cfg_self_tgid;	/* never report mevitop itself */
MEVITOP_SHARED const volatile __u32 cfg_sample;		/* 1: aggregate faults in `chunks` */
MEVITOP_SHARED const volatile __u64 cfg_wakeup_bytes;	/* wake the consumer past this backlog */
MEVITOP_SHARED const volatile __u32 cfg_follow_children; /* children of targets become targets */
MEVITOP_SHARED const volatile __u32 cfg_all_proc_events; /* fork/exec/exit of every process */
MEVITOP_SHARED const volatile __u32 cfg_stacks;		/* --stacks: user stacks at faults */
MEVITOP_SHARED const volatile __u64 cfg_stack_interval_ns; /* one stack per chunk this often */
/* Exact mode's --stacks: the fault hooks send a stack for every fault and nothing else (the
 * userfaultfd says which faults were first touches; user space joins the two). */
MEVITOP_SHARED const volatile __u32 cfg_stacks_only;
/* Trace mode: user-mode faults go to per-CPU rings of this many records (a power of two;
 * 0: the events ring), and every events record ends with a stamp of this many CPUs' heads
 * (events.h). */
MEVITOP_SHARED const volatile __u32 cfg_fring_slots;
MEVITOP_SHARED const volatile __u32 cfg_stamp_cpus;

/* Every event kind, in order.  Size is set by the loader. */
MEVITOP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* Watched processes, one bit per pid (word tgid / 64, bit tgid % 64); ignored unless
 * cfg_filter.  An array, so the per-fault lookup is inlined by the verifier: no hashing on
 * the fault path.  The loader sizes it from pid_max and mmaps it to set bits atomically. */
MEVITOP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TARGET_WORDS_DEFAULT);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} targets SEC(".maps");

/* The per-CPU fault rings and their positions (events.h); sized by the loader, mmapped by
 * the engine. */
MEVITOP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, fault_rec);
} fring SEC(".maps");

MEVITOP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct fring_pos);
} fring_pos SEC(".maps");

/* Failed reservations, per CPU and per event kind. */
MEVITOP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MEVITOP_LOST_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* Which processes lost events, so the engine rescans exactly those. */
MEVITOP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} lost_tgid SEC(".maps");

/* Latest rss counters, slot tgid % RSS_SLOTS (the slot records which tgid wrote last; a
 * collision only costs a spurious rescan).  An mmapable array: the engine reads it without
 * a syscall per process. */
MEVITOP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RSS_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rss_val);
} rss SEC(".maps");

/* Sample mode: faults per (process, 2 MiB chunk) since the engine last drained the map. */
MEVITOP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct chunk_key);
	__type(value, struct chunk_val);
} chunks SEC(".maps");

/* Sample mode: each CPU's current chunk (see faults.bpf.c). */
MEVITOP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct chunk_slot);
} chunk_slot SEC(".maps");

/* Map overflows (a bound was hit), indexed by OVF_* (events.h; OVF_SYSCALL_STASH is no longer
 * used: syscall arguments come from the saved registers at exit). */
MEVITOP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OVF_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} overflow SEC(".maps");

/* --stacks: when each (process, chunk) last had its stack taken (bpf/stacks.bpf.h). */
MEVITOP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct stack_chunk_key);
	__type(value, __u64);
} stack_chunks SEC(".maps");

MEVITOP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_slot);
} stack_slot SEC(".maps");

#endif /* MEVITOP_MAPS_BPF_H */
