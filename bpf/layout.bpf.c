// SPDX-License-Identifier: GPL-2.0
/*
 * Layout changes without syscall hooks (sample and chunk modes).  Every change of an address
 * space's layout -- mmap, munmap, mremap, mprotect, brk, mlock, shmat, a stack growing,
 * khugepaged's collapse, process_madvise from another process -- takes the mm's mmap_lock
 * for writing, and mmap_lock:mmap_lock_released fires when it is let go.  The program marks
 * the mm's owner "layout changed" in a bitmap the engine reads once per refresh: no
 * ring-buffer record and no wake-up, and unlike any syscall tracepoint it does not set the
 * syscall-trace flag on every task (which sends every syscall of every process down the
 * kernel's slow path).  Read-side releases (page faults that fall back from the per-VMA lock,
 * /proc readers, GUP) return at the first test.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "common.bpf.h"

/* One bit per pid (word tgid / 64, bit tgid % 64), sized and mmapped by the loader like
 * `targets`; the engine swaps each non-zero word with 0 at its refresh. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TARGET_WORDS_DEFAULT);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} layout_dirty SEC(".maps");

/* Write-lock releases whose owner could not be named (see owner_tgid), per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} layout_unowned SEC(".maps");

/*
 * The process whose address space this is.  mm->owner (CONFIG_MEMCG) names it whoever took
 * the lock: khugepaged, or a process_madvise()/process_vm_* caller working on another mm.
 * Without it, only current's own mm can be named; a release by a kernel thread or another
 * process is counted in layout_unowned, and such changes are still seen by the engine's
 * /proc/PID/stat poll (the size or rss moves) or at the periodic reconciliation.
 */
static __always_inline __u32 owner_tgid(struct mm_struct *mm)
{
	struct task_struct *cur = bpf_get_current_task_btf();

	if (bpf_core_field_exists(mm->owner)) {
		struct task_struct *owner = BPF_CORE_READ(mm, owner);

		if (owner)
			return BPF_CORE_READ(owner, tgid);
	}
	if (BPF_CORE_READ(cur, mm) == mm)
		return bpf_get_current_pid_tgid() >> 32;
	return 0;
}

SEC("tp_btf/mmap_lock_released")
int BPF_PROG(btf_mmap_lock_released, struct mm_struct *mm, bool write)
{
	__u32 tgid, word;
	__u64 *w, bit;

	if (!write)
		return 0;
	tgid = owner_tgid(mm);
	if (!tgid) {
		/* exit_mmap() of a process that is gone (no owner, no user left) is no one's
		 * news: its exit record says it all. */
		if (BPF_CORE_READ(mm, mm_users.counter))
			bump_percpu(&layout_unowned, 0);
		return 0;
	}
	if (!watched(tgid))
		return 0;
	word = tgid >> 6;
	bit = 1ULL << (tgid & 63);
	w = bpf_map_lookup_elem(&layout_dirty, &word);
	if (!w) {
		bump_percpu(&overflow, OVF_TARGETS);
		return 0;
	}
	/* A JIT or an allocator may take the lock thousands of times a second: a plain read
	 * first keeps the cache line shared until the engine clears the bit. */
	if (!(*w & bit))
		__sync_fetch_and_or(w, bit);
	return 0;
}
