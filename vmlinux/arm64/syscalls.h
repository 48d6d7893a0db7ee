/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's syscall ABI for mevitop (bpf/syscalls.h picks this one).  The user side's decoding
 * (engine/rules.c) compiles against it in `make cross-check`; the BPF side needs this
 * folder's vmlinux.h too, which is not here yet (`make vmlinux` on an arm64 machine), so
 * the Makefile stops an arm64 build with one line until it is.
 *
 * The numbers: include/uapi/asm-generic/unistd.h (arm64 uses the generic table).
 */
#ifndef MEVITOP_ARCH_SYSCALLS_H
#define MEVITOP_ARCH_SYSCALLS_H

#define SYS_SHMAT		196
#define SYS_SHMDT		197
#define SYS_BRK			214
#define SYS_MUNMAP		215
#define SYS_MREMAP		216
#define SYS_MMAP		222
#define SYS_MPROTECT		226
#define SYS_MLOCK		228
#define SYS_MLOCKALL		230
#define SYS_MADVISE		233
#define SYS_REMAP_FILE_PAGES	234
#define SYS_MLOCK2		284
#define SYS_PKEY_MPROTECT	288
#define SYS_PROCESS_MADVISE	440

#ifdef __bpf__
#include <bpf/bpf_tracing.h>
/* The syscall number at exit: arm64 keeps it in pt_regs.syscallno (x0 holds the return
 * value by then).  The sixth argument is x5.  Untested until an arm64 machine builds it. */
#define MEVITOP_SYSCALL_NR_CORE(regs)	BPF_CORE_READ((regs), syscallno)
#ifndef PT_REGS_PARM6_CORE_SYSCALL
#define PT_REGS_PARM6_CORE_SYSCALL(regs) BPF_CORE_READ((regs), regs[5])
#endif
#endif /* __bpf__ */

#endif /* MEVITOP_ARCH_SYSCALLS_H */
