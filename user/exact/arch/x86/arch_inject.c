// SPDX-License-Identifier: GPL-2.0
/*
 * arch_inject.c (x86-64) - CPU state, rt_sigreturn frames and trampoline bytes (exact/arch.h).
 *
 * Why rt_sigreturn: it is the one system call that loads every piece of a thread's user
 * context at once - general registers, rip/rsp/eflags, the signal mask and the whole
 * FPU/SSE/AVX state - from memory.  A thread that carries borrowed registers and runs
 * code ending in rt_sigreturn on a frame holding its own saved context gets back to
 * exactly where it was, with or without a tracer (arch/x86/kernel/signal_64.c).
 */
#include "exact/arch.h"

#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE		0x202
#endif
#define FP_XSTATE_MAGIC1	0x46505853u	/* "FPXS" in the sw_reserved bytes */
#define FP_XSTATE_MAGIC2	0x46505845u	/* "FPXE" right after the XSAVE image */
#define FX_SW_OFFSET		464		/* sw_reserved inside the legacy FXSAVE area */
#define XSAVE_MIN		(512 + 64)	/* legacy area + xsave header */
#define XSTATE_BV_OFFSET	512		/* the header's "which components hold state" */
#define CPUID_XSTATE		0xd		/* leaf: each component's size, offset, flags */
#define CPUID_XSTATE_XFD	(1u << 2)	/* sub-leaf ecx: the component is XFD-armed */

/* uc_flags: the frame carries an XSAVE image and a valid ss to restore exactly */
#define UC_FP_XSTATE		0x1
#define UC_SIGCONTEXT_SS	0x2
#define UC_STRICT_RESTORE_SS	0x4

/*
 * uc_stack.ss_flags for "leave the alternate signal stack alone": rt_sigreturn passes
 * uc_stack to do_sigaltstack() and ignores its errors, and a mode that is none of 0,
 * SS_ONSTACK, SS_DISABLE is refused with EINVAL before anything changes.  We cannot read
 * a thread's sigaltstack through ptrace, so we never write one.
 */
#define SS_KEEP			3

#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516
#define SYSCALL_INSN_LEN	2

/* struct rt_sigframe (x86-64), written with explicit offsets from its start */
#define FR_PRETCODE		0
#define FR_UC			8
#define UC_FLAGS		0
#define UC_LINK			8
#define UC_STACK		16	/* ss_sp, ss_flags (int + pad), ss_size */
#define UC_MCONTEXT		40	/* struct sigcontext, 256 bytes */
#define UC_SIGMASK		296
#define UC_SIZE			304
#define FR_SIGINFO		(FR_UC + UC_SIZE)
#define FR_FPSTATE		ARCH_FRAME_BARE	/* 64-aligned after the 128-byte siginfo */

/* struct sigcontext: 18 u64 (r8..rip, eflags), cs gs fs ss (u16), err trapno oldmask cr2 */
#define SC_CS			(18 * 8)
#define SC_SS			(18 * 8 + 6)
#define SC_FPSTATE		(18 * 8 + 8 + 4 * 8)

struct fx_sw_bytes {
	uint32_t magic1;
	uint32_t extended_size;
	uint64_t xfeatures;
	uint32_t xstate_size;
	uint32_t padding[7];
};

const char *arch_unsupported(void)
{
	return NULL;
}

int arch_regs_get(pid_t tid, arch_regs_t *r)
{
	return ptrace(PTRACE_GETREGS, tid, 0, r) < 0 ? -errno : 0;
}

int arch_regs_set(pid_t tid, const arch_regs_t *r)
{
	return ptrace(PTRACE_SETREGS, tid, 0, r) < 0 ? -errno : 0;
}

/*
 * How much of ptrace's XSAVE image a signal frame may carry, and which features it names.
 * ptrace returns the image at the size of every feature the CPU has (with AMX: ~11 KiB,
 * tile data included), but rt_sigreturn refuses an image larger than the thread's own
 * signal-frame size - which leaves out the dynamic (XFD-armed) features, AMX tile data,
 * unless the process asked for them (arch_prctl ARCH_REQ_XCOMP_PERM) - and then restores
 * only the legacy x87/SSE part (check_xstate_in_sigframe, arch/x86/kernel/fpu/signal.c):
 * the upper halves of the ymm registers come back zero.  So unless a dynamic feature holds
 * state in this image (then the thread has the permission, and its frame is the full size),
 * the frame carries the image up to the end of the last non-dynamic feature, in the
 * standard (uncompacted) layout whose offsets CPUID leaf 0xd gives.
 */
static size_t frame_xsize(const uint8_t *xsave, size_t len, uint64_t *xfeatures)
{
	uint64_t in_use, keep = *xfeatures & 3;		/* x87, SSE: the legacy area */
	size_t end = XSAVE_MIN;

	memcpy(&in_use, xsave + XSTATE_BV_OFFSET, sizeof(in_use));
	for (unsigned i = 2; i < 64; i++) {
		unsigned eax, ebx, ecx, edx;

		if (!(*xfeatures & (1ull << i)))
			continue;
		__cpuid_count(CPUID_XSTATE, i, eax, ebx, ecx, edx);
		(void)edx;
		if ((ecx & CPUID_XSTATE_XFD) && !(in_use & (1ull << i)))
			continue;
		keep |= 1ull << i;
		if (ebx + eax > end)
			end = ebx + eax;
	}
	*xfeatures = keep;
	return end < len ? end : len;
}

int arch_cpu_get(pid_t tid, struct arch_cpu *cpu)
{
	struct iovec iov = { .iov_base = cpu->xsave, .iov_len = sizeof(cpu->xsave) };
	struct fx_sw_bytes sw;

	if (ptrace(PTRACE_GETREGS, tid, 0, &cpu->regs) < 0 ||
	    ptrace(PTRACE_GETSIGMASK, tid, sizeof(cpu->mask), &cpu->mask) < 0 ||
	    ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) < 0)
		return -errno;
	cpu->xsize = iov.iov_len;
	if (cpu->xsize < XSAVE_MIN)
		return -EOPNOTSUPP;
	/*
	 * A signal frame's XSAVE image describes itself in sw_reserved; ptrace puts the
	 * enabled features (XCR0) in its first eight bytes instead (the gdb convention).
	 * Without magic1/magic2 the kernel would restore only x87/SSE and reset AVX & co.
	 */
	memcpy(&sw, cpu->xsave + FX_SW_OFFSET, sizeof(sw));
	if (sw.magic1 != FP_XSTATE_MAGIC1) {
		uint64_t xcr0;

		memcpy(&xcr0, cpu->xsave + FX_SW_OFFSET, sizeof(xcr0));
		memset(&sw, 0, sizeof(sw));
		sw.magic1 = FP_XSTATE_MAGIC1;
		sw.xfeatures = xcr0;
	}
	cpu->xsize = frame_xsize(cpu->xsave, cpu->xsize, &sw.xfeatures);
	sw.xstate_size = (uint32_t)cpu->xsize;
	sw.extended_size = (uint32_t)cpu->xsize + sizeof(uint32_t);
	memcpy(cpu->xsave + FX_SW_OFFSET, &sw, sizeof(sw));
	return 0;
}

void arch_apply_restart(arch_regs_t *r)
{
	if ((long long)r->orig_rax < 0)
		return;
	switch ((long long)r->rax) {
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
	case -ERESTARTNOHAND:
	case -ERESTART_RESTARTBLOCK:
		/*
		 * For RESTARTBLOCK the kernel would run restart_syscall, but rt_sigreturn
		 * resets the restart block (restart_syscall would then fail with EINTR):
		 * issue the original call again.  Its arguments are still in the registers;
		 * a relative timeout (nanosleep, poll) starts over, never an error.
		 */
		r->rax = r->orig_rax;
		r->rip -= SYSCALL_INSN_LEN;
		break;
	default:
		break;
	}
}

size_t arch_frame_size(size_t xsize)
{
	return FR_FPSTATE + xsize + sizeof(uint32_t);
}

static void put64(uint8_t *p, size_t off, uint64_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

static void put16(uint8_t *p, size_t off, uint16_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

/* The frame's header and ucontext (FR_FPSTATE bytes): registers @r, mask, fpstate. */
static void frame_head(uint8_t *buf, uint64_t pretcode, const arch_regs_t *r,
		       uint64_t mask, uint64_t fpstate)
{
	uint8_t *uc = buf + FR_UC, *sc = uc + UC_MCONTEXT;
	uint64_t gpr[18] = {
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15,
		r->rdi, r->rsi, r->rbp, r->rbx, r->rdx, r->rax, r->rcx, r->rsp,
		r->rip, r->eflags,
	};

	memset(buf, 0, FR_FPSTATE);
	put64(buf, FR_PRETCODE, pretcode);
	put64(uc, UC_FLAGS, (fpstate ? UC_FP_XSTATE : 0) | UC_SIGCONTEXT_SS |
	      UC_STRICT_RESTORE_SS);
	put64(uc, UC_STACK + 8, SS_KEEP);
	memcpy(sc, gpr, sizeof(gpr));
	put16(sc, SC_CS, (uint16_t)r->cs);
	put16(sc, SC_SS, (uint16_t)r->ss);
	put64(sc, SC_FPSTATE, fpstate);
	put64(uc, UC_SIGMASK, mask);
}

int arch_frame_build(uint8_t *buf, size_t len, uint64_t addr, uint64_t pretcode,
		    const arch_regs_t *r, const struct arch_cpu *cpu)
{
	uint32_t magic2 = FP_XSTATE_MAGIC2;

	if (len < arch_frame_size(cpu->xsize) || addr % 64)
		return -EINVAL;
	frame_head(buf, pretcode, r, cpu->mask, addr + FR_FPSTATE);
	memcpy(buf + FR_FPSTATE, cpu->xsave, cpu->xsize);
	memcpy(buf + FR_FPSTATE + cpu->xsize, &magic2, sizeof(magic2));
	return 0;
}

int arch_frame_build_bare(uint8_t *buf, size_t len, uint64_t addr, uint64_t pretcode,
			 const arch_regs_t *r, uint64_t mask)
{
	if (len < ARCH_FRAME_BARE || addr % 64)
		return -EINVAL;
	frame_head(buf, pretcode, r, mask, 0);
	return 0;
}

static void set_args(arch_regs_t *r, const long a[6])
{
	r->rdi = (unsigned long long)a[0];
	r->rsi = (unsigned long long)a[1];
	r->rdx = (unsigned long long)a[2];
	r->r10 = (unsigned long long)a[3];
	r->r8 = (unsigned long long)a[4];
	r->r9 = (unsigned long long)a[5];
}

void arch_set_call(arch_regs_t *r, uint64_t rip, long nr, const long a[6])
{
	r->rip = rip;
	r->rax = (unsigned long long)nr;
	r->orig_rax = (unsigned long long)-1;	/* no restart logic on our way out */
	set_args(r, a);
}

long arch_call_result(const arch_regs_t *r)
{
	return (long)r->rax;
}

static size_t emit(uint8_t *buf, size_t at, const uint8_t *bytes, size_t n)
{
	memcpy(buf + at, bytes, n);
	return at + n;
}

size_t arch_tramp_build(uint8_t *buf, size_t len, uint64_t code_addr, uint64_t frame_addr,
		       uint64_t entry[ARCH_TRAMP_NENTRIES])
{
	static const uint8_t plain[] = {
		0x0f, 0x05,			/* syscall		the injected call */
		0xeb, 0x11,			/* jmp restore		(over the 17 bytes below) */
	};
	static const uint8_t with_close[] = {
		0x0f, 0x05,			/* syscall		the injected call */
		0x48, 0x85, 0xc0,		/* test %rax,%rax */
		0x78, 0x0a,			/* js restore		failed: nothing to undo */
		0x48, 0x89, 0xc7,		/* mov %rax,%rdi */
		0xb8, 0x03, 0x00, 0x00, 0x00,	/* mov $__NR_close,%eax */
		0x0f, 0x05,			/* syscall		the target keeps no copy */
	};
	uint8_t restore[] = {
		0x48, 0x8d, 0x25, 0, 0, 0, 0,	/* lea frame+8(%rip),%rsp */
		0xb8, 0x0f, 0x00, 0x00, 0x00,	/* mov $__NR_rt_sigreturn,%eax */
		0x0f, 0x05,			/* syscall */
		0x0f, 0x0b,			/* ud2			never reached */
	};
	size_t at = 0;
	int32_t disp;

	if (len < sizeof(plain) + sizeof(with_close) + sizeof(restore))
		return 0;
	entry[ARCH_TRAMP_PLAIN] = code_addr + at;
	at = emit(buf, at, plain, sizeof(plain));
	entry[ARCH_TRAMP_CLOSE] = code_addr + at;
	at = emit(buf, at, with_close, sizeof(with_close));
	/* rsp = frame + 8: rt_sigreturn finds its frame at rsp - 8 (the pretcode slot) */
	disp = (int32_t)((int64_t)(frame_addr + 8) - (int64_t)(code_addr + at + 7));
	memcpy(restore + 3, &disp, sizeof(disp));
	entry[ARCH_TRAMP_RESTORE] = code_addr + at;
	at = emit(buf, at, restore, sizeof(restore));
	return at;
}

/* Is p[0..] `xor r,r` (32- or 64-bit, same register twice)?  Its length, or 0. */
static size_t xor_self_len(const uint8_t *p, size_t n)
{
	size_t rex = 0;

	if (n >= 1 && (p[0] == 0x45 || p[0] == 0x48 || p[0] == 0x4d))
		rex = 1;
	if (n < rex + 2 || p[rex] != 0x31 || (p[rex + 1] & 0xc0) != 0xc0)
		return 0;
	if (((p[rex + 1] >> 3) & 7) != (p[rex + 1] & 7))
		return 0;
	return rex + 2;
}

long arch_find_ret_gadget(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 2 < n; i++) {
		size_t j = i + 2, k;

		if (p[i] != 0x0f || p[i + 1] != 0x05)
			continue;
		while (j < n && (k = xor_self_len(p + j, n - j)))
			j += k;
		if (j < n && p[j] == 0xc3)
			return (long)i;
	}
	return -1;
}

long arch_find_restorer(const uint8_t *p, size_t n)
{
	static const uint8_t a[] = { 0xb8, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
	static const uint8_t b[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

	for (size_t i = 0; i < n; i++) {
		if (i + sizeof(a) <= n && !memcmp(p + i, a, sizeof(a)))
			return (long)i;
		if (i + sizeof(b) <= n && !memcmp(p + i, b, sizeof(b)))
			return (long)i;
	}
	return -1;
}
