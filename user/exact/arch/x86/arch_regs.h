/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arch_regs.h (x86-64) - the types and constants exact/arch.h's interface is written in:
 * a thread's registers, its full CPU state, and the sizes the generic code allocates.
 * Only exact/arch.h includes it (the Makefile puts user/exact/arch/$(ARCH) on the path).
 */
#ifndef MEVITOP_ARCH_REGS_H
#define MEVITOP_ARCH_REGS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>
#include <linux/audit.h>

#define ARCH_NAME	"x86-64"
/* seccomp_data.arch of a native call (the guard runs the filters on it). */
#define ARCH_AUDIT	AUDIT_ARCH_X86_64

typedef struct user_regs_struct arch_regs_t;

#define ARCH_XSAVE_MAX	16384	/* AMX tiles need ~11 KiB */
#define ARCH_FRAME_MAX	(1024 + ARCH_XSAVE_MAX)	/* >= arch_frame_size(ARCH_XSAVE_MAX) */
/* A frame without FPU state (arch_frame_build_bare). */
#define ARCH_FRAME_BARE	448

/* Everything rt_sigreturn restores: registers, signal mask, FPU/SSE/AVX state. */
struct arch_cpu {
	arch_regs_t regs;
	uint64_t mask;
	uint8_t xsave[ARCH_XSAVE_MAX];	/* NT_X86_XSTATE image */
	size_t xsize;		/* the part a signal frame carries (arch_cpu_get) */
};

#define ARCH_RESTORER_MAX	9	/* the restorer's bytes (`mov $15,%rax; syscall`) */
#define ARCH_RED_ZONE	128	/* the System V ABI lets leaf code use 128 bytes below rsp */
#define ARCH_SYSCALL_LEN	2	/* `syscall` (0f 05): seccomp's instruction_pointer is past it */
/* The end of user space (TASK_SIZE: 47 bits less the guard page): a range up to it covers
 * every address a process can map. */
#define ARCH_USER_END	0x7ffffffff000ull
/* Older headers lack it (the number is x86-64's). */
#define ARCH_NR_USERFAULTFD	323

/* Stack pointer / instruction pointer, so the generic code names no register. */
static inline uint64_t arch_sp(const arch_regs_t *r) { return r->rsp; }
static inline void arch_set_sp(arch_regs_t *r, uint64_t sp) { r->rsp = sp; }
static inline uint64_t arch_ip(const arch_regs_t *r) { return r->rip; }
static inline void arch_set_ip(arch_regs_t *r, uint64_t ip) { r->rip = ip; }
/* In a spin-wait loop. */
static inline void arch_cpu_relax(void) { __asm__ __volatile__("pause" ::: "memory"); }

#endif /* MEVITOP_ARCH_REGS_H */
