/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inject.h - a small staged ptrace injection API (in the spirit of CRIU's compel).
 *
 * Stages: inj_seize() (or inj_spawn()) -> inj_syscall()/inj_syscall_fd() any number of
 * times -> inj_release().  Between calls every thread of the target is parked in a ptrace
 * stop inside the kernel's signal path with its own registers and signal mask, so a
 * monitor that dies between two calls leaves the target exactly as it was (the kernel
 * detaches it and it runs on).
 *
 * Safe against the monitor's death *during* a call too (kill -9, OOM killer): a call runs
 * from a scratch page of ours in the target (`/memfd:mevitop-scratch`, one page, mapped by
 * the seize, reused if a killed attach left it, and unmapped by inj_release() and before
 * inj_follow_exec() lets the process run: exact/scratch.h) whose code makes the call, closes the
 * descriptor of an fd-producing call, and rt_sigreturns to a frame holding the thread's
 * own registers, signal mask and FPU/AVX state.  Whenever a thread carries borrowed
 * state its ip is in that code, so with or without us it gets home.  Mapping and
 * unmapping the page need calls made without code of ours: they run at the vDSO's
 * `syscall; ret` with their return address on the main stack pointing at libc's
 * rt_sigreturn restorer (scratch.c).
 *
 * Threads: each struct inj owns a small worker thread that is the ptrace tracer, so
 * inj_* calls may come from any thread of the monitor (one at a time).  Besides the
 * bounded seize, the worker is a watchdog: if the caller holds the target stopped and
 * makes no call for 10 x timeout_ms, it detaches everything on its own and later calls
 * return -ETIMEDOUT.  If the worker cannot detach a thread that never stopped, it exits,
 * and the kernel drops that tracee's pending stop.  No other code in the monitor may
 * waitpid(-1, ..., __WALL) while a struct inj exists: it would steal stop reports.
 *
 * Tests: MEVITOP_TEST_KILL_US=N in the environment has the kernel SIGKILL this process
 * N microseconds after its first PTRACE_SEIZE (tests/integration/killsweep.py).
 *
 * Errors: functions return 0 or -errno.  Functions taking why/whylen also write a
 * human-readable reason there ("already traced by PID 12 (gdb)").
 */
#ifndef MEVITOP_INJECT_H
#define MEVITOP_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct inj;					/* a seized process */

/*
 * Seize every thread of @pid (rescanning /proc/PID/task until the set is stable) and park
 * each in a ptrace stop.  If the whole seize does not finish within @timeout_ms (0 means
 * 2000 ms) everything is detached again and -ETIMEDOUT returned.
 * Errors: -ESRCH no such process (or it is a zombie / exiting), -EPERM already traced or
 * not permitted, -EINVAL kernel thread or ourselves, -ETIMEDOUT a thread would not stop.
 */
int inj_seize(pid_t pid, unsigned timeout_ms, struct inj **out, char *why, size_t whylen);

/*
 * Run one system call @nr with @args in the target's main thread (or the first parked
 * thread) and store its raw return value (-errno on failure) in *@ret.  Registers and
 * the signal mask are restored exactly; a thread that was interrupted inside a blocking
 * system call is put back where the kernel will restart it (or deliver a signal that
 * arrived meanwhile) with the kernel's own restart rules; a thread stopped inside an
 * rseq critical section resumes at its abort handler, as the kernel would have done.
 * Refused with -EPERM if the target runs under a seccomp filter, unless its filters are
 * suspended or inj_allow_seccomp() was called (and then the guard, if any, agrees): a
 * filter may kill the target for an unexpected call.
 * Returns 0 if the call ran (look at *ret), -ESRCH if the thread died, -EBUSY while a
 * followed child runs, -ETIMEDOUT if it did not complete within the seize timeout (it
 * is interrupted and restored; if it does not even stop, inj_release() tries again).
 */
int inj_syscall(struct inj *in, long nr, const long args[6], long *ret);

/*
 * An fd-producing call (userfaultfd, memfd_create, ...): run it like inj_syscall(), copy
 * the new descriptor into our process (*local_fd, -1 if none) and close the target's
 * copy before the thread resumes - in the trampoline, so the target never keeps it, even
 * if we die right after the call.  *ret: the call's raw result (the remote fd number or
 * -errno).  Returns 0 if the call ran and its fd, if any, was taken.
 */
int inj_syscall_fd(struct inj *in, long nr, const long args[6], long *ret, int *local_fd);

/*
 * A chain: several system calls that must run together in the target because each one's
 * undo is a later one of the chain (a socketpair and the close of both ends).  Its code
 * (bytes from @build, written into the scratch page at @code_addr) runs like the
 * trampoline: from a frame holding the thread's own state, ending with a jump to
 * @restore_addr (the trampoline's rt_sigreturn), so a monitor killed at any point leaves
 * a thread that runs the rest of the chain - its undo - and gets home alone.  With the
 * monitor alive the thread stops at each call's exit and @at_exit(ctx, in, step, nr, ret)
 * runs (it may read and write the target's memory and take its fds); after the exit of
 * call @nsteps - 1, or when at_exit returns 1, the thread is restored (at_exit must only
 * say 1 where the rest of the chain undoes nothing).  Returns 0 if the chain ran, or the
 * same errors as inj_syscall().
 */
struct inj_call;
struct inj_chain {
	size_t (*build)(uint8_t *buf, size_t len, uint64_t code_addr, uint64_t restore_addr);
	int nsteps;
	int (*at_exit)(void *ctx, struct inj *in, int step, long nr, long ret);
	void *ctx;
	/* every call the code can make, for a target under seccomp (its guard, below) */
	const struct inj_call *calls;
	int ncalls;
};
int inj_syscall_chain(struct inj *in, const struct inj_chain *ch);

/* Copy the target's file descriptor @remote_fd into our process (pidfd_getfd). */
int inj_getfd(struct inj *in, int remote_fd, int *local_fd);

/*
 * Detach every thread and free @in (NULL is fine).  Threads that were running keep
 * running; a process that was in group-stop (SIGSTOP/SIGTSTP) when seized, or was
 * stopped meanwhile, stays stopped.  Returns the first error seen while detaching.
 */
int inj_release(struct inj *in);

/*
 * For `mevitop run -- CMD`: fork and exec @argv (PATH is searched) as a seized tracee
 * with PTRACE_O_EXITKILL (it dies if we die while it is attached: only for processes
 * we start), parked right after a successful exec and ready for inj_syscall().
 * Exec failure returns its -errno (-ENOENT, -EACCES...) with why="failed to execute
 * CMD: <strerror>"; the child is reaped.  -EOPNOTSUPP: the new image cannot be injected
 * (32-bit, or its code lacks what the injection borrows; why says which); the child is
 * killed.  *pid receives the child's PID.  After
 * inj_release() the child is an ordinary child of the caller (reap it with waitpid).
 */
int inj_spawn(char *const argv[], struct inj **out, pid_t *pid, char *why, size_t whylen);

/*
 * Following a spawned child (optional, spawned children only).  Resume it while staying
 * attached, forwarding signals and honouring job control, until it calls execve again:
 * then return 0 with the process parked just after the new image was loaded, ready for
 * inj_syscall() (a userfaultfd injected before is dead: the old mm is gone; inject a new
 * one).  Returns -ETIMEDOUT if nothing happened within @timeout_ms (it keeps running,
 * still attached: call again, or inj_release()), -ESRCH when the process has exited
 * (*status, if not NULL, gets its wait status; it is reaped).  Forked children are not
 * followed by ptrace: a userfaultfd with UFFD_FEATURE_EVENT_FORK follows them.
 */
int inj_follow_exec(struct inj *in, unsigned timeout_ms, int *status);

/* Read or write target memory through /proc/PID/mem (data only: never write its text). */
int inj_mem_read(struct inj *in, uint64_t addr, void *buf, size_t len);
int inj_mem_write(struct inj *in, uint64_t addr, const void *buf, size_t len);

/* Introspection and switches */
pid_t inj_pid(const struct inj *in);
int inj_nr_threads(const struct inj *in);
/* Was thread @idx (0 <= idx < inj_nr_threads) in group-stop when seized?  Its TID in *tid. */
bool inj_thread_was_stopped(const struct inj *in, int idx, pid_t *tid);
/* 0 none, 1 strict, 2 filter (from /proc/PID/status "Seccomp:") */
int inj_seccomp_mode(const struct inj *in);
/* Allow inj_syscall() although the target has a seccomp filter (caller checked it). */
void inj_allow_seccomp(struct inj *in, bool allow);

/*
 * Seccomp.  Two ways for injected calls to get past a target's filters (issue 13):
 *  - inj_set_suspend_seccomp(true) (process-wide; needs CAP_SYS_ADMIN, the kernel's
 *    CONFIG_CHECKPOINT_RESTORE, and no filter on mevitop itself): seized threads hold
 *    PTRACE_O_SUSPEND_SECCOMP while they are parked for us, so the filters do not run for
 *    our calls; inj_seccomp_suspended() says whether this target got it.  A followed `run`
 *    child holds it only while parked for an injection, never while it runs.
 *  - a guard (inj_set_guard): inj_run_call asks it, on the tracer thread, before every call,
 *    with the calls the thread will make: the injected one as the filter will see it, then
 *    those its trampoline makes if mevitop dies mid-call (close of an fd-producing call's
 *    result, rt_sigreturn).  Not suspended, it must prove them allowed
 *    (INJ_GUARD_ALLOWED); suspended, that the thread would survive the filters seeing
 *    them, were mevitop killed before the thread passed their check (INJ_GUARD_SURVIVED:
 *    an ERRNO or TRACE verdict just fails the call - not for close, munmap and
 *    rt_sigreturn, which must succeed).  A chain is always asked
 *    INJ_GUARD_ALLOWED: a thread running it alone must get to its end.  A non-zero answer
 *    refuses the call, with why in @why (inj_guard_why()).
 */
struct inj_call {
	long nr;
	uint64_t ip;		/* as seccomp_data shows it: the address after `syscall` */
	long args[6];
	unsigned unknown;	/* bit i: args[i] is decided at run time; INJ_CALL_IP_UNKNOWN */
};
#define INJ_CALL_IP_UNKNOWN	(1u << 6)
enum inj_guard_ask { INJ_GUARD_ALLOWED, INJ_GUARD_SURVIVED };
typedef int (*inj_guard_fn)(void *ctx, pid_t tid, const struct inj_call *calls, int n,
			    enum inj_guard_ask ask, char *why, size_t whylen);
/* Why the guard last refused a call on @in ("" if it has not). */
const char *inj_guard_why(const struct inj *in);
void inj_set_guard(struct inj *in, inj_guard_fn fn, void *ctx);
void inj_set_suspend_seccomp(bool on);
bool inj_seccomp_suspended(const struct inj *in);
/* Run @fn(@in, @arg) on the tracer thread (ptrace requests work only there); its result. */
int inj_run_in_tracer(struct inj *in, int (*fn)(struct inj *in, void *arg), void *arg);
/*
 * Tests: after each call let the thread restore itself - run the rest of the trampoline
 * and its rt_sigreturn, exactly what happens when the monitor dies mid-call - instead of
 * the tracer putting registers and mask back.  (Process-wide, like uffd_set_api_path.)
 */
void inj_force_self_restore(bool on);

/* Where injected calls start in the target: the trampoline (or the bootstrap gadget). */
uint64_t inj_syscall_ip(const struct inj *in);
/* The scratch page in the target: its address (0 if none) and length in *len. */
uint64_t inj_scratch(const struct inj *in, uint64_t *len);

#endif /* MEVITOP_INJECT_H */
