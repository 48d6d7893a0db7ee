// SPDX-License-Identifier: GPL-2.0
/*
 * inject.c - staged ptrace injection: seize, run remote system calls, release.
 *
 * How a remote system call is run without writing to the target's text:
 *
 *   Every thread we hold is parked in a PTRACE_EVENT_STOP, which the kernel enters from
 *   get_signal() on the way back to user space.  If the thread had been blocked in a
 *   system call, its registers at that point still say so (the call's number, the result
 *   -ERESTARTSYS & co., the ip just after the syscall instruction) and the kernel will
 *   apply its restart rules only *after* get_signal() returns.
 *
 *   To run a call we save registers, signal mask and extended FPU state, write an
 *   rt_sigreturn frame holding them into our scratch page in the target, point the ip at
 *   the page's trampoline (the syscall [; close the new fd]; rt_sigreturn on that frame),
 *   mark the thread as in no system call so the pending restart logic leaves our registers
 *   alone (arch_set_call), block every signal - in that order: a borrowed register or mask
 *   is only ever seen with the ip in
 *   code that gets the thread home by itself - and step it with PTRACE_SYSCALL to the
 *   syscall-exit stop.  If the monitor dies at any point from here on, the kernel lets
 *   the thread go and the trampoline finishes: no fd left, everything restored.  With
 *   the monitor alive we put the mask and then the registers back ourselves and, instead
 *   of resuming from that syscall-exit stop (where the kernel
 *   would return -ERESTARTSYS to user space verbatim), queue a PTRACE_INTERRUPT and
 *   continue: the thread goes through get_signal() again and parks in a fresh event
 *   stop with its original registers.  When it is finally detached, the kernel restarts
 *   the interrupted call, or delivers a signal that arrived meanwhile, exactly as if we
 *   had never been there - including -ERESTART_RESTARTBLOCK (nanosleep, poll) and the
 *   sigsuspend()/ppoll() temporary masks.  CRIU's compel instead rewrites the registers
 *   to the restarted state itself, which turns a signal that arrives while the thread is
 *   held into a lost EINTR.  (The frame, used only when we are dead, has to pre-apply
 *   the restart the same way: rt_sigreturn disables it.)
 *
 *   The scratch page is mapped at each attach by a bootstrap that borrows the target's
 *   own code, and unmapped the same way before the target is let go (scratch.c); only a
 *   killed attach leaves it, for the next one to reuse (doc/exact.md).  One call's
 *   machinery is inject_call.c.
 *
 * The ptrace tracer is a worker thread owned by each struct inj, so the monitor can
 * call from any thread, and so a tracee that never stopped can still be released (the
 * kernel detaches everything a tracer thread held when it exits).
 */
#include "exact/inject.h"
#include "exact/inject_maps.h"
#include "exact/arch.h"
#include "exact/inject_int.h"
#include "exact/inject_seize.h"
#include "exact/inject_spawn.h"
#include "exact/scratch.h"
#include "exact/stage.h"
#include "kernel/procfs.h"
#include "lib/page.h"
#include "lib/syscall_err.h"
#include "lib/clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- calls and release, in the tracer thread ---- */

static int do_syscall(struct inj *in, long nr, const long a[6], bool take_fd, long *ret,
		      int *local_fd)
{
	arch_regs_t restore;
	int idx, err;

	if (local_fd)
		*local_fd = -1;
	if (in->seccomp && !in->suspended && !in->allow_seccomp)
		return -EPERM;
	for (int i = 0; i < in->nr; i++)
		if (in->t[i].dirty && !in->t[i].gone)
			return -ETIMEDOUT;	/* its frame is still in use */
	idx = inj_pick_thread(in, NULL);
	if (idx < 0) {
		for (int i = 0; i < in->nr; i++)
			if (in->t[i].running)
				return -EBUSY;	/* followed and running: inj_follow_exec() first */
		return -ESRCH;
	}
	err = scratch_bootstrap(in);
	if (err)
		return err;
	idx = inj_pick_thread(in, NULL);
	if (idx < 0)
		return -ESRCH;
	err = inj_save_thread(in, idx, in->scratch + SCRATCH_FRAME_OFF, 0, &restore);
	if (!err && in->scratch_len < scratch_need(in->cpu.xsize))
		err = -EOVERFLOW;
	if (err)
		return err;
	if (in->op_chain)
		return inj_run_chain(in, idx, in->op_chain, &restore);
	return inj_run_call(in, idx, in->entry[take_fd ? ARCH_TRAMP_CLOSE : ARCH_TRAMP_PLAIN],
			    arch_sp(&in->cpu.regs), nr, a, take_fd, &restore, ret, local_fd);
}

/* Wait for any ptrace stop of @tid (or its exit): 0 stopped, -ESRCH, -ETIMEDOUT. */
static int wait_stopped_any(pid_t tid, uint64_t deadline)
{
	int st, err = inj_wait_tid(tid, deadline, &st);

	if (err)
		return err == -ETIMEDOUT ? err : -ESRCH;
	return WIFSTOPPED(st) ? 0 : -ESRCH;
}

static int do_release(struct inj *in)
{
	uint64_t deadline = clock_mono_ns() + (uint64_t)in->timeout_ms * 1000000ull;
	int err;

	if (in->released)
		return 0;
	/* Unmap the scratch page first (scratch.h): every thread is parked at its own code.
	 * If that cannot be done the page stays, as a killed monitor would leave it. */
	scratch_drop(in);
	/*
	 * A call that never stopped: the thread runs our trampoline, which finishes and
	 * restores it by itself.  Let it go as soon as it is in a stop we can detach from.
	 */
	for (int i = 0; i < in->nr; i++) {
		struct inj_thread *t = &in->t[i];

		if (t->gone || !t->dirty)
			continue;
		ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
		if (wait_stopped_any(t->tid, deadline) == 0)
			ptrace(PTRACE_DETACH, t->tid, 0, 0);
		inj_mark_gone(t);
	}
	/* followed threads are running: stop them first (new ones may appear meanwhile) */
	for (int i = 0; i < in->nr; i++) {
		if (in->t[i].gone || !in->t[i].running)
			continue;
		ptrace(PTRACE_INTERRUPT, in->t[i].tid, 0, 0);
		if (inj_park(in, i, deadline) == 0 && in->t[i].foreign) {
			ptrace(PTRACE_DETACH, in->t[i].tid, 0, 0);
			inj_mark_gone(&in->t[i]);
		}
	}
	stage_enter("inj", "detach");
	err = inj_detach_all(in);
	in->released = true;
	return err;
}

/* ---- worker thread ---- */

static void *worker_main(void *arg)
{
	struct inj *in = arg;
	sigset_t all;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	err = in->spawn_argv ? inj_spawn_threads(in) : inj_seize_threads(in);

	pthread_mutex_lock(&in->lock);
	in->start_err = err;
	in->start_done = true;
	pthread_cond_broadcast(&in->cond);
	if (err) {
		pthread_mutex_unlock(&in->lock);
		return NULL;
	}
	for (;;) {
		enum inj_op op;

		while (in->op == OP_NONE || in->op_done) {
			bool holding = false;

			for (int i = 0; i < in->nr && !in->released; i++)
				holding |= in->t[i].parked;
			if (holding) {
				uint64_t limit = (uint64_t)in->timeout_ms * INJ_HOLD_FACTOR * 1000000ull;
				uint64_t when = clock_mono_ns() + limit;
				struct timespec ts = {
					.tv_sec = (time_t)(when / 1000000000ull),
					.tv_nsec = (long)(when % 1000000000ull),
				};

				if (pthread_cond_timedwait(&in->cond, &in->lock, &ts) == ETIMEDOUT &&
				    (in->op == OP_NONE || in->op_done)) {
					/* watchdog: the caller went quiet while holding the target */
					pthread_mutex_unlock(&in->lock);
					do_release(in);
					pthread_mutex_lock(&in->lock);
					in->watchdog_fired = true;
				}
			} else {
				pthread_cond_wait(&in->cond, &in->lock);
			}
		}
		op = in->op;
		pthread_mutex_unlock(&in->lock);

		switch (op) {
		case OP_SYSCALL:
			err = in->released ? (in->watchdog_fired ? -ETIMEDOUT : -ESRCH)
					   : do_syscall(in, in->op_nr, in->op_args, in->op_take_fd,
							&in->op_ret, &in->op_fd);
			break;
		case OP_FOLLOW:
			err = in->released ? -ESRCH :
			      inj_follow_threads(in, in->op_timeout, &in->op_status);
			break;
		case OP_RELEASE:
			err = do_release(in);
			break;
		case OP_CALL:
			err = in->released ? -ESRCH : in->op_fn(in, in->op_arg);
			break;
		default:
			err = -EINVAL;
			break;
		}

		pthread_mutex_lock(&in->lock);
		in->op_err = err;
		in->op_done = true;
		pthread_cond_broadcast(&in->cond);
		if (op == OP_RELEASE)
			break;
	}
	pthread_mutex_unlock(&in->lock);
	return NULL;
}

static int run_op(struct inj *in, enum inj_op op)
{
	int err;

	pthread_mutex_lock(&in->lock);
	in->op = op;
	in->op_done = false;
	pthread_cond_broadcast(&in->cond);
	while (!in->op_done)
		pthread_cond_wait(&in->cond, &in->lock);
	in->op = OP_NONE;
	err = in->op_err;
	pthread_mutex_unlock(&in->lock);
	return err;
}

static void inj_free(struct inj *in)
{
	if (!in)
		return;
	if (in->pidfd >= 0)
		close(in->pidfd);
	if (in->memfd >= 0)
		close(in->memfd);
	pthread_cond_destroy(&in->cond);
	pthread_mutex_destroy(&in->lock);
	free(in->t);
	free(in);
}

static int start(struct inj *in, char *why, size_t whylen)
{
	pthread_condattr_t ca;
	int err;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&in->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&in->lock, NULL);
	err = -pthread_create(&in->worker, NULL, worker_main, in);
	if (err) {
		inj_copy_why(why, whylen, "failed to create the ptrace worker thread");
		return err;
	}
	in->worker_started = true;
	pthread_mutex_lock(&in->lock);
	while (!in->start_done)
		pthread_cond_wait(&in->cond, &in->lock);
	err = in->start_err;
	pthread_mutex_unlock(&in->lock);
	if (err) {
		/* the worker exits: anything it still held is detached by the kernel */
		pthread_join(in->worker, NULL);
		in->worker_started = false;
		inj_copy_why(why, whylen, in->why);
	}
	return err;
}

static struct inj *inj_alloc(void)
{
	struct inj *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->pidfd = -1;
	in->memfd = -1;
	in->timeout_ms = INJ_DEFAULT_TIMEOUT_MS;
	return in;
}

/* ---- public API ---- */

int inj_seize(pid_t pid, unsigned timeout_ms, struct inj **out, char *why, size_t whylen)
{
	struct inj *in;
	int err;

	inj_copy_why(why, whylen, "");
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (arch_unsupported()) {	/* a stub backend (exact/arch.h) */
		inj_copy_why(why, whylen, arch_unsupported());
		return -EOPNOTSUPP;
	}
	in = inj_alloc();
	if (!in) {
		inj_copy_why(why, whylen, "failed to allocate injection state: out of memory");
		return -ENOMEM;
	}
	in->pid = pid;
	if (timeout_ms)
		in->timeout_ms = timeout_ms;
	err = start(in, why, whylen);
	if (err) {
		inj_free(in);
		return err;
	}
	*out = in;
	return 0;
}

int inj_spawn(char *const argv[], struct inj **out, pid_t *pid, char *why, size_t whylen)
{
	struct inj *in;
	int err;

	inj_copy_why(why, whylen, "");
	if (!out || !argv || !argv[0])
		return -EINVAL;
	*out = NULL;
	if (arch_unsupported()) {	/* a stub backend (exact/arch.h) */
		inj_copy_why(why, whylen, arch_unsupported());
		return -EOPNOTSUPP;
	}
	in = inj_alloc();
	if (!in) {
		inj_copy_why(why, whylen, "failed to allocate injection state: out of memory");
		return -ENOMEM;
	}
	in->spawn_argv = argv;
	err = start(in, why, whylen);
	if (err) {
		inj_free(in);
		return err;
	}
	in->spawn_argv = NULL;
	if (pid)
		*pid = in->pid;
	*out = in;
	return 0;
}

int inj_syscall(struct inj *in, long nr, const long args[6], long *ret)
{
	static const long zero[6];
	long r = 0;
	int err;

	if (!in || !in->worker_started)
		return -EINVAL;
	in->op_nr = nr;
	memcpy(in->op_args, args ? args : zero, sizeof(in->op_args));
	in->op_ret = 0;
	err = run_op(in, OP_SYSCALL);
	r = in->op_ret;
	if (ret)
		*ret = r;
	return err;
}

int inj_syscall_fd(struct inj *in, long nr, const long args[6], long *ret, int *local_fd)
{
	int err;

	if (!in || !in->worker_started || !local_fd)
		return -EINVAL;
	memcpy(in->op_args, args, sizeof(in->op_args));
	in->op_nr = nr;
	in->op_ret = 0;
	in->op_take_fd = true;
	in->op_fd = -1;
	err = run_op(in, OP_SYSCALL);
	in->op_take_fd = false;
	if (ret)
		*ret = in->op_ret;
	*local_fd = in->op_fd;
	return err;
}

int inj_syscall_chain(struct inj *in, const struct inj_chain *ch)
{
	int err;

	if (!in || !in->worker_started || !ch || !ch->build || !ch->at_exit || ch->nsteps <= 0)
		return -EINVAL;
	in->op_chain = ch;
	err = run_op(in, OP_SYSCALL);
	in->op_chain = NULL;
	return err;
}

int inj_follow_exec(struct inj *in, unsigned timeout_ms, int *status)
{
	int err;

	if (!in || !in->worker_started)
		return -EINVAL;
	if (!in->spawned)
		return -EINVAL;
	in->op_timeout = timeout_ms;
	in->op_status = 0;
	err = run_op(in, OP_FOLLOW);
	if (err == -ESRCH && status)
		*status = in->op_status;
	return err;
}

int inj_release(struct inj *in)
{
	int err = 0;

	if (!in)
		return 0;
	if (in->worker_started) {
		err = run_op(in, OP_RELEASE);
		pthread_join(in->worker, NULL);
		in->worker_started = false;
	}
	inj_free(in);
	return err;
}

pid_t inj_pid(const struct inj *in)
{
	return in ? in->pid : -1;
}

int inj_nr_threads(const struct inj *in)
{
	return in ? in->nr : 0;
}

bool inj_thread_was_stopped(const struct inj *in, int idx, pid_t *tid)
{
	if (!in || idx < 0 || idx >= in->nr)
		return false;
	if (tid)
		*tid = in->t[idx].tid;
	return in->t[idx].was_stopped;
}

int inj_seccomp_mode(const struct inj *in)
{
	return in ? in->seccomp : 0;
}

void inj_allow_seccomp(struct inj *in, bool allow)
{
	if (in)
		in->allow_seccomp = allow;
}

void inj_set_guard(struct inj *in, inj_guard_fn fn, void *ctx)
{
	if (!in)
		return;
	in->guard = fn;
	in->guard_ctx = ctx;
}

const char *inj_guard_why(const struct inj *in)
{
	return in ? in->guard_why : "";
}

bool inj_seccomp_suspended(const struct inj *in)
{
	return in && in->suspended;
}

int inj_run_in_tracer(struct inj *in, int (*fn)(struct inj *in, void *arg), void *arg)
{
	if (!in || !in->worker_started || !fn)
		return -EINVAL;
	in->op_fn = fn;
	in->op_arg = arg;
	return run_op(in, OP_CALL);
}

uint64_t inj_syscall_ip(const struct inj *in)
{
	if (!in)
		return 0;
	return in->scratch ? in->entry[ARCH_TRAMP_PLAIN] : in->gadget_ip;
}

uint64_t inj_scratch(const struct inj *in, uint64_t *len)
{
	if (len)
		*len = in ? in->scratch_len : 0;
	return in ? in->scratch : 0;
}
