/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The syscalls that change which pages of an address space are mapped or resident.  Shared by
 * the BPF side (filtering) and the engine (decoding).
 */
#ifndef MEVITOP_SYSCALLS_H
#define MEVITOP_SYSCALLS_H

/*
 * The numbers are the architecture's: vmlinux/ARCH/syscalls.h, beside its vmlinux.h.  The BPF
 * objects are built for the Makefile's ARCH (-D__TARGET_ARCH_$(ARCH)); the user side, which
 * decodes the numbers, for the machine its compiler targets.
 */
#if defined(__bpf__) ? defined(__TARGET_ARCH_x86) : defined(__x86_64__)
#include "../vmlinux/x86/syscalls.h"
#elif defined(__bpf__) ? defined(__TARGET_ARCH_arm64) : defined(__aarch64__)
#include "../vmlinux/arm64/syscalls.h"
#else
#error "no syscall table for this architecture: add vmlinux/ARCH/syscalls.h (see vmlinux/x86/)"
#endif

/* X-macro over the names, for per-syscall tracepoint programs. */
#define MEVITOP_SYSCALL_LIST(X)						\
	X(mmap) X(mprotect) X(munmap) X(brk) X(mremap) X(madvise)	\
	X(shmat) X(shmdt) X(mlock) X(mlockall) X(remap_file_pages)	\
	X(mlock2) X(pkey_mprotect) X(process_madvise)

#define MEVITOP_SYSCALL_COUNT 14

/* For `switch (nr) { case MEVITOP_SYSCALL_CASES: ... }`. */
#define MEVITOP_SYSCALL_CASES						\
	SYS_MMAP: case SYS_MPROTECT: case SYS_MUNMAP: case SYS_BRK:	\
	case SYS_MREMAP: case SYS_MADVISE: case SYS_SHMAT:		\
	case SYS_SHMDT: case SYS_MLOCK: case SYS_MLOCKALL:		\
	case SYS_REMAP_FILE_PAGES: case SYS_MLOCK2:			\
	case SYS_PKEY_MPROTECT: case SYS_PROCESS_MADVISE

#endif /* MEVITOP_SYSCALLS_H */
