/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inject_x86.h - the x86-64 pieces of the injection: a thread's full CPU state (general
 * registers and its XSAVE image), the rt_sigreturn frame that puts that state back by
 * itself, the scratch page's trampoline bytes, and the patterns of the few instructions
 * of the target's own code the bootstrap borrows.  inject.c holds the ptrace logic.
 */
#ifndef MEVITOP_INJECT_X86_H
#define MEVITOP_INJECT_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#define X86_XSAVE_MAX	16384	/* AMX tiles need ~11 KiB */
#define X86_FRAME_MAX	(1024 + X86_XSAVE_MAX)	/* >= x86_frame_size(X86_XSAVE_MAX) */

/* Everything rt_sigreturn restores: registers, signal mask, FPU/SSE/AVX state. */
struct x86_cpu {
	struct user_regs_struct regs;
	uint64_t mask;
	uint8_t xsave[X86_XSAVE_MAX];	/* NT_X86_XSTATE image */
	size_t xsize;		/* its length as the kernel reported it */
};

/* Read the thread's registers, mask and XSAVE image (it is in a ptrace stop). */
int x86_cpu_get(pid_t tid, struct x86_cpu *cpu);

/*
 * rt_sigreturn sets orig_ax = -1, so the kernel's syscall restart cannot run after it: a
 * thread parked inside an interrupted system call gets the restart applied here, as the
 * kernel would on its way out: back over the `syscall` with the call's number (also for
 * -ERESTART_RESTARTBLOCK: rt_sigreturn voids the restart block restart_syscall needs).
 */
void x86_apply_restart(struct user_regs_struct *r);

/* Bytes of an rt_sigreturn frame whose pretcode slot is at the start (64-aligned xsave). */
size_t x86_frame_size(size_t xsize);

/*
 * A frame without FPU state (X86_FRAME_BARE bytes, @addr 64-aligned): rt_sigreturn on it
 * loads @r and @mask and resets the FPU/SSE/AVX registers to their initial state - for a
 * step between two injected calls, where only a later full frame restores the thread.
 */
#define X86_FRAME_BARE	448
int x86_frame_build_bare(uint8_t *buf, size_t len, uint64_t addr, uint64_t pretcode,
			 const struct user_regs_struct *r, uint64_t mask);

/*
 * Fill @buf (x86_frame_size bytes) with a frame to be written at target address @addr:
 * [pretcode][ucontext: the registers @r, the mask, fpstate -> the XSAVE image][siginfo]
 * [XSAVE image + FP_XSTATE_MAGIC2].  rt_sigreturn with rsp = @addr + 8 resumes @r.
 */
int x86_frame_build(uint8_t *buf, size_t len, uint64_t addr, uint64_t pretcode,
		    const struct user_regs_struct *r, const struct x86_cpu *cpu);

/* Point @r at a system call: rip, nr, args (orig_rax -1: no restart on the way out). */
void x86_set_call(struct user_regs_struct *r, uint64_t rip, long nr, const long a[6]);
/* Raw result of the call that just exited. */
long x86_call_result(const struct user_regs_struct *r);

/*
 * The trampoline written at the start of the scratch page's code area, at @code_addr.
 * Entry X86_TRAMP_PLAIN: `syscall`, then rt_sigreturn on the frame at @frame_addr.
 * Entry X86_TRAMP_CLOSE: `syscall`, and if it returned a file descriptor, `close` it,
 * then the same rt_sigreturn.  X86_TRAMP_RESTORE: that rt_sigreturn alone (where a
 * chain's code ends, see inj_syscall_chain).  Returns its length.
 */
enum { X86_TRAMP_PLAIN, X86_TRAMP_CLOSE, X86_TRAMP_RESTORE, X86_TRAMP_NENTRIES };
size_t x86_tramp_build(uint8_t *buf, size_t len, uint64_t code_addr, uint64_t frame_addr,
		       uint64_t entry[X86_TRAMP_NENTRIES]);

/*
 * Bootstrap patterns in the target's own code.  A "call-and-return" gadget: `syscall`,
 * then only `xor reg,reg` instructions, then `ret` (the vDSO's syscall fallbacks).  A
 * "restorer": `mov $15,%eax` or `mov $15,%rax` then `syscall` (glibc's and musl's
 * __restore_rt, Go's runtime.sigreturn).  Each returns the offset in @p of a match, or -1.
 */
long x86_find_ret_gadget(const uint8_t *p, size_t n);
#define X86_RESTORER_MAX	9	/* the restorer's bytes (`mov $15,%rax; syscall`) */
long x86_find_restorer(const uint8_t *p, size_t n);

/* Stack pointer / instruction pointer accessors, so inject.c names no register. */
static inline uint64_t x86_sp(const struct user_regs_struct *r) { return r->rsp; }
static inline void x86_set_sp(struct user_regs_struct *r, uint64_t sp) { r->rsp = sp; }

#define X86_RED_ZONE	128	/* the System V ABI lets leaf code use 128 bytes below rsp */
#define X86_SYSCALL_LEN	2	/* `syscall` (0f 05): seccomp's instruction_pointer is past it */

#endif /* MEVITOP_INJECT_X86_H */
