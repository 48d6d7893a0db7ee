/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What this kernel offers, probed once at start-up, and which attach point each hook uses.
 * Every fallback can be forced with --disable FEATURE (or MEVITOP_DISABLE=a,b) so the tests
 * cover it on a kernel that has the fast path.
 */
#ifndef MEVITOP_KFEATURES_H
#define MEVITOP_KFEATURES_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel/uffd_caps.h"

/* Switches that turn a feature off even when the kernel has it. */
enum feat_disable {
	DIS_TP_BTF = 1 << 0,		/* "tp_btf": no BTF-typed tracepoints */
	DIS_TRACEFS = 1 << 1,		/* "tracefs": no classic tracepoints (and no mounting) */
	DIS_SYSCALL_TP = 1 << 2,	/* "syscall_tp": no per-syscall tracepoints */
	DIS_PAGEMAP_SCAN = 1 << 3,	/* "pagemap_scan": read pagemap entries instead */
	DIS_KERNEL_FAULTS = 1 << 4,	/* "kernel_faults": ignore faults taken in kernel mode */
	DIS_RSS = 1 << 5,		/* "rss": no rss_stat hook */
	DIS_FENTRY = 1 << 6,		/* "fentry" */
	DIS_KPROBE = 1 << 7,		/* "kprobe" */
	DIS_SMAPS = 1 << 8,		/* "smaps": don't read VmFlags for THP eligibility */
	DIS_BTF = 1 << 9,		/* "btf": behave as on a kernel without BTF */
	DIS_UFFD = 1 << 10,		/* "uffd": behave as if userfaultfd were unavailable */
	DIS_MMAP_LOCK = 1 << 11,	/* "mmap_lock": layout changes from the syscall hooks */
	DIS_PROCMAP_QUERY = 1 << 12,	/* "procmap_query": parse /proc/PID/maps text */
	DIS_UFFD_SYSCALL = 1 << 13,	/* "uffd_syscall": no userfaultfd() in targets */
	DIS_UFFD_DEV = 1 << 14,		/* "uffd_dev": no /dev/userfaultfd handoff */
	DIS_SECCOMP_SUSPEND = 1 << 15,	/* "seccomp_suspend": prove the injected calls instead */
	DIS_TASK_ITER = 1 << 16,	/* "task_iter": read /proc/PID/stat per process per refresh */
	DIS_FCACHE_BPF = 1 << 17,	/* "fcache_bpf": files from /proc/PID/fd and maps only */
	DIS_KPAGECOUNT = 1 << 18,	/* "kpagecount": no PFNs or map counts (--sharing off) */
	DIS_OBSERVER = 1 << 19,		/* "observer": --sharing counts mevitop's own mappings */
	DIS_DETACH_CHILD = 1 << 20,	/* "detach_child": perf events' last close at exit */
	DIS_DIRTY_TP = 1 << 21,		/* "dirty_tp": no writeback_dirty_folio hook */
	DIS_MAPS_TEXT = 1 << 22,	/* "maps_text": layouts by PROCMAP_QUERY only */
	DIS_FAULT_RINGS = 1 << 23,	/* "fault_rings": trace mode's faults in the events ring */
	DIS_MEMINFO_ANON = 1 << 24,	/* "meminfo_anon": the whole system's anon summed from
					 * every process's smaps_rollup */
	DIS_VMA_PASS = 1 << 25,		/* "vma_pass": the start reads each layout from /proc */
};

enum hook {
	HOOK_FAULT,		/* user page faults */
	HOOK_KFAULT,		/* kernel-mode faults on user addresses */
	HOOK_SYSCALLS,		/* mmap, munmap, mremap, madvise, brk, ... */
	HOOK_FORK,
	HOOK_EXEC,
	HOOK_EXIT,
	HOOK_RSS,		/* kmem:rss_stat */
	HOOK_LAYOUT,		/* mmap_lock released for writing: the layout changed (sample and
				 * chunk modes use it instead of the syscall hooks) */
	HOOK_COUNT,
};

enum attach {
	AT_NONE,		/* unavailable */
	AT_TP_BTF,		/* tp_btf/<event> */
	AT_TP,			/* tp/<category>/<event> through tracefs */
	AT_TP_PER_SYSCALL,	/* tp/syscalls/sys_exit_<name> */
	AT_TP_BTF_RAW_SYSCALLS,	/* tp_btf/sys_exit, filtered by number */
	AT_TP_RAW_SYSCALLS,	/* tp/raw_syscalls/sys_exit */
	AT_FENTRY,		/* fentry/handle_mm_fault */
	AT_KPROBE,		/* kprobe/handle_mm_fault */
	AT_COVERED,		/* handled by another hook's program (handle_mm_fault sees both) */
	AT_TP_BTF_MMAP_LOCK,	/* tp_btf/mmap_lock_released, write releases only */
};

enum thp_mode { THP_NEVER, THP_MADVISE, THP_ALWAYS };

struct features {
	uint32_t disabled;		/* enum feat_disable */
	bool root;
	bool btf;			/* /sys/kernel/btf/vmlinux */
	bool ringbuf;
	bool tp_btf;			/* a tp_btf program loads */
	bool tracefs;			/* mounted (perhaps by us) */
	bool tracefs_mounted_by_us;
	char tracefs_path[64];
	bool kprobes;			/* kprobe PMU present */
	bool fentry;			/* an fentry program loads */
	bool pagemap_scan;
	bool procmap_query;		/* PROCMAP_QUERY ioctl on /proc/PID/maps (6.11+) */
	bool task_iter;			/* iter/task and what bpf/tasks.bpf.c needs (5.19+): one
					 * pass per refresh */
	bool vma_iter;			/* iter/task_vma (5.12+): the start's VMA pass */
	uint32_t vma_anon_name_off;	/* vm_area_struct's anon_name, in bytes; 0: none
					 * (CONFIG_ANON_VMA_NAME off, as on this box's 6.18) */
	bool cachestat;			/* cachestat(2) (6.5+) */
	bool kpagecount;		/* PFNs in pagemap and /proc/kpagecount (--sharing) */
	bool filemap_tp;		/* tp_btf filemap add/delete: per-file page cache counts */
	bool dirty_tp;			/* tp_btf writeback_dirty_folio: cached pages made dirty */
	bool fcache_walk;		/* the page cache walk can be driven (tp_btf/task_rename) */
	bool fault_rings;		/* trace mode's user-mode faults in per-CPU rings: the
					 * x86 exceptions tracepoints (bpf/events.h) */
	bool btf_raw_syscalls;		/* tp_btf/sys_exit usable (a second choice for syscalls) */
	bool uffd;			/* some way gives targets a userfaultfd */
	uint64_t uffd_features;
	int uffd_errno;
	bool seccomp_suspend;		/* PTRACE_O_SUSPEND_SECCOMP works (kernel/seccomp_probe.h) */
	int seccomp_suspend_errno;
	struct uffd_caps uffd_ways;	/* which ways (kernel/uffd_caps.h), WP registration */
	enum thp_mode thp;
	uint64_t thp_sizes_kb_mask;	/* enabled mTHP sizes, bit n = 2^n KiB */
	uint64_t fault_around_bytes;
	enum attach hook[HOOK_COUNT];
};

/* Parses "tp_btf,pagemap_scan" ('-' reads as '_'); returns -EINVAL (and names the bad
 * word) on error. */
int kfeatures_parse_disable(const char *list, uint32_t *mask);
const char *kfeatures_disable_names(void);

/* Probes everything and chooses the attach point of each hook.  Mounts tracefs when a chosen
 * hook needs it and it is not disabled.  Returns 0 or -errno with *why filled. */
int kfeatures_probe(struct features *f, char *why, size_t whylen);

/* Prints the feature table and the chosen hooks (for --probe); json selects NDJSON. */
void kfeatures_print(const struct features *f, bool json);

const char *kfeatures_attach_name(enum attach a);

#endif
