/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records and map values shared by the BPF programs and the user-space engine.
 *
 * Rules (libbpf-tools style): fixed-width fields only, no pointers, explicit padding, and the
 * kind tag first because one ring buffer carries every kind.  User space includes
 * <linux/types.h> before this header; BPF code gets the types from vmlinux.h.
 */
#ifndef MEVITOP_EVENTS_H
#define MEVITOP_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MEVITOP_COMM_LEN 16

enum ev_kind {
	EV_FAULT = 1,	/* a page fault on a user address (user or kernel mode) */
	EV_SYSCALL = 2,	/* an mm syscall returned: mmap, munmap, mremap, madvise, brk, ... */
	EV_FORK = 3,	/* a new process (not a thread) */
	EV_EXEC = 4,	/* a process replaced its image */
	EV_EXIT = 5,	/* the last thread of a process exited */
	EV_STACK = 6,	/* --stacks: the user stack of a fault that opened a 2 MiB chunk */
	EV_KIND_MAX = 7,
};

/* ev_fault.flags: the x86 error-code bits we care about, translated so user space does not
 * depend on the architecture's encoding. */
enum ev_fault_flags {
	EVF_WRITE = 1 << 0,	/* write access */
	EVF_PRESENT = 1 << 1,	/* protection fault on a present PTE (COW, mprotect): no new page */
	EVF_INSTR = 1 << 2,	/* instruction fetch */
	EVF_KERNEL = 1 << 3,	/* taken in kernel mode on a user address (copy_to_user & co) */
};

struct ev_fault {
	__u8 kind;		/* EV_FAULT */
	__u8 flags;		/* enum ev_fault_flags */
	__u16 cpu;		/* 0: not filled on the fault path */
	__u32 tgid;
	__u32 tid;
	__u32 _pad;
	__u64 addr;
};

struct ev_syscall {
	__u8 kind;		/* EV_SYSCALL */
	__u8 _pad0;
	__u16 cpu;
	__u32 tgid;
	__u32 tid;
	__u32 nr;		/* x86_64 syscall number */
	__s64 ret;
	__u64 args[6];
	__u64 ts;		/* bpf_ktime_get_ns() at exit */
};

/* ev_proc.flags */
enum ev_proc_flags {
	EVP_SHARED_MM = 1 << 0,	/* EV_FORK: child shares the parent's mm (vfork, CLONE_VM) */
	EVP_MAYBE_THREAD = 1 << 1,	/* EV_FORK from the classic tracepoint: may be a thread */
};

struct ev_proc {
	__u8 kind;		/* EV_FORK, EV_EXEC, EV_EXIT */
	__u8 flags;		/* enum ev_proc_flags */
	__u16 cpu;
	__u32 tgid;		/* the process the event is about (the child for EV_FORK) */
	__u32 tid;
	__u32 ptgid;		/* EV_FORK: the parent process */
	char comm[MEVITOP_COMM_LEN];
	__u64 ts;
};

/*
 * Trace mode's user-mode faults: one ring per CPU instead of the shared events ring, whose
 * reserve and submit (a lock, interrupts off, the header's atomic exchange) cost ~21 ns of a
 * ~1.3 us fault here against ~4 ns for a store into a per-CPU slot (doc/overhead.md).
 * The ring of CPU c is entries [c * slots, (c + 1) * slots) of one mmapable array; its
 * producer position is fring_pos[c].head (written only by CPU c, read by every hook that
 * stamps an events record) and its consumer position fring_pos[c].tail (written only by
 * the engine), a cache line apart.
 *
 * Order: every record of the events ring carries, after its own fields, the low 32 bits of
 * each CPU's head, read after its reservation (a "stamp").  The engine applies the faults
 * of CPU c below that head before the record, the rest after it: the same order as if each
 * fault had been reserved in the events ring when its head was published.
 *
 * A record is 8 bytes, eight to a cache line (each line the faulting CPU writes is one the
 * engine read last time round: the fewer lines a fault dirties, the less it waits for them).
 * A fault: its address's page, with the flags (enum ev_fault_flags) in the low bits.  The
 * process is said once for a run of its faults: a marker record (FR_MARK) with the tgid in
 * the high 32 bits comes before the first fault of every run.
 */
typedef __u64 fault_rec;
#define FR_MARK		(1ULL << 11)
#define FR_FLAGS	0xfULL

struct fring_pos {
	__u64 head;		/* records written by the CPU */
	__u32 last_tgid;	/* whose faults the records after the last marker are */
	__u32 _pad0[13];
	__u64 tail;		/* records taken by the engine */
	__u64 _pad1[7];
};

#define FRING_MAX_CPUS 4096	/* the stamp loop's bound; more CPUs: the events ring */

/* Per-mm rss counters, kept in a map (never streamed): the engine compares them with its model
 * to notice changes no event explains (reclaim, swap-out, khugepaged, GUP). Indexed like the
 * kernel's MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS, MM_SHMEMPAGES. */
#define MEVITOP_NR_RSS 4
#define RSS_SLOTS 16384			/* power of two */
struct rss_val {
	__u32 tgid;			/* the last writer of this slot */
	__u32 updates;			/* bumped at every rss_stat hit: "something changed" */
	__s64 count[MEVITOP_NR_RSS];	/* pages, as the kernel's approximate counters say */
};

/* The target bitmap covers pids below TARGET_WORDS * 64; the loader resizes it from
 * /proc/sys/kernel/pid_max. */
#define TARGET_WORDS_DEFAULT 65536	/* pid_max 4194304 */

/* Per-CPU drop counters index: one per event kind (failed ring-buffer reservations). */
#define MEVITOP_LOST_SLOTS EV_KIND_MAX

/* Map bounds hit: chunk map, syscall stash, rss map, target map (per-CPU counters). */
enum { OVF_CHUNKS, OVF_SYSCALL_STASH, OVF_RSS, OVF_TARGETS, OVF_SLOTS };


/* Sample mode: faults aggregated per (process, 2 MiB chunk) instead of streamed. */
#define MEVITOP_CHUNK_SHIFT 21
struct chunk_key {
	__u32 tgid;
	__u32 _pad;
	__u64 chunk;		/* address >> MEVITOP_CHUNK_SHIFT */
};

struct chunk_val {
	__u64 faults;
};

/* A CPU's current chunk, not yet added to the chunk map. */
struct chunk_slot {
	__u32 tgid;
	__u32 _pad;
	__u64 chunk;
	__u64 faults;
};

/*
 * --stacks (bpf/stacks.bpf.h): at most one user stack per (process, 2 MiB chunk) per
 * cfg_stack_interval_ns.  frames[0] is the faulting instruction; the rest are return
 * addresses found by walking the frame-pointer chain (the kernel's perf unwinder), which
 * user space validates before it trusts them.  The record is fixed-size: one reservation.
 */
#define MEVITOP_STACK_DEPTH 32
struct ev_stack {
	__u8 kind;		/* EV_STACK */
	__u8 flags;		/* enum ev_fault_flags of the fault */
	__u16 nframes;		/* 0: the stack could not be read */
	__u32 tgid;
	__u32 tid;
	__u32 _pad;
	__u64 addr;		/* the faulting address */
	__u64 ts;		/* bpf_ktime_get_ns() (CLOCK_MONOTONIC) */
	__u64 top;		/* the word at the user %rsp: in a leaf function that set up no
				 * frame, its return address (0 if unreadable) */
	__u64 frames[MEVITOP_STACK_DEPTH];
};

/* The per-chunk rate limiter's key (an LRU hash; the value is the last sample's time). */
struct stack_chunk_key {
	__u32 tgid;
	__u32 _pad;
	__u64 chunk;		/* address >> MEVITOP_CHUNK_SHIFT */
};

/* A CPU's last sampled chunk: faults come in runs on one chunk, so most are turned away
 * here without a hash lookup. */
struct stack_slot {
	__u32 tgid;
	__u32 skip;		/* faults on this chunk to turn away before reading the clock */
	__u64 chunk;
	__u64 ts;
	__u32 walking;		/* 1 while this CPU's stack_sample reads the user stack */
	__u32 _pad;
};

#endif /* MEVITOP_EVENTS_H */
