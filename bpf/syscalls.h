/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The syscalls that change which pages of an address space are mapped or resident, with their
 * x86_64 numbers (arch/x86/entry/syscalls/syscall_64.tbl).  Shared by the BPF side (filtering)
 * and the engine (decoding).  32-bit compat syscalls are not followed.
 */
#ifndef MEVITOP_SYSCALLS_H
#define MEVITOP_SYSCALLS_H

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
