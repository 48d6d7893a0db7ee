/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86_64's syscall ABI for mevitop, beside this architecture's vmlinux.h (a port adds
 * vmlinux/ARCH/ with both files; bpf/syscalls.h picks this one).
 *
 * The numbers: arch/x86/entry/syscalls/syscall_64.tbl.  32-bit compat syscalls are not
 * followed.
 */
#ifndef MEVITOP_ARCH_SYSCALLS_H
#define MEVITOP_ARCH_SYSCALLS_H

#define SYS_MMAP		9
#define SYS_MPROTECT		10
#define SYS_MUNMAP		11
#define SYS_BRK			12
#define SYS_MREMAP		25
#define SYS_MADVISE		28
#define SYS_SHMAT		30
#define SYS_SHMDT		67
#define SYS_MLOCK		149
#define SYS_MLOCKALL		151
#define SYS_REMAP_FILE_PAGES	216
#define SYS_MLOCK2		325
#define SYS_PKEY_MPROTECT	329
#define SYS_PROCESS_MADVISE	440

#ifdef __bpf__
#include <bpf/bpf_tracing.h>
/*
 * What bpf_tracing.h does not say in libbpf 1.1 (Debian 12): the syscall number at exit
 * (orig_ax: ax holds the return value by then) and the sixth argument (r9; newer libbpf
 * defines PT_REGS_PARM6_CORE_SYSCALL itself).  Both read the task's saved user registers.
 */
#define MEVITOP_SYSCALL_NR_CORE(regs)	BPF_CORE_READ((regs), orig_ax)
#ifndef PT_REGS_PARM6_CORE_SYSCALL
#define PT_REGS_PARM6_CORE_SYSCALL(regs) BPF_CORE_READ((regs), r9)
#endif
#endif /* __bpf__ */

#endif /* MEVITOP_ARCH_SYSCALLS_H */
