/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arch_regs.h (arm64) - a stub: the types exact/arch.h is written in, so that every user/
 * source compiles for aarch64 (`make cross-check`).  Exact mode refuses to start on arm64
 * (arch_unsupported) until the backend exists; doc/arch.md lists what it needs.
 */
#ifndef MEVITOP_ARCH_REGS_H
#define MEVITOP_ARCH_REGS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>
#include <linux/audit.h>

#define ARCH_NAME	"arm64"
#define ARCH_AUDIT	AUDIT_ARCH_AARCH64

/* glibc's: regs[31], sp, pc, pstate (NT_PRSTATUS through PTRACE_GETREGSET). */
typedef struct user_regs_struct arch_regs_t;

/* The backend will keep the FPSIMD (and SVE) state here. */
#define ARCH_XSAVE_MAX	1024
#define ARCH_FRAME_MAX	(4096 + ARCH_XSAVE_MAX)
#define ARCH_FRAME_BARE	4688	/* sizeof(struct rt_sigframe) without extra contexts */

struct arch_cpu {
	arch_regs_t regs;
	uint64_t mask;
	uint8_t xsave[ARCH_XSAVE_MAX];
	size_t xsize;
};

#define ARCH_RESTORER_MAX	8	/* `mov x8, #139; svc #0` */
#define ARCH_RED_ZONE	0	/* AAPCS64 has none */
#define ARCH_SYSCALL_LEN	4	/* `svc #0` */
#define ARCH_USER_END	0x1000000000000ull	/* 48-bit VA */
#define ARCH_NR_USERFAULTFD	282

static inline uint64_t arch_sp(const arch_regs_t *r) { return r->sp; }
static inline void arch_set_sp(arch_regs_t *r, uint64_t sp) { r->sp = sp; }
static inline uint64_t arch_ip(const arch_regs_t *r) { return r->pc; }
static inline void arch_set_ip(arch_regs_t *r, uint64_t ip) { r->pc = ip; }
static inline void arch_cpu_relax(void) { __asm__ __volatile__("yield" ::: "memory"); }

#endif /* MEVITOP_ARCH_REGS_H */
