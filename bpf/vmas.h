/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One record per mapping from the start's VMA pass (bpf/vmas.bpf.c): every process's
 * layout in one read() loop instead of one /proc/PID/maps open and text per process
 * (issue 24).  Fixed-width fields, explicit padding (events.h's rules).
 *
 * What each field equals, so a record and /proc/PID/maps agree exactly:
 *   start, end   vm_start, vm_end (show_map_vma prints them as they are since 6.1)
 *   pgoff        vm_pgoff (pages); the text's offset is pgoff * PAGE_SIZE for a file, 0
 *                otherwise
 *   perms        VR_*: VM_READ, VM_WRITE, VM_EXEC, and VM_MAYSHARE for 's'
 *   ino, dev     the mapped file's inode (f_inode) and its superblock's s_dev (the
 *                kernel's encoding: major << 20 | minor); 0 without a file
 *   cls, key     what names the mapping (VC_*); the name itself is not here (6.18's
 *                verifier refuses bpf_d_path on vma->vm_file, an untrusted pointer): the
 *                reader asks PROCMAP_QUERY once per distinct key and checks its answer
 * Only thread-group leaders write records (the iterator visits one task per files table).
 */
#ifndef MEVITOP_VMAS_H
#define MEVITOP_VMAS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum vma_class {
	VC_ANON = 0,	/* no name */
	VC_HEAP,	/* "[heap]": vma_is_initial_heap() */
	VC_STACK,	/* "[stack]": vma_is_initial_stack() */
	VC_FILE,	/* key: f_path's mnt and dentry (one name for every mapping of both) */
	VC_SPECIAL,	/* vm_ops->name (a special mapping: [vdso], [vvar]...); key:
			 * vm_private_data and vm_ops (the name depends on those only) */
	VC_OTHER,	/* a name the pass cannot key (prctl(PR_SET_VMA_ANON_NAME)): the
			 * process's layout is read from /proc instead */
};

#define VR_READ		1u
#define VR_WRITE	2u
#define VR_EXEC		4u
#define VR_SHARED	8u

struct vma_rec {
	__u32 tgid;
	__u32 tid;
	__u64 start;
	__u64 end;
	__u64 pgoff;
	__u64 ino;
	__u32 dev;
	__u16 perms;
	__u16 cls;
	__u64 key[2];
};

#endif
