/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inject_int.h - what the injection's own files share (inject.c: the tracer thread, calls,
 * release; inject_seize.c: seize; inject_spawn.c: run's CMD; inject_call.c: one call's
 * machinery; scratch.c: the scratch page).  Nothing outside user/exact/inject*.c and scratch.c
 * includes it: the API is inject.h.
 */
#ifndef MEVITOP_INJECT_INT_H
#define MEVITOP_INJECT_INT_H

#include "exact/inject.h"
#include "exact/inject_maps.h"
#include "exact/arch.h"
#include "lib/log.h"

#include <pthread.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

/* Older headers lack these. */
#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP	128
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open		434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd	438
#endif
#ifndef PTRACE_O_SUSPEND_SECCOMP
#define PTRACE_O_SUSPEND_SECCOMP	(1 << 21)
#endif
#ifndef PF_EXITING
#define PF_EXITING		0x00000004
#endif
#ifndef PF_KTHREAD
#define PF_KTHREAD		0x00200000
#endif

#define INJ_DEFAULT_TIMEOUT_MS	2000
#define INJ_HOLD_FACTOR		10	/* watchdog: idle hold limit = factor * timeout */

struct inj_thread {
	pid_t tid;
	bool was_stopped;	/* in group-stop when we seized it */
	bool parked;		/* sits in an event stop inside get_signal() */
	bool running;		/* resumed by us and still attached (follow mode) */
	bool gone;		/* exited (or detached foreign task) */
	bool group_stop;	/* its last event stop was a group stop */
	bool pending_stop;	/* we swallowed a SIGSTOP while it ran our call */
	bool foreign;		/* auto-attached task of another process: detach it */
	bool dirty;		/* runs the trampoline alone (a call that never stopped) */
};

enum inj_op { OP_NONE, OP_SYSCALL, OP_FOLLOW, OP_RELEASE, OP_CALL };

struct inj {
	pid_t pid;
	int pidfd;
	int memfd;
	bool spawned;
	bool allow_seccomp;
	bool suspended;		/* the parked threads hold PTRACE_O_SUSPEND_SECCOMP */
	inj_guard_fn guard;	/* proves each call allowed, or survivable when suspended */
	void *guard_ctx;
	char guard_why[512];	/* why it last refused one */
	bool released;		/* every thread detached (release or watchdog) */
	bool watchdog_fired;
	int seccomp;
	unsigned timeout_ms;
	unsigned long options;	/* ptrace options in effect */
	uint64_t gadget_ip;	/* bootstrap: `syscall; xor..; ret` in the target's code */
	uint64_t restorer_ip;	/* bootstrap: the rt_sigreturn restorer in its code */
	uint64_t scratch;	/* our page in the target (0: not mapped yet) */
	uint64_t scratch_len;
	bool scratch_memfd;	/* backed by the memfd (else anonymous) */
	char scratch_note[256];	/* why it is anonymous, or left at release ("": neither) */
	const char *stage_pfx;	/* tests (stage.h): inj_run_call's stage prefix, NULL "call" */
	uint64_t entry[ARCH_TRAMP_NENTRIES];	/* trampoline entry points in it */
	struct arch_cpu cpu;	/* the borrowed thread's own state (too big for a stack) */
	uint8_t frame[ARCH_FRAME_MAX];	/* the rt_sigreturn frame being written */
	int nr, cap;
	struct inj_thread *t;

	/* worker thread and its one-slot request queue */
	pthread_t worker;
	bool worker_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum inj_op op;		/* posted request, OP_NONE when idle */
	bool op_done;
	long op_nr;
	long op_args[6];
	long op_ret;
	bool op_take_fd;
	const struct inj_chain *op_chain;	/* inj_syscall_chain(): run this instead */
	int op_fd;
	unsigned op_timeout;
	int op_status;
	int (*op_fn)(struct inj *in, void *arg);
	void *op_arg;
	int op_err;
	bool start_done;
	int start_err;
	char *const *spawn_argv;
	char why[WHY_LEN];
};

/* ---- inject_call.c ---- */

void inj_sleep_us(unsigned us);
/* in->why = the formatted reason */
void inj_set_why(struct inj *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void inj_mark_gone(struct inj_thread *t);
bool inj_is_stop_signal(int sig);
struct inj_thread *inj_find_thread(struct inj *in, pid_t tid);
/* Append thread @tid; its index or -ENOMEM. */
int inj_add_thread(struct inj *in, pid_t tid);
/* waitpid(@tid, __WALL) until @deadline: 0, -ETIMEDOUT or -errno. */
int inj_wait_tid(pid_t tid, uint64_t deadline, int *status);
/* A PTRACE_EVENT_CLONE of @tid (follow mode): the new thread is added, running. */
int inj_follow_clone_event(struct inj *in, pid_t tid);
/* Wait until thread @idx sits in an event stop (a PTRACE_INTERRUPT queued): 0, -errno. */
int inj_park(struct inj *in, int idx, uint64_t deadline);
/* PTRACE_SYSCALL thread @idx over our call @nr, recording the stage "@pfx:CALL" at its
 * entry (stage.h). */
int inj_step_call(struct inj *in, int idx, uint64_t deadline, bool *interrupted, const char *pfx,
		  long nr);
/* Let a thread carrying borrowed state run alone up to the exit of its rt_sigreturn. */
int inj_run_home(struct inj *in, int idx, uint64_t deadline, bool *interrupted);
/* A parked thread, the main thread first; with @stack one whose sp lies in it. */
int inj_pick_thread(struct inj *in, const struct inj_vma *stack);
/* Read thread @idx's state into in->cpu, write its restoring frame at @addr. */
int inj_save_thread(struct inj *in, int idx, uint64_t addr, uint64_t pretcode,
		    arch_regs_t *restore);
/* One injected call at @ip (code that makes it and rt_sigreturns home alone). */
int inj_run_call(struct inj *in, int idx, uint64_t ip, uint64_t sp, long nr, const long a[6],
		 bool take_fd, const arch_regs_t *restore, long *ret, int *local_fd);
/* Point thread @idx at our code and block every signal (registers first). */
int inj_borrow_thread(struct inj *in, int idx, uint64_t ip, uint64_t sp, long nr,
		      const long a[6], bool *restore_needed);
/* Its own mask, then registers, back; parked again. */
int inj_restore_thread(struct inj *in, int idx, const arch_regs_t *regs,
		       uint64_t mask);
/* Must the guard be asked about a call?  1, 0 (no filters, or nothing to ask), -EPERM
 * (filtered and neither suspended nor proven allowed). */
int inj_guard_needed(const struct inj *in);
/* A chain (inj_syscall_chain) on thread @idx, whose restore frame is written. */
int inj_run_chain(struct inj *in, int idx, const struct inj_chain *ch,
		  const arch_regs_t *restore);

#endif /* MEVITOP_INJECT_INT_H */
