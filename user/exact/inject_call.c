// SPDX-License-Identifier: GPL-2.0
/*
 * inject_call.c - one injected call (or chain) in a parked thread of a seized target, and
 * the thread bookkeeping it needs: borrow the thread, step it through the call with
 * PTRACE_SYSCALL, give it its own state back and park it again (inject.c, top, says how
 * and why).  inject.c seizes, spawns, follows and releases; scratch.c maps the page these
 * calls run from.  Both call down into this file; it calls neither.
 */
#include "exact/inject.h"
#include "exact/inject_int.h"
#include "exact/scratch.h"
#include "exact/stage.h"
#include "lib/page.h"
#include "lib/syscall_err.h"
#include "lib/clock.h"
#include "lib/array.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP	128
#endif
#define WAIT_SPIN_NS		100000	/* inj_wait_tid(): yield, not sleep, this long first */

#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd	438
#endif

void inj_sleep_us(unsigned us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void inj_set_why(struct inj *in, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(in->why, sizeof(in->why), fmt, ap);
	va_end(ap);
}


bool inj_is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}


struct inj_thread *inj_find_thread(struct inj *in, pid_t tid)
{
	for (int i = 0; i < in->nr; i++)
		if (in->t[i].tid == tid)
			return &in->t[i];
	return NULL;
}

/* Returns the index of the new entry, or -ENOMEM.  Pointers into in->t become stale. */
int inj_add_thread(struct inj *in, pid_t tid)
{
	if (array_reserve(in->t, in->nr, in->cap, 16))
		return -ENOMEM;
	memset(&in->t[in->nr], 0, sizeof(in->t[0]));
	in->t[in->nr].tid = tid;
	return in->nr++;
}

/* Wait for a state change of @tid; 0 with *status, -ETIMEDOUT, or -errno (ECHILD: gone). */
int inj_wait_tid(pid_t tid, uint64_t deadline, int *status)
{
	uint64_t spin_until = clock_mono_ns() + WAIT_SPIN_NS;
	unsigned delay = 5;

	for (;;) {
		pid_t r = waitpid(tid, status, __WALL | WNOHANG);

		if (r == tid)
			return 0;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (clock_mono_ns() >= deadline)
			return -ETIMEDOUT;
		/* A stop usually comes within tens of microseconds (a chain has 2 per call):
		 * yield the CPU - to the tracee, if it shares ours - before sleeping. */
		if (clock_mono_ns() < spin_until) {
			sched_yield();
			continue;
		}
		inj_sleep_us(delay);
		if (delay < 1000)
			delay *= 2;
	}
}

void inj_mark_gone(struct inj_thread *t)
{
	t->gone = true;
	t->parked = false;
	t->running = false;
}


/*
 * Wait until thread @idx sits in an event stop (interrupt or group stop).  A PTRACE_INTERRUPT
 * must already be queued.  Signals that arrive first are delivered (their stop clears the
 * queued interrupt, so it is queued again).  Returns 0, -ESRCH (it exited) or -ETIMEDOUT.
 */
int inj_park(struct inj *in, int idx, uint64_t deadline)
{
	pid_t tid = in->t[idx].tid;

	for (;;) {
		int st, err, sig;
		unsigned event;

		err = inj_wait_tid(tid, deadline, &st);
		if (err == -ETIMEDOUT)
			return err;
		if (err) {
			inj_mark_gone(&in->t[idx]);
			return -ESRCH;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			inj_mark_gone(&in->t[idx]);
			return -ESRCH;
		}
		if (!WIFSTOPPED(st))
			continue;
		event = (unsigned)st >> 16;
		sig = WSTOPSIG(st);
		if (event == PTRACE_EVENT_STOP) {
			in->t[idx].parked = true;
			in->t[idx].running = false;
			in->t[idx].group_stop = inj_is_stop_signal(sig);
			return 0;
		}
		if (event == PTRACE_EVENT_CLONE) {
			/* follow mode: a new thread was auto-attached */
			err = inj_follow_clone_event(in, tid);
			if (err == -ENOMEM)
				return err;
			sig = 0;
		} else if (event != 0 || sig == (SIGTRAP | 0x80)) {
			sig = 0;	/* some other ptrace stop: just move on */
		}
		/* A signal-delivery stop: deliver it, then trap again. */
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
		if (ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig) < 0 && errno == ESRCH) {
			inj_mark_gone(&in->t[idx]);
			return -ESRCH;
		}
	}
}


int inj_mem_read(struct inj *in, uint64_t addr, void *buf, size_t len)
{
	ssize_t n;

	if (!in || in->memfd < 0)
		return -EINVAL;
	n = pread(in->memfd, buf, len, (off_t)addr);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int inj_mem_write(struct inj *in, uint64_t addr, const void *buf, size_t len)
{
	ssize_t n;

	if (!in || in->memfd < 0)
		return -EINVAL;
	n = pwrite(in->memfd, buf, len, (off_t)addr);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}


/* Self-restore switch (tests): see inj_force_self_restore(). */
static bool self_restore;

void inj_force_self_restore(bool on)
{
	self_restore = on;
}

static int step_to(struct inj *in, int idx, int want, uint64_t deadline, bool *interrupted);

/*
 * Let a thread that carries borrowed state run on, as it would with no tracer, up to
 * the exit of its rt_sigreturn (the trampoline's or the bootstrap's restorer's): from
 * there it has its own context back.  It stays in that syscall-exit stop.
 */
int inj_run_home(struct inj *in, int idx, uint64_t deadline, bool *interrupted)
{
	struct __ptrace_syscall_info info;
	int err;

	for (;;) {
		err = step_to(in, idx, PTRACE_SYSCALL_INFO_ENTRY, deadline, interrupted);
		if (err)
			return err;
		memset(&info, 0, sizeof(info));
		if (ptrace(PTRACE_GET_SYSCALL_INFO, in->t[idx].tid, sizeof(info), &info) <= 0)
			return -errno;
		err = step_to(in, idx, PTRACE_SYSCALL_INFO_EXIT, deadline, interrupted);
		if (err || info.entry.nr == __NR_rt_sigreturn)
			return err;
	}
}


/* ---- remote system calls ---- */

struct rseq_cs_abi {
	uint32_t version;
	uint32_t flags;
	uint64_t start_ip;
	uint64_t post_commit_offset;
	uint64_t abort_ip;
};

/*
 * A thread stopped inside an rseq critical section would be aborted by the kernel when
 * it next returns to user space.  Our borrowed ip is outside the section, so the kernel
 * just clears rseq_cs and the abort would be lost: apply it to the saved registers.
 */
static void rseq_fixup(struct inj *in, pid_t tid, arch_regs_t *r)
{
	struct __ptrace_rseq_configuration conf;
	struct rseq_cs_abi cs;
	uint64_t cs_ptr;
	uint32_t sig;

	memset(&conf, 0, sizeof(conf));
	if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, tid, sizeof(conf), &conf) <= 0)
		return;
	if (!conf.rseq_abi_pointer)
		return;
	/* struct rseq: u32 cpu_id_start, u32 cpu_id, u64 rseq_cs */
	if (inj_mem_read(in, conf.rseq_abi_pointer + 8, &cs_ptr, sizeof(cs_ptr)) || !cs_ptr)
		return;
	if (inj_mem_read(in, cs_ptr, &cs, sizeof(cs)))
		return;
	if (arch_ip(r) - cs.start_ip >= cs.post_commit_offset)
		return;
	if (inj_mem_read(in, cs.abort_ip - 4, &sig, sizeof(sig)) || sig != conf.signature)
		return;
	arch_set_ip(r, cs.abort_ip);
}

/*
 * Resume @tid with PTRACE_SYSCALL until it reaches a syscall stop of kind @want
 * (PTRACE_SYSCALL_INFO_ENTRY/EXIT).  Returns 0, -ESRCH, -EFAULT (a fault signal:
 * the call did not run as planned) or -ETIMEDOUT.
 */
static int step_to(struct inj *in, int idx, int want, uint64_t deadline, bool *interrupted)
{
	struct inj_thread *t = &in->t[idx];
	int sig = 0;

	for (;;) {
		struct __ptrace_syscall_info info;
		unsigned event;
		int st, err;

		if (ptrace(PTRACE_SYSCALL, t->tid, 0, (void *)(long)sig) < 0) {
			if (errno == ESRCH) {
				inj_mark_gone(t);
				return -ESRCH;
			}
			return -errno;
		}
		sig = 0;
		err = inj_wait_tid(t->tid, deadline, &st);
		if (err == -ETIMEDOUT && !*interrupted) {
			/* The call blocks: interrupt it, it comes back with -EINTR or -ERESTART*. */
			*interrupted = true;
			ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
			deadline = clock_mono_ns() + (uint64_t)in->timeout_ms * 1000000ull;
			err = inj_wait_tid(t->tid, deadline, &st);
		}
		if (err == -ETIMEDOUT)
			return err;
		if (err || WIFEXITED(st) || WIFSIGNALED(st)) {
			inj_mark_gone(t);
			return -ESRCH;
		}
		event = (unsigned)st >> 16;
		if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
			memset(&info, 0, sizeof(info));
			if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof(info), &info) > 0 &&
			    info.op == want)
				return 0;
			continue;
		}
		if (event == PTRACE_EVENT_STOP) {
			/* a stale interrupt, or a group stop that began meanwhile */
			if (inj_is_stop_signal(WSTOPSIG(st)))
				t->group_stop = true;
			continue;
		}
		if (event)
			continue;
		/* signal-delivery stop: everything but SIGKILL/SIGSTOP is blocked */
		if (WSTOPSIG(st) == SIGSTOP) {
			t->pending_stop = true;
			continue;
		}
		return -EFAULT;	/* a synchronous fault, suppressed */
	}
}

/* After a timed-out call: is the thread in some ptrace stop now (registers writable)? */
static bool interrupted_stop(struct inj *in, int idx)
{
	arch_regs_t r;

	return arch_regs_get(in->t[idx].tid, &r) == 0;
}

/*
 * Put the thread's own mask back, then its own registers, and park it in get_signal()
 * again (see top).  In this order: until the registers are back its ip is in code that
 * finishes the call and restores everything without us, so a monitor killed between two
 * of these ptrace calls leaves a thread that still gets home (with its own mask).
 */
int inj_restore_thread(struct inj *in, int idx, const arch_regs_t *regs,
			  uint64_t mask)
{
	pid_t tid = in->t[idx].tid;
	int err = 0;

	if (ptrace(PTRACE_SETSIGMASK, tid, sizeof(mask), &mask) < 0 ||
	    arch_regs_set(tid, regs) < 0)
		err = -errno;
	if (!err) {
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
		if (ptrace(PTRACE_CONT, tid, 0, 0) < 0)
			err = -errno;
	}
	if (!err)
		err = inj_park(in, idx, clock_mono_ns() + (uint64_t)in->timeout_ms * 1000000ull);
	if (err == -ESRCH)
		inj_mark_gone(&in->t[idx]);
	return err;
}

/* Step the borrowed thread over one whole system call (its entry and exit stops). */
static int step_over(struct inj *in, int idx, uint64_t deadline, bool *interrupted)
{
	int err = step_to(in, idx, PTRACE_SYSCALL_INFO_ENTRY, deadline, interrupted);

	return err ? err : step_to(in, idx, PTRACE_SYSCALL_INFO_EXIT, deadline, interrupted);
}

/* The same for our call @nr, recording the stage "@pfx:CALL" at its entry (stage.h). */
int inj_step_call(struct inj *in, int idx, uint64_t deadline, bool *interrupted, const char *pfx,
		  long nr)
{
	int err = step_to(in, idx, PTRACE_SYSCALL_INFO_ENTRY, deadline, interrupted);

	if (err)
		return err;
	stage_enter_nr(pfx, nr);
	return step_to(in, idx, PTRACE_SYSCALL_INFO_EXIT, deadline, interrupted);
}

/*
 * Ask the guard about the calls thread @idx is about to make: the injected one at @ip,
 * then what its trampoline makes alone if we die (the close of a taken fd, the
 * rt_sigreturn home), whose arguments and addresses are left unknown to the proof.
 */
static int ask_guard(struct inj *in, int idx, uint64_t ip, long nr, const long a[6],
		     bool take_fd, enum inj_guard_ask ask)
{
	struct inj_call c[3];
	int n = 0;

	memset(c, 0, sizeof(c));
	c[n].nr = nr;
	c[n].ip = ip + ARCH_SYSCALL_LEN;
	memcpy(c[n++].args, a, sizeof(c[0].args));
	if (take_fd) {
		c[n].nr = __NR_close;
		c[n++].unknown = 1u | INJ_CALL_IP_UNKNOWN;
	}
	c[n].nr = __NR_rt_sigreturn;
	c[n++].unknown = 0x3fu | INJ_CALL_IP_UNKNOWN;
	in->guard_why[0] = '\0';
	return in->guard(in->guard_ctx, in->t[idx].tid, c, n, ask, in->guard_why,
			 sizeof(in->guard_why));
}

/* Suspended: the thread must survive the filters seeing the call (see "Seccomp
 * suspension" above); not suspended: they must allow it. */
int inj_guard_needed(const struct inj *in)
{
	if (!in->seccomp)
		return 0;
	if (!in->suspended && !in->allow_seccomp)
		return -EPERM;
	return in->guard != NULL;
}

/* May thread @idx make call @nr at @ip (the guard, for a filtered target)?  0 or -errno. */
static int guard_call(struct inj *in, int idx, uint64_t ip, long nr, const long a[6],
		      bool take_fd)
{
	int need = inj_guard_needed(in);

	if (need <= 0)
		return need;
	return ask_guard(in, idx, ip, nr, a, take_fd,
			 in->suspended ? INJ_GUARD_SURVIVED : INJ_GUARD_ALLOWED);
}

/*
 * Point thread @idx at our code (@ip, stack pointer @sp, call @nr with @a) and block every
 * signal.  Registers before the mask: a borrowed mask is only ever seen with our ip.
 * Returns 0, -ESRCH (gone) or -errno (*@restore_needed: the registers were set, put them
 * back).
 */
int inj_borrow_thread(struct inj *in, int idx, uint64_t ip, uint64_t sp, long nr,
			 const long a[6], bool *restore_needed)
{
	arch_regs_t regs = in->cpu.regs;
	uint64_t all = ~0ull;
	pid_t tid = in->t[idx].tid;
	int err;

	*restore_needed = false;
	arch_set_call(&regs, ip, nr, a);
	arch_set_sp(&regs, sp);
	if (arch_regs_set(tid, &regs) < 0) {
		err = -errno;
		if (err == -ESRCH)
			inj_mark_gone(&in->t[idx]);
		return err;
	}
	*restore_needed = true;
	if (ptrace(PTRACE_SETSIGMASK, tid, sizeof(all), &all) < 0)
		return -errno;
	in->t[idx].parked = false;
	return 0;
}

/* Let the thread run the rest of our code alone (as with a dead monitor) and park it. */
static int go_home(struct inj *in, int idx, uint64_t deadline, bool *interrupted)
{
	pid_t tid = in->t[idx].tid;
	int err = inj_run_home(in, idx, deadline, interrupted);

	if (!err) {
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
		if (ptrace(PTRACE_CONT, tid, 0, 0) < 0)
			err = -errno;
	}
	if (!err)
		err = inj_park(in, idx, deadline);
	if (err == -ESRCH)
		inj_mark_gone(&in->t[idx]);
	return err;
}

/*
 * After an injected call (or chain) on thread @idx ended with @err: mark it dirty if it
 * runs our code alone and does not stop, or give it its own state back.
 */
static int end_call(struct inj *in, int idx, int err, bool interrupted, uint64_t deadline,
		    const arch_regs_t *restore)
{
	int err2;

	if (!err && interrupted)
		err = -ETIMEDOUT;
	if (err == -ESRCH)
		return err;
	if (err == -ETIMEDOUT && !in->t[idx].parked && !interrupted_stop(in, idx)) {
		/* It does not stop: the trampoline finishes and restores it on its own. */
		in->t[idx].dirty = true;
		return err;
	}
	if (!err && self_restore)	/* the path a dead monitor leaves: our code restores it */
		return go_home(in, idx, deadline, &interrupted);
	err2 = inj_restore_thread(in, idx, restore, in->cpu.mask);
	return err ? err : err2;
}

/*
 * One injected call on thread @idx, whose own state is in in->cpu and whose restore
 * frame is already written.  The call starts at @ip with stack pointer @sp: code that,
 * run alone, makes the call and then rt_sigreturns to that frame.  With @take_fd the
 * result is a descriptor in the target: we copy it into *local_fd and step over the
 * trampoline's close() of the target's copy before we restore.  @restore: the registers
 * to put back (in->cpu.regs after the rseq fix-up).
 */
int inj_run_call(struct inj *in, int idx, uint64_t ip, uint64_t sp, long nr,
		    const long a[6], bool take_fd, const arch_regs_t *restore,
		    long *ret, int *local_fd)
{
	arch_regs_t regs;
	bool interrupted = false, restore_needed;
	pid_t tid = in->t[idx].tid;
	uint64_t deadline;
	int err, err2;

	err = guard_call(in, idx, ip, nr, a, take_fd);
	if (err)
		return err;
	err = inj_borrow_thread(in, idx, ip, sp, nr, a, &restore_needed);
	if (err) {
		if (restore_needed)
			inj_restore_thread(in, idx, restore, in->cpu.mask);
		return err;
	}
	deadline = clock_mono_ns() + (uint64_t)in->timeout_ms * 1000000ull;
	err = inj_step_call(in, idx, deadline, &interrupted, in->stage_pfx ? in->stage_pfx : "call",
			    nr);
	if (!err) {
		if (arch_regs_get(tid, &regs) < 0)
			err = -errno;
		else
			*ret = arch_call_result(&regs);
		stage_enter_nr("tramp", nr);
	}
	if (!err && take_fd && *ret >= 0) {
		err = inj_getfd(in, (int)*ret, local_fd);
		err2 = step_over(in, idx, deadline, &interrupted);	/* its close() */
		if (!err)
			err = err2;
		if (err && !err2 && *local_fd >= 0) {
			close(*local_fd);
			*local_fd = -1;
		}
	}
	return end_call(in, idx, err, interrupted, deadline, restore);
}

/*
 * A chain (inj_syscall_chain): its code written to the scratch page, run like one call,
 * stopping at the exit of each of its calls for ch->at_exit.  If something goes wrong
 * midway, the thread runs the rest of the chain - the undo of what it did - alone.
 */
/*
 * A chain runs several calls, and if mevitop dies midway the thread makes the rest alone,
 * under its filters again (suspended or not).  So for a target under seccomp the chain
 * runs only if the guard proves every call it can make allowed on every path; with no
 * guard, the filters are suspended and were proven to allow every listed call (or the
 * target was allowed with no filter worth proving).  A chain that lists no calls never
 * runs in a filtered target.
 */
static int guard_chain(struct inj *in, int idx, const struct inj_chain *ch)
{
	if (!in->seccomp)
		return 0;
	if (!ch->calls || ch->ncalls <= 0 || (!in->suspended && !in->allow_seccomp))
		return -EPERM;
	in->guard_why[0] = '\0';
	return in->guard ? in->guard(in->guard_ctx, in->t[idx].tid, ch->calls, ch->ncalls,
				     INJ_GUARD_ALLOWED, in->guard_why, sizeof(in->guard_why)) : 0;
}

int inj_run_chain(struct inj *in, int idx, const struct inj_chain *ch,
		     const arch_regs_t *restore)
{
	static const long none[6];
	uint8_t code[SCRATCH_FRAME_OFF - SCRATCH_CHAIN_OFF];
	uint64_t at = in->scratch + SCRATCH_CHAIN_OFF, deadline;
	bool interrupted = false, restore_needed;
	pid_t tid = in->t[idx].tid;
	int err, step;
	size_t n;

	err = guard_chain(in, idx, ch);
	if (err)
		return err;
	n = ch->build(code, sizeof(code), at, in->entry[ARCH_TRAMP_RESTORE]);
	if (!n)
		return -EOVERFLOW;
	err = inj_mem_write(in, at, code, n);
	if (err)
		return err;
	err = inj_borrow_thread(in, idx, at, arch_sp(&in->cpu.regs), -1, none, &restore_needed);
	if (err) {
		if (restore_needed)
			inj_restore_thread(in, idx, restore, in->cpu.mask);
		return err;
	}
	deadline = clock_mono_ns() + (uint64_t)in->timeout_ms * 1000000ull;
	for (step = 0; step < ch->nsteps; step++) {
		struct __ptrace_syscall_info info;
		arch_regs_t regs;
		long nr;

		err = step_to(in, idx, PTRACE_SYSCALL_INFO_ENTRY, deadline, &interrupted);
		if (err)
			break;
		memset(&info, 0, sizeof(info));
		if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(info), &info) <= 0) {
			err = -errno;
			break;
		}
		nr = (long)info.entry.nr;
		stage_enter_nr("chain", nr);
		err = step_to(in, idx, PTRACE_SYSCALL_INFO_EXIT, deadline, &interrupted);
		if (err)
			break;
		if (nr == __NR_rt_sigreturn) {
			/* the code went home early: the thread has its own state again */
			ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			if (ptrace(PTRACE_CONT, tid, 0, 0) < 0)
				return -errno;
			return inj_park(in, idx, deadline);
		}
		if (arch_regs_get(tid, &regs) < 0) {
			err = -errno;
			break;
		}
		if (ch->at_exit(ch->ctx, in, step, nr, arch_call_result(&regs)))
			break;
	}
	if (err && err != -ESRCH && (in->t[idx].parked || interrupted_stop(in, idx)) &&
	    go_home(in, idx, deadline, &interrupted) == 0)
		return err;
	return end_call(in, idx, err, interrupted, deadline, restore);
}

/*
 * Read thread @idx's state into in->cpu and write the frame that restores it at @addr
 * (pretcode @pretcode).  The frame carries the syscall restart pre-applied, because
 * rt_sigreturn disables it; with the monitor alive it is never used (inj_restore_thread()
 * keeps the kernel's own restart), only when the thread has to get home alone.
 */
int inj_save_thread(struct inj *in, int idx, uint64_t addr, uint64_t pretcode,
		       arch_regs_t *restore)
{
	arch_regs_t fr;
	pid_t tid = in->t[idx].tid;
	int err;

	err = arch_cpu_get(tid, &in->cpu);
	if (err) {
		if (err == -ESRCH)
			inj_mark_gone(&in->t[idx]);
		return err;
	}
	*restore = in->cpu.regs;
	rseq_fixup(in, tid, restore);
	fr = *restore;
	arch_apply_restart(&fr);
	err = arch_frame_build(in->frame, sizeof(in->frame), addr, pretcode, &fr, &in->cpu);
	if (!err)
		err = inj_mem_write(in, addr, in->frame, arch_frame_size(in->cpu.xsize));
	return err;
}

/*
 * The thread to inject into: a parked one, the main thread first.  With @stack, only a
 * thread whose stack pointer lies in that mapping (the bootstrap writes its frame there,
 * see scratch_bootstrap).
 */
int inj_pick_thread(struct inj *in, const struct inj_vma *stack)
{
	int first = -1;

	for (int i = 0; i < in->nr; i++) {
		arch_regs_t r;

		if (!in->t[i].parked || in->t[i].gone)
			continue;
		if (stack && (arch_regs_get(in->t[i].tid, &r) < 0 ||
			      arch_sp(&r) < stack->start + PAGE_SIZE_4K || arch_sp(&r) >= stack->end))
			continue;
		if (in->t[i].tid == in->pid)
			return i;
		if (first < 0)
			first = i;
	}
	return first;
}


int inj_follow_clone_event(struct inj *in, pid_t tid)
{
	unsigned long msg = 0;
	char path[64];
	int idx;

	if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) < 0 || !msg)
		return 0;
	if (inj_find_thread(in, (pid_t)msg))
		return 0;
	idx = inj_add_thread(in, (pid_t)msg);
	if (idx < 0)
		return idx;
	in->t[idx].running = true;
	snprintf(path, sizeof(path), "/proc/%d/task/%lu", in->pid, msg);
	in->t[idx].foreign = access(path, F_OK) != 0;
	return 0;
}


int inj_getfd(struct inj *in, int remote_fd, int *local_fd)
{
	int fd;

	if (!in || !local_fd || in->pidfd < 0)
		return -EINVAL;
	fd = (int)syscall(__NR_pidfd_getfd, in->pidfd, remote_fd, 0);
	if (fd < 0)
		return -errno;
	*local_fd = fd;
	return 0;
}

