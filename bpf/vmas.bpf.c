// SPDX-License-Identifier: GPL-2.0
/*
 * The start's VMA pass: an iterator over every process's mappings (iter/task_vma) that
 * writes one struct vma_rec (vmas.h) per mapping, so the first snapshot reads every layout
 * in one read() loop (~34 ms for 5,000 processes and 120,000 mappings here) where it
 * opened and parsed /proc/PID/maps per process (~250 ms of system time).
 *
 * Names are keys, not text: bpf_d_path() wants a trusted struct path, and 6.18's verifier
 * holds vma->vm_file untrusted.  A file's name is the same for every mapping of the same
 * (mount, dentry), and a special mapping's for the same vm_special_mapping, so the reader
 * resolves each key once.  The tests hold every pass against PROCMAP_QUERY.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "vmas.h"

char LICENSE[] SEC("license") = "GPL";

#define VM_READ_	0x1
#define VM_WRITE_	0x2
#define VM_EXEC_	0x4
#define VM_MAYSHARE_	0x80

/* Where vm_area_struct keeps CONFIG_ANON_VMA_NAME's anon_name, or 0 (kfeatures.c finds it
 * in the kernel's BTF: a CO-RE relocation of a field this kernel lacks cost the start
 * ~10 ms of libbpf's load here, measured; this box has no module BTF). */
const volatile __u32 cfg_anon_name_off = 0;

static __always_inline bool has_anon_name(struct vm_area_struct *vma)
{
	void *name = NULL;

	if (!cfg_anon_name_off)
		return false;
	bpf_probe_read_kernel(&name, sizeof(name), (char *)vma + cfg_anon_name_off);
	return name != NULL;
}

SEC("iter/task_vma")
int dump_vmas(struct bpf_iter__task_vma *ctx)
{
	struct vm_area_struct *vma = ctx->vma;
	struct task_struct *task = ctx->task;
	const struct vm_operations_struct *ops;
	struct vma_rec r = {};
	struct file *f;
	__u64 flags;

	if (!vma || !task)
		return 0;
	r.tgid = task->tgid;
	r.tid = task->pid;
	if (r.tgid != r.tid)
		return 0;	/* a thread with its own files table: the leader wrote them */
	r.start = BPF_CORE_READ(vma, vm_start);
	r.end = BPF_CORE_READ(vma, vm_end);
	flags = BPF_CORE_READ(vma, vm_flags);
	r.perms = (flags & VM_READ_ ? VR_READ : 0) | (flags & VM_WRITE_ ? VR_WRITE : 0) |
		  (flags & VM_EXEC_ ? VR_EXEC : 0) | (flags & VM_MAYSHARE_ ? VR_SHARED : 0);
	f = BPF_CORE_READ(vma, vm_file);
	ops = BPF_CORE_READ(vma, vm_ops);
	/* get_vma_name()'s order (fs/proc/task_mmu.c): a file (or a named anonymous shmem
	 * mapping), vm_ops->name, then heap, stack, then an anonymous name. */
	if (has_anon_name(vma)) {
		r.cls = VC_OTHER;
	} else if (f) {
		struct inode *ino = BPF_CORE_READ(f, f_inode);

		r.cls = VC_FILE;
		r.pgoff = BPF_CORE_READ(vma, vm_pgoff);
		r.ino = BPF_CORE_READ(ino, i_ino);
		r.dev = BPF_CORE_READ(ino, i_sb, s_dev);
		r.key[0] = (__u64)BPF_CORE_READ(f, f_path.mnt);
		r.key[1] = (__u64)BPF_CORE_READ(f, f_path.dentry);
	} else if (ops && BPF_CORE_READ(ops, name)) {
		r.cls = VC_SPECIAL;
		r.key[0] = (__u64)BPF_CORE_READ(vma, vm_private_data);
		r.key[1] = (__u64)ops;
	} else {
		struct mm_struct *mm = BPF_CORE_READ(vma, vm_mm);
		__u64 brk = BPF_CORE_READ(mm, brk), start_brk = BPF_CORE_READ(mm, start_brk);
		__u64 stack = BPF_CORE_READ(mm, start_stack);

		if (!mm)
			r.cls = VC_OTHER;	/* get_vma_name() says "[vdso]": not seen */
		else if (r.start <= brk && r.end >= start_brk)
			r.cls = VC_HEAP;
		else if (r.start <= stack && r.end >= stack)
			r.cls = VC_STACK;
	}
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}
