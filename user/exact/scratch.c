// SPDX-License-Identifier: GPL-2.0
/*
 * scratch.c - the injection's scratch page (scratch.h): found, mapped, unmapped.
 *
 * Layout: a header (magic, then the name), the trampoline code, a chain's code, and one
 * rt_sigreturn frame for the call in progress (inject.c).
 *
 * Mapping it (scratch_bootstrap) happens before any code of ours exists in the target, so
 * it borrows two pieces of the target's own code: a vDSO `syscall; xor..; ret` sequence
 * (the gadget) and libc's rt_sigreturn restorer (exact/arch.h has both patterns).  A thread
 * on the main stack runs the gadget with its stack pointer at a frame we wrote below its red zone ([stack]:
 * memory only that thread uses, and below its stack pointer it uses none); the gadget's
 * `ret` lands on the restorer, whose rt_sigreturn loads that frame.  Chaining such frames
 * (sigreturn-oriented, each frame loading the registers of the next call with ip at the
 * gadget again) runs several calls that way, and a monitor killed at any point leaves a
 * thread that makes the rest of them alone and gets home by the last frame, its own:
 *
 *	memfd_create("mevitop-scratch", MFD_CLOEXEC | MFD_EXEC) = F	(F predicted, below)
 *	ftruncate(F, len); mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, F, 0); close(F)
 *
 * (with mevitop alive it loads each step's registers itself at the previous call's exit
 * and restores the thread after close(), so no rt_sigreturn voids the restart block of a
 * thread parked in nanosleep), so the page is named by its file on every kernel
 * (CONFIG_ANON_VMA_NAME or not), is never writable, and no descriptor stays.  The frames
 * are written before the first call, so they name F before it exists: the lowest free
 * descriptor, which is what memfd_create
 * returns while every thread of the target is parked (a process sharing the descriptor
 * table, CLONE_FILES without CLONE_VM, could take it first: then we rewrite the frames at
 * memfd_create's exit, and only a monitor killed in that instant leaves the wrong number
 * for ftruncate/mmap/close, which then fail harmlessly or close that other descriptor;
 * doc/exact.md).  If the filters or the kernel refuse the memfd, one anonymous
 * mmap from the gadget maps the page instead (named by prctl where the kernel can).
 *
 * Unmapping it (scratch_drop) is one munmap made the same way, from the gadget, because a
 * thread that makes munmap from inside the page would return into nothing were mevitop
 * killed during the call.  A private file mapping never merges with a neighbour, and the
 * anonymous fallback, if it merged, splits back to the same ranges when unmapped.
 */
#include "exact/scratch.h"
#include "exact/inject_int.h"
#include "lib/page.h"
#include "lib/syscall_err.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "exact/stage.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SCRATCH_ANON_NAME	"[anon:" SCRATCH_NAME "]"
#define SCRATCH_MEMFD_NAME	"/memfd:" SCRATCH_NAME " (deleted)"
#define SCRATCH_MAGIC		"MEVITOP-SCRATCH1"	/* 16 bytes, no NUL needed */
#define SCRATCH_MAGIC_LEN	16
#define SCRATCH_NAME_OFF	16
#define SCRATCH_CODE_OFF	64
#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC		0x0001U
#endif
#ifndef MFD_EXEC
#define MFD_EXEC		0x0010U
#endif

#define M_NSTEPS_MAX	4	/* calls in the longest chain (the memfd bootstrap) */
#define DEADLINE(in)	(clock_mono_ns() + (uint64_t)(in)->timeout_ms * 1000000ull)

uint64_t scratch_need(size_t xsize)
{
	uint64_t n = SCRATCH_FRAME_OFF + arch_frame_size(xsize);

	return page_round_up_4k(n);
}

/* Write the header and trampoline into the mapped page at in->scratch. */
static int scratch_write_code(struct inj *in)
{
	uint8_t head[SCRATCH_FRAME_OFF];
	size_t n;

	memset(head, 0, sizeof(head));
	memcpy(head, SCRATCH_MAGIC, SCRATCH_MAGIC_LEN);
	memcpy(head + SCRATCH_NAME_OFF, SCRATCH_NAME, sizeof(SCRATCH_NAME));
	n = arch_tramp_build(head + SCRATCH_CODE_OFF, SCRATCH_CHAIN_OFF - SCRATCH_CODE_OFF,
			    in->scratch + SCRATCH_CODE_OFF, in->scratch + SCRATCH_FRAME_OFF,
			    in->entry);
	if (!n)
		return -EOVERFLOW;
	/* /proc/PID/mem writes through the page's missing write permission (FOLL_FORCE:
	 * a private mapping, file-backed or not, gets its own copy of the page) */
	return inj_mem_write(in, in->scratch, head, sizeof(head));
}

/*
 * After a thread ran our code home (inj_run_home's err): park it again in a fresh event stop,
 * as every attach leaves its threads.  A thread that died meanwhile is no error.
 */
static int park_again(struct inj *in, int i, int err, uint64_t deadline, const char *what)
{
	if (err == -ESRCH)
		return 0;
	if (err) {
		inj_set_why(in, "failed to let thread %d of process %d finish an earlier %s: %s",
			    in->t[i].tid, in->pid, what, strerror(-err));
		return err;
	}
	ptrace(PTRACE_INTERRUPT, in->t[i].tid, 0, 0);
	ptrace(PTRACE_CONT, in->t[i].tid, 0, 0);
	err = inj_park(in, i, deadline);
	return err == -ESRCH ? 0 : err;
}

/*
 * A thread that an earlier monitor died under may still be inside our trampoline: a
 * stopped process runs it only once continued.  Its own context is in the page's frame,
 * so before anything writes a new frame, let it run to the end of the trampoline (its
 * rt_sigreturn) under our eyes, and park it there, home.
 */
static int finish_inflight(struct inj *in)
{
	for (int i = 0; i < in->nr; i++) {
		uint64_t deadline = DEADLINE(in);
		arch_regs_t r;
		bool interrupted = false;
		int err;

		if (!in->t[i].parked || in->t[i].gone ||
		    arch_regs_get(in->t[i].tid, &r) < 0 ||
		    arch_ip(&r) - in->scratch >= in->scratch_len)
			continue;
		in->t[i].parked = false;
		err = inj_run_home(in, i, deadline, &interrupted);
		err = park_again(in, i, err, deadline, "injection");
		if (err)
			return err;
	}
	return 0;
}

/*
 * A thread a killed attach left in the middle of a bootstrap (or of the final munmap) of
 * a stopped process: it runs the rest of the chain only once continued.  It sits at the
 * gadget with our restorer as its return address, or at the restorer itself (where a
 * thread returning from a signal handler could sit too: running its rt_sigreturn is what
 * it would do next anyway).  Let it run the rest under our eyes, so a page it maps is there
 * to reuse now and the next chain's descriptor is free, and park it home.
 */
static bool in_chain(struct inj *in, const arch_regs_t *r)
{
	uint64_t ret = 0;

	if (arch_ip(r) >= in->restorer_ip && arch_ip(r) < in->restorer_ip + ARCH_RESTORER_MAX)
		return true;
	return (arch_ip(r) == in->gadget_ip ||
		arch_ip(r) == in->gadget_ip + ARCH_SYSCALL_LEN) &&
	       !inj_mem_read(in, arch_sp(r), &ret, sizeof(ret)) && ret == in->restorer_ip;
}

static int finish_chains(struct inj *in)
{
	for (int i = 0; i < in->nr; i++) {
		uint64_t deadline = DEADLINE(in);
		arch_regs_t r;
		bool interrupted = false;
		int err = 0, n;

		if (!in->t[i].parked || in->t[i].gone ||
		    arch_regs_get(in->t[i].tid, &r) < 0 || !in_chain(in, &r))
			continue;
		in->t[i].parked = false;
		/* each step ends in an rt_sigreturn; the last one's frame is its own */
		for (n = 0; n <= M_NSTEPS_MAX && !err; n++) {
			err = inj_run_home(in, i, deadline, &interrupted);
			if (!err && (arch_regs_get(in->t[i].tid, &r) < 0 ||
				     !in_chain(in, &r)))
				break;
		}
		err = park_again(in, i, err, deadline, "bootstrap");
		if (err)
			return err;
	}
	return 0;
}

int scratch_prepare(struct inj *in)
{
	struct inj_vma v;
	int err, gerr;

	stage_enter("inj", "prepare");
	in->scratch = 0;
	in->scratch_memfd = false;
	in->scratch_note[0] = '\0';
	/* the gadget and restorer map the page and unmap it again, so find them always */
	gerr = injmap_find_code(in->pid, in->memfd, "[vdso]", arch_find_ret_gadget,
				&in->gadget_ip);
	if (gerr) {
		in->gadget_ip = 0;
		inj_set_why(in, "failed to find a `syscall; ret` sequence in process %d: %s", in->pid,
			    strerror(-gerr));
	} else {
		gerr = injmap_find_code(in->pid, in->memfd, "libc", arch_find_restorer,
					&in->restorer_ip);
		if (gerr) {
			in->restorer_ip = 0;
			inj_set_why(in, "failed to find an rt_sigreturn restorer in the code of "
				    "process %d: %s", in->pid, strerror(-gerr));
		}
	}
	if (!gerr) {
		err = finish_chains(in);
		if (err)
			return err;
	}
	err = injmap_find_named(in->pid, SCRATCH_MEMFD_NAME, &v);
	in->scratch_memfd = !err;
	if (err)
		err = injmap_find_scratch(in->pid, in->memfd, SCRATCH_ANON_NAME, SCRATCH_MAGIC,
					  SCRATCH_MAGIC_LEN, &v);
	if (!err) {
		in->scratch = v.start;
		in->scratch_len = v.end - v.start;
		err = finish_inflight(in);
		if (!err)
			err = scratch_write_code(in);
		if (!err) {
			if (!gerr)
				in->why[0] = '\0';
			return 0;
		}
		in->scratch = 0;
		in->scratch_memfd = false;
	}
	if (gerr)
		return gerr == -ENOENT ? -EOPNOTSUPP : gerr;
	return 0;
}

/* Name the anonymous page where the kernel can (EINVAL without CONFIG_ANON_VMA_NAME:
 * the magic in the header identifies it then). */
static void scratch_name(struct inj *in)
{
	long a[6] = { PR_SET_VMA, PR_SET_VMA_ANON_NAME, (long)in->scratch, (long)in->scratch_len,
		      (long)(in->scratch + SCRATCH_NAME_OFF), 0 };
	arch_regs_t restore;
	long ret;
	int idx = inj_pick_thread(in, NULL);

	if (idx >= 0 && !inj_save_thread(in, idx, in->scratch + SCRATCH_FRAME_OFF, 0, &restore))
		inj_run_call(in, idx, in->entry[ARCH_TRAMP_PLAIN], arch_sp(&in->cpu.regs), __NR_prctl,
			     a, false, &restore, &ret, NULL);
}

static void note(struct inj *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct inj *in, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(in->scratch_note, sizeof(in->scratch_note), fmt, ap);
	va_end(ap);
}

/* The descriptor the target's next open gets: its lowest free one (-errno). */
static long lowest_free_fd(pid_t pid)
{
	char path[64];
	uint8_t *used = NULL;
	size_t cap = 0;
	struct dirent *d;
	long fd = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		char *end;
		unsigned long n = strtoul(d->d_name, &end, 10);

		if (d->d_name[0] < '0' || d->d_name[0] > '9' || *end || n >= (1ul << 20))
			continue;
		if (n >= cap) {
			size_t ncap = (n + 1) * 2;
			uint8_t *p = realloc(used, ncap);

			if (!p) {
				fd = -ENOMEM;
				goto out;
			}
			memset(p + cap, 0, ncap - cap);
			used = p;
			cap = ncap;
		}
		used[n] = 1;
	}
	while ((size_t)fd < cap && used[fd])
		fd++;
out:
	closedir(dir);
	free(used);
	return fd;
}

/* Does this kernel know MFD_EXEC (6.3+)?  Without it, a kernel that does would log a
 * warning naming the target, and vm.memfd_noexec=1 would make the memfd non-executable. */
static unsigned memfd_flags(void)
{
	static int known = -1;

	if (known < 0) {
		int fd = (int)syscall(__NR_memfd_create, "mevitop-probe", MFD_CLOEXEC | MFD_EXEC);

		known = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	return MFD_CLOEXEC | (known ? MFD_EXEC : 0);
}

/* The chain's calls after memfd_create, each loaded by a frame without FPU state. */
enum { M_TRUNC, M_MMAP, M_CLOSE, M_NFRAMES };

struct mchain {
	uint64_t frame[M_NFRAMES], home, name, len;
	long fd;
};

/* The registers of step @i (M_TRUNC..M_CLOSE) for descriptor ch->fd: its call at the
 * gadget, stack pointer at the next frame (after the last step: the thread's own, ch->home). */
static void step_regs(const struct inj *in, const struct mchain *ch, int i,
		      arch_regs_t *r)
{
	static const long nr[M_NFRAMES] = { __NR_ftruncate, __NR_mmap, __NR_close };
	long a[M_NFRAMES][6] = {
		{ ch->fd, (long)ch->len, 0, 0, 0, 0 },
		{ 0, (long)ch->len, PROT_READ | PROT_EXEC, MAP_PRIVATE, ch->fd, 0 },
		{ ch->fd, 0, 0, 0, 0, 0 },
	};

	*r = in->cpu.regs;
	arch_set_call(r, in->gadget_ip, nr[i], a[i]);
	arch_set_sp(r, i + 1 < M_NFRAMES ? ch->frame[i + 1] : ch->home);
}

/* Write the step frames, each loading its step's registers (see step_regs). */
static int write_steps(struct inj *in, const struct mchain *ch)
{
	uint8_t buf[ARCH_FRAME_BARE];

	for (int i = 0; i < M_NFRAMES; i++) {
		arch_regs_t r;
		int err;

		step_regs(in, ch, i, &r);
		err = arch_frame_build_bare(buf, sizeof(buf), ch->frame[i], in->restorer_ip, &r,
					   ~0ull);
		if (!err)
			err = inj_mem_write(in, ch->frame[i], buf, sizeof(buf));
		if (err)
			return err;
	}
	return 0;
}

/* May the thread run the whole chain alone (a filtered target)?  0, or -EPERM. */
static int guard_memfd(struct inj *in, int idx, const struct mchain *ch, unsigned flags)
{
	struct inj_call c[5];
	uint64_t ip = in->gadget_ip + ARCH_SYSCALL_LEN;
	int err = inj_guard_needed(in);

	if (err <= 0)
		return err;
	memset(c, 0, sizeof(c));
	c[0] = (struct inj_call){ __NR_memfd_create, ip, { 0, (long)flags }, 1u };
	c[1] = (struct inj_call){ __NR_ftruncate, ip, { 0, (long)ch->len }, 1u };
	c[2] = (struct inj_call){ __NR_mmap, ip, { 0, (long)ch->len, PROT_READ | PROT_EXEC,
					       MAP_PRIVATE, 0, 0 }, 1u << 4 };
	c[3] = (struct inj_call){ __NR_close, ip, { 0 }, 1u };
	c[4] = (struct inj_call){ __NR_rt_sigreturn, 0, { 0 }, 0x3fu | INJ_CALL_IP_UNKNOWN };
	in->guard_why[0] = '\0';
	err = in->guard(in->guard_ctx, in->t[idx].tid, c, 5, INJ_GUARD_ALLOWED, in->guard_why,
			sizeof(in->guard_why));
	return err ? -EPERM : 0;
}

/*
 * Run the memfd chain (top of file) on thread @idx, whose state is in in->cpu.
 * Returns 0 with in->scratch mapped, 1 if it was not mapped and the thread is home
 * (in->scratch_note says why: the anonymous page then), or -errno.
 */
static int bootstrap_memfd(struct inj *in, int idx, const struct inj_vma *stack)
{
	arch_regs_t restore, regs;
	unsigned flags = memfd_flags();
	struct mchain ch;
	uint64_t home_sz, total, base, deadline;
	bool interrupted = false, restore_needed;
	uint8_t *old = NULL;
	pid_t tid = in->t[idx].tid;
	long a[6] = { 0 }, ret = 0, addr = -ENOEXEC;
	int err, step;

	ch.len = scratch_need(in->cpu.xsize);
	ch.fd = lowest_free_fd(in->pid);
	if (ch.fd < 0) {
		note(in, "cannot read the descriptors of process %d: %s", in->pid,
		     strerror((int)-ch.fd));
		return 1;
	}
	home_sz = (arch_frame_size(in->cpu.xsize) + 63) & ~63ull;
	total = M_NFRAMES * ARCH_FRAME_BARE + home_sz + 64;
	base = (arch_sp(&in->cpu.regs) - ARCH_RED_ZONE - total) & ~63ull;
	if (base < stack->start + PAGE_SIZE_4K) {
		note(in, "no room for the memfd bootstrap's frames on the stack of thread %d",
		     tid);
		return 1;
	}
	for (int i = 0; i < M_NFRAMES; i++)
		ch.frame[i] = base + (uint64_t)i * ARCH_FRAME_BARE;
	ch.home = base + M_NFRAMES * ARCH_FRAME_BARE;
	ch.name = ch.home + home_sz;
	if (guard_memfd(in, idx, &ch, flags)) {
		note(in, "its seccomp filters do not allow the memfd (%s)",
		     in->guard_why[0] ? in->guard_why : "not proven");
		return 1;
	}
	old = malloc(total);
	if (!old)
		return -ENOMEM;
	err = inj_mem_read(in, base, old, total);
	if (!err)
		err = inj_mem_write(in, ch.name, SCRATCH_NAME, sizeof(SCRATCH_NAME));
	if (!err)
		err = inj_save_thread(in, idx, ch.home, in->restorer_ip, &restore);
	if (!err)
		err = write_steps(in, &ch);
	if (err)
		goto out;
	a[0] = (long)ch.name;
	a[1] = (long)flags;
	err = inj_borrow_thread(in, idx, in->gadget_ip, ch.frame[0], __NR_memfd_create, a,
				&restore_needed);
	if (err) {
		if (restore_needed)
			inj_restore_thread(in, idx, &restore, in->cpu.mask);
		goto out;
	}
	for (step = 0; step <= M_NFRAMES; step++) {
		static const long nrs[] = { __NR_memfd_create, __NR_ftruncate, __NR_mmap,
					    __NR_close };

		deadline = DEADLINE(in);	/* each call gets the timeout, as inj_syscall's */
		err = inj_step_call(in, idx, deadline, &interrupted, "boot", nrs[step]);
		if (!err && arch_regs_get(tid, &regs) < 0)
			err = -errno;
		if (err)
			break;
		ret = arch_call_result(&regs);
		if (step == 0 && syscall_failed(ret))
			note(in, "memfd_create failed in process %d: %s", in->pid,
			     strerror((int)-ret));
		if (step == 0 && !syscall_failed(ret) && ret != ch.fd) {
			ch.fd = ret;	/* someone sharing its descriptor table took ours */
			err = write_steps(in, &ch);
			if (err)
				break;
		}
		if (step == 1 + M_MMAP)
			addr = ret;
		if (step == M_NFRAMES) {
			/* closed: home by the kernel's own restart rules, not by the frame */
			err = inj_restore_thread(in, idx, &restore, in->cpu.mask);
			break;
		}
		/*
		 * Load the next step ourselves, as its frame would: an rt_sigreturn run while we
		 * are alive would void the thread's restart block (a nanosleep it was parked
		 * in would fail with EINTR).  Killed after this, it makes that step and goes
		 * on by the frames.
		 */
		step_regs(in, &ch, step, &regs);
		if (arch_regs_set(tid, &regs) < 0) {
			err = -errno;
			break;
		}
	}
	if (!err && interrupted)
		err = -ETIMEDOUT;
	if (err && err != -ESRCH && step < M_NFRAMES + 1 && !in->t[idx].parked)
		in->t[idx].dirty = true;	/* it makes the rest of the chain alone */
out:
	if (!in->t[idx].dirty && !in->t[idx].gone)
		inj_mem_write(in, base, old, total);	/* below its stack pointer: dead, but as it was */
	free(old);
	if (err)
		return err;
	if (syscall_failed(addr)) {
		if (!in->scratch_note[0])
			note(in, "mapping the memfd failed in process %d: %s", in->pid,
			     strerror((int)-addr));
		return 1;
	}
	in->scratch = (uint64_t)addr;
	in->scratch_len = ch.len;
	in->scratch_memfd = true;
	return 0;
}

/* The anonymous page: one mmap from the gadget, its frame below the red zone. */
static int bootstrap_anon(struct inj *in, int idx, const struct inj_vma *stack)
{
	arch_regs_t restore;
	uint64_t frame, len, fsize;
	uint8_t *old = NULL;
	long a[6], addr = 0;
	int err;

	fsize = arch_frame_size(in->cpu.xsize);
	frame = (arch_sp(&in->cpu.regs) - ARCH_RED_ZONE - fsize) & ~63ull;
	if (frame < stack->start + PAGE_SIZE_4K) {
		inj_set_why(in, "no room below the stack pointer of thread %d of process %d",
			    in->t[idx].tid, in->pid);
		return -ENOSPC;
	}
	old = malloc(fsize);
	err = old ? inj_mem_read(in, frame, old, fsize) : -ENOMEM;
	if (!err)
		err = inj_save_thread(in, idx, frame, in->restorer_ip, &restore);
	if (err)
		goto out;
	len = scratch_need(in->cpu.xsize);
	a[0] = 0;
	a[1] = (long)len;
	a[2] = PROT_READ | PROT_EXEC;
	a[3] = MAP_PRIVATE | MAP_ANONYMOUS;
	a[4] = -1;
	a[5] = 0;
	in->stage_pfx = "boot";
	err = inj_run_call(in, idx, in->gadget_ip, frame, __NR_mmap, a, false, &restore, &addr, NULL);
	in->stage_pfx = NULL;
	if (!in->t[idx].dirty && !in->t[idx].gone)
		inj_mem_write(in, frame, old, fsize);	/* below its stack pointer: as it was */
	if (!err && syscall_failed(addr))
		err = (int)addr;
	if (!err) {
		in->scratch = (uint64_t)addr;
		in->scratch_len = len;
		in->scratch_memfd = false;
	}
out:
	free(old);
	return err;
}

/* A parked thread on the main stack (the bootstrap's frames go below its red zone), its
 * state in in->cpu; -errno with in->why. */
static int stack_thread(struct inj *in, struct inj_vma *stack, const char *what)
{
	int idx, err = injmap_find_named(in->pid, "[stack]", stack);

	idx = err ? -1 : inj_pick_thread(in, stack);
	if (idx < 0) {
		inj_set_why(in, "no thread of process %d runs on its main stack, which the injection "
			    "needs to %s its scratch page", in->pid, what);
		return -EOPNOTSUPP;
	}
	err = arch_cpu_get(in->t[idx].tid, &in->cpu);
	if (err == -ESRCH)
		inj_mark_gone(&in->t[idx]);
	return err ? err : idx;
}

int scratch_bootstrap(struct inj *in)
{
	struct inj_vma stack;
	int idx, err;

	if (in->scratch)
		return 0;
	if (!in->gadget_ip || !in->restorer_ip)
		return -EOPNOTSUPP;	/* in->why says which (scratch_prepare) */
	idx = stack_thread(in, &stack, "map");
	if (idx < 0)
		return idx;
	err = bootstrap_memfd(in, idx, &stack);
	if (err == 1) {
		log_info("process %d: scratch page: anonymous, not the mevitop-scratch memfd: %s",
			 in->pid, in->scratch_note);
		idx = stack_thread(in, &stack, "map");
		err = idx < 0 ? idx : bootstrap_anon(in, idx, &stack);
	}
	if (!err)
		err = scratch_write_code(in);
	if (!err && !in->scratch_memfd)
		scratch_name(in);
	if (err && !in->why[0])
		inj_set_why(in, "failed to map the injection's scratch page in process %d: %s",
			    in->pid, strerror(-err));
	return err;
}

static int drop(struct inj *in);

int scratch_drop(struct inj *in)
{
	uint64_t at = in->scratch;
	int err = drop(in);

	if (err)
		log_note("process %d: the scratch page at 0x%llx stays (%s)", in->pid,
			 (unsigned long long)at, in->scratch_note);
	else if (at)
		log_debug("process %d: scratch page at 0x%llx unmapped", in->pid,
			  (unsigned long long)at);
	return err;
}

static int drop(struct inj *in)
{
	arch_regs_t restore;
	struct inj_vma stack;
	uint64_t frame, fsize;
	uint8_t *old = NULL;
	long a[6] = { (long)in->scratch, (long)in->scratch_len, 0, 0, 0, 0 }, ret = 0;
	int idx, err;

	if (!in->scratch || in->released)
		return 0;
	for (int i = 0; i < in->nr; i++)
		if ((in->t[i].dirty || in->t[i].running) && !in->t[i].gone) {
			note(in, "thread %d still runs mevitop's code alone", in->t[i].tid);
			return -EBUSY;
		}
	if (!in->gadget_ip || !in->restorer_ip) {
		note(in, "%s", in->why);
		return -EOPNOTSUPP;
	}
	idx = stack_thread(in, &stack, "unmap");
	if (idx < 0) {
		note(in, "%s", in->why);
		return idx;
	}
	fsize = arch_frame_size(in->cpu.xsize);
	frame = (arch_sp(&in->cpu.regs) - ARCH_RED_ZONE - fsize) & ~63ull;
	if (frame < stack.start + PAGE_SIZE_4K) {
		note(in, "no room below the stack pointer of thread %d", in->t[idx].tid);
		return -ENOSPC;
	}
	old = malloc(fsize);
	err = old ? inj_mem_read(in, frame, old, fsize) : -ENOMEM;
	if (!err)
		err = inj_save_thread(in, idx, frame, in->restorer_ip, &restore);
	in->guard_why[0] = '\0';
	in->stage_pfx = "drop";
	if (!err)
		err = inj_run_call(in, idx, in->gadget_ip, frame, __NR_munmap, a, false, &restore,
				   &ret, NULL);
	in->stage_pfx = NULL;
	if (!in->t[idx].dirty && !in->t[idx].gone)
		inj_mem_write(in, frame, old, fsize);
	free(old);
	if (!err && syscall_failed(ret))
		err = (int)ret;
	if (err) {
		note(in, "munmap %s: %s", in->guard_why[0] ? "refused by its seccomp filters" :
		     "failed", in->guard_why[0] ? in->guard_why : strerror(-err));
		return err;
	}
	in->scratch = 0;
	return 0;
}
