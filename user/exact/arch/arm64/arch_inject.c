// SPDX-License-Identifier: GPL-2.0
/*
 * arch_inject.c (arm64) - a stub that compiles: every function fails with EOPNOTSUPP, and
 * arch_unsupported() says why, so exact mode refuses before it stops any process.  The
 * backend needs (doc/arch.md): registers through PTRACE_GETREGSET/SETREGSET NT_PRSTATUS,
 * the FPSIMD/SVE state, arm64's struct rt_sigframe (arch/arm64/kernel/signal.c), the
 * syscall restart rules (x0 and orig_x0), `svc #0` trampolines, and the vDSO/libc patterns
 * the bootstrap borrows (`mov x8, #139; svc #0` is __kernel_rt_sigreturn).
 */
#include <errno.h>
#include "exact/arch.h"

const char *arch_unsupported(void)
{
	return "exact mode is not supported on arm64 yet: the injection (registers, "
	       "rt_sigreturn frames, trampolines) has no arm64 backend; see doc/arch.md "
	       "(sample mode works: mevitop -p PID)";
}

int arch_regs_get(pid_t tid, arch_regs_t *r)
{
	(void)tid;
	(void)r;
	return -EOPNOTSUPP;
}

int arch_regs_set(pid_t tid, const arch_regs_t *r)
{
	(void)tid;
	(void)r;
	return -EOPNOTSUPP;
}

int arch_cpu_get(pid_t tid, struct arch_cpu *cpu)
{
	(void)tid;
	(void)cpu;
	return -EOPNOTSUPP;
}

void arch_apply_restart(arch_regs_t *r)
{
	(void)r;
}

size_t arch_frame_size(size_t xsize)
{
	(void)xsize;
	return 0;
}

int arch_frame_build_bare(uint8_t *buf, size_t len, uint64_t addr, uint64_t pretcode,
			  const arch_regs_t *r, uint64_t mask)
{
	return -EOPNOTSUPP;
}

int arch_frame_build(uint8_t *buf, size_t len, uint64_t addr, uint64_t pretcode,
		     const arch_regs_t *r, const struct arch_cpu *cpu)
{
	return -EOPNOTSUPP;
}

void arch_set_call(arch_regs_t *r, uint64_t ip, long nr, const long a[6])
{
}

long arch_call_result(const arch_regs_t *r)
{
	return -EOPNOTSUPP;
}

size_t arch_tramp_build(uint8_t *buf, size_t len, uint64_t code_addr, uint64_t frame_addr,
			uint64_t entry[ARCH_TRAMP_NENTRIES])
{
	return 0;
}

long arch_find_ret_gadget(const uint8_t *p, size_t n)
{
	return -1;
}

long arch_find_restorer(const uint8_t *p, size_t n)
{
	return -1;
}
