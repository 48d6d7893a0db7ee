/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arch.h - everything of exact mode's injection that depends on the CPU, behind one
 * interface (in the spirit of CRIU compel's arch/): register access, a thread's full CPU
 * state, the rt_sigreturn frame that puts that state back by itself, the scratch page's
 * trampoline bytes, the patterns of the few instructions of the target's own code the
 * bootstrap borrows, and the /dev/userfaultfd chain's code.  The generic files
 * (inject*.c, scratch.c, uffd*.c, seccomp_guard.c) name no register and no instruction.
 *
 * One folder per architecture, user/exact/arch/ARCH/: arch_regs.h (the types and constants
 * below are written in), arch_inject.c and arch_uffd_dev.c (the functions).  The Makefile
 * builds the folder of its ARCH; `make cross-check` compiles everything for arm64.
 * doc/arch.md says how to port.
 */
#ifndef MEVITOP_ARCH_H
#define MEVITOP_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "arch_regs.h"	/* user/exact/arch/$(ARCH)/ */

/* NULL if exact mode works on this architecture, else why not (one line, for the user). */
const char *arch_unsupported(void);

/* A stopped thread's general registers. 0 or -errno. */
int arch_regs_get(pid_t tid, arch_regs_t *r);
int arch_regs_set(pid_t tid, const arch_regs_t *r);

/* Read the thread's registers, mask and extended FPU image (it is in a ptrace stop). */
int arch_cpu_get(pid_t tid, struct arch_cpu *cpu);

/*
 * rt_sigreturn disables the kernel's syscall restart, so a thread parked inside an
 * interrupted system call gets the restart applied here, as the kernel would on its way
 * out: back over the syscall instruction with the call's number (also for
 * -ERESTART_RESTARTBLOCK: rt_sigreturn voids the restart block restart_syscall needs).
 */
void arch_apply_restart(arch_regs_t *r);

/* Bytes of an rt_sigreturn frame whose pretcode slot is at the start. */
size_t arch_frame_size(size_t xsize);

/*
 * A frame without FPU state (ARCH_FRAME_BARE bytes, @addr 64-aligned): rt_sigreturn on it
 * loads @r and @mask and resets the FPU/vector registers to their initial state - for a
 * step between two injected calls, where only a later full frame restores the thread.
 */
int arch_frame_build_bare(uint8_t *buf, size_t len, uint64_t addr, uint64_t pretcode,
			  const arch_regs_t *r, uint64_t mask);

/*
 * Fill @buf (arch_frame_size bytes) with a frame to be written at target address @addr:
 * [pretcode][ucontext: the registers @r, the mask, the FPU image][siginfo]...  rt_sigreturn
 * with the stack pointer at @addr + 8 resumes @r.
 */
int arch_frame_build(uint8_t *buf, size_t len, uint64_t addr, uint64_t pretcode,
		     const arch_regs_t *r, const struct arch_cpu *cpu);

/* Point @r at a system call: ip, nr, args (and no restart on the way out). */
void arch_set_call(arch_regs_t *r, uint64_t ip, long nr, const long a[6]);
/* Raw result of the call that just exited. */
long arch_call_result(const arch_regs_t *r);

/*
 * The trampoline written at the start of the scratch page's code area, at @code_addr.
 * Entry ARCH_TRAMP_PLAIN: the syscall, then rt_sigreturn on the frame at @frame_addr.
 * Entry ARCH_TRAMP_CLOSE: the syscall, and if it returned a file descriptor, `close` it,
 * then the same rt_sigreturn.  ARCH_TRAMP_RESTORE: that rt_sigreturn alone (where a
 * chain's code ends, see inj_syscall_chain).  Returns its length.
 */
enum { ARCH_TRAMP_PLAIN, ARCH_TRAMP_CLOSE, ARCH_TRAMP_RESTORE, ARCH_TRAMP_NENTRIES };
size_t arch_tramp_build(uint8_t *buf, size_t len, uint64_t code_addr, uint64_t frame_addr,
			uint64_t entry[ARCH_TRAMP_NENTRIES]);

/*
 * Bootstrap patterns in the target's own code.  A "call-and-return" gadget: a syscall
 * instruction, then only register clears, then a return (the vDSO's syscall fallbacks).
 * A "restorer": rt_sigreturn's number loaded, then the syscall (glibc's and musl's
 * __restore_rt, Go's runtime.sigreturn; at most ARCH_RESTORER_MAX bytes).  Each returns
 * the offset in @p of a match, or -1.
 */
long arch_find_ret_gadget(const uint8_t *p, size_t n);
long arch_find_restorer(const uint8_t *p, size_t n);

/*
 * The /dev/userfaultfd handoff chain (exact/uffd_dev.c), run in the target by
 * inj_syscall_chain().  Its calls, in order (UFFD_DEV_STEP_*):
 *
 *   page = mmap(NULL, 4096, rw, private anonymous)   its data: a msghdr, a cmsg, sv[2]
 *   socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, page->sv)
 *                       -- mevitop takes sv[0] and sends the open /dev/userfaultfd on it
 *   close(sv[0])
 *   recvmsg(sv[1], page->msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)   the fd lands in page->fd
 *   close(sv[1])
 *   uffd = ioctl(page->fd, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK)
 *                       -- mevitop takes uffd
 *   close(uffd)
 *   close(page->fd)
 *   munmap(page, 4096)
 *   rt_sigreturn (the trampoline's restore)
 *
 * Every call runs whatever happened before: a failed one yields -errno, which the later
 * calls get as a bad fd (EBADF, harmless) - page->fd and sv start as -1 - and recvmsg does
 * not wait, so a monitor killed before it sent anything leaves a chain that finds nothing,
 * closes what it made and goes home.  Only a failed mmap skips to the restore (there is
 * nothing to undo then).  No branch depends on mevitop being alive.
 */
enum {
	UFFD_DEV_STEP_MMAP,
	UFFD_DEV_STEP_SOCKETPAIR,
	UFFD_DEV_STEP_CLOSE_SV0,
	UFFD_DEV_STEP_RECVMSG,
	UFFD_DEV_STEP_CLOSE_SV1,
	UFFD_DEV_STEP_IOCTL,
	UFFD_DEV_STEP_CLOSE_UFFD,
	UFFD_DEV_STEP_CLOSE_DEV,
	UFFD_DEV_STEP_MUNMAP,
	UFFD_DEV_NSTEPS,
};

/* Where the chain keeps sv[2] in its page (mevitop reads sv[0] there). */
#define UFFD_DEV_SV_OFF		0x60

/* The chain's bytes for address @code_addr, ending in a jump to @restore_addr; its length
 * or 0 if @len is too small.  (struct inj_chain's build.) */
size_t arch_uffd_dev_build(uint8_t *buf, size_t len, uint64_t code_addr, uint64_t restore_addr);

#endif /* MEVITOP_ARCH_H */
