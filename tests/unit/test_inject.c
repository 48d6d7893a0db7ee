// SPDX-License-Identifier: GPL-2.0
/*
 * test_inject.c - the ptrace injection API against real processes.
 *
 * Targets are forked children.  Their threads keep known constants in every general
 * purpose register and check them in a loop (a register we fail to restore shows up
 * as a failure flag), and their main thread sits in read() on a command pipe, echoing
 * what it read, so a broken syscall restart shows up as a short or failed read.
 * Everything is synchronised on pipes and shared-memory counters; deadlines only
 * guard against hangs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "children.h"
#include "exact/arch.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exact/inject.h"

#define NTHR		3
#define GUARD_MS	5000

struct shared {
	volatile uint64_t progress[NTHR];
	volatile int bad[NTHR];		/* register or mask check failed */
	volatile int tids[NTHR];
	volatile int reader_tid;
	volatile int stop;
	volatile int sleeping;		/* the nanosleep thread is about to sleep */
	volatile long ns_ret;
	volatile int ns_errno;
	volatile uint64_t ns_elapsed_ms;
	volatile int ns_done;
	volatile int handler_ran;
};

struct report {
	long n;			/* read() result in the target's main thread */
	int err;		/* its errno */
	char c;			/* the byte read */
};

struct target {
	pid_t pid;
	struct shared *sh;
	int cmd_w;
	int rep_r;
};

enum {
	TF_HANDLER = 1,		/* SIGUSR1 handler without SA_RESTART in the main thread */
	TF_NANOSLEEP = 2,	/* the main thread sleeps 300 ms (clock_nanosleep), then computes */
	TF_MAIN_COMPUTES = 4,	/* the main thread runs the register check loop */
};

/* ---- the target ---- */

static int check_registers(void)
{
	long bad;

	/* Every GPR but rsp/rbp holds a constant; rax counts down. */
	__asm__ __volatile__(
		"mov $0x11111111, %%rbx\n\t"
		"mov $0x22222222, %%rcx\n\t"
		"mov $0x33333333, %%rdx\n\t"
		"mov $0x44444444, %%rsi\n\t"
		"mov $0x55555555, %%rdi\n\t"
		"mov $0x66666666, %%r8\n\t"
		"mov $0x77777777, %%r9\n\t"
		"mov $0x18181818, %%r10\n\t"
		"mov $0x19191919, %%r11\n\t"
		"mov $0x2a2a2a2a, %%r12\n\t"
		"mov $0x3b3b3b3b, %%r13\n\t"
		"mov $0x4c4c4c4c, %%r14\n\t"
		"mov $0x5d5d5d5d, %%r15\n\t"
		"mov $200000, %%rax\n"
		"1:\n\t"
		"cmp $0x11111111, %%rbx\n\tjne 2f\n\t"
		"cmp $0x22222222, %%rcx\n\tjne 2f\n\t"
		"cmp $0x33333333, %%rdx\n\tjne 2f\n\t"
		"cmp $0x44444444, %%rsi\n\tjne 2f\n\t"
		"cmp $0x55555555, %%rdi\n\tjne 2f\n\t"
		"cmp $0x66666666, %%r8\n\tjne 2f\n\t"
		"cmp $0x77777777, %%r9\n\tjne 2f\n\t"
		"cmp $0x18181818, %%r10\n\tjne 2f\n\t"
		"cmp $0x19191919, %%r11\n\tjne 2f\n\t"
		"cmp $0x2a2a2a2a, %%r12\n\tjne 2f\n\t"
		"cmp $0x3b3b3b3b, %%r13\n\tjne 2f\n\t"
		"cmp $0x4c4c4c4c, %%r14\n\tjne 2f\n\t"
		"cmp $0x5d5d5d5d, %%r15\n\tjne 2f\n\t"
		"dec %%rax\n\t"
		"jnz 1b\n\t"
		"xor %%eax, %%eax\n\t"
		"jmp 3f\n"
		"2:\n\t"
		"mov $1, %%eax\n"
		"3:\n"
		: "=a"(bad)
		:
		: "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13",
		  "r14", "r15", "cc");
	return (int)bad;
}

/*
 * Roles: NTHR compute slots check registers and masks; one reader echoes the command
 * pipe.  inj_syscall() runs in the main thread, so the main thread takes the role under
 * test: TF_MAIN_COMPUTES (slot 0), TF_NANOSLEEP (slot 0 after a 300 ms sleep), or by
 * default the reader (blocked in read()).
 */
struct tctx {
	struct shared *sh;
	int idx;
	unsigned flags;
	int cmd_r, rep_w;
};

static void compute_loop(struct tctx *c)
{
	struct shared *sh = c->sh;
	sigset_t want, cur;
	stack_t alt = { .ss_size = 65536 }, now;

	sh->tids[c->idx] = (int)syscall(SYS_gettid);
	/* an alternate signal stack the injection must leave alone (rt_sigreturn sets one) */
	alt.ss_sp = malloc(alt.ss_size);
	if (!alt.ss_sp || sigaltstack(&alt, NULL))
		sh->bad[c->idx] |= 4;
	/* a per-thread mask the injection must give back */
	sigemptyset(&want);
	sigaddset(&want, SIGUSR1);
	sigaddset(&want, SIGRTMIN + c->idx);
	pthread_sigmask(SIG_SETMASK, &want, NULL);
	if (c->idx == 0 && (c->flags & TF_NANOSLEEP)) {
		struct timespec ts = { .tv_sec = 0, .tv_nsec = 300 * 1000000L };
		uint64_t t0 = mono_ms();
		long r;

		sh->progress[0]++;
		sh->sleeping = 1;
		r = syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
		sh->ns_errno = r < 0 ? errno : 0;
		sh->ns_ret = r;
		sh->ns_elapsed_ms = mono_ms() - t0;
		sh->ns_done = 1;
	}
	while (!sh->stop) {
		if (check_registers())
			sh->bad[c->idx] |= 1;
		pthread_sigmask(SIG_SETMASK, NULL, &cur);
		if (!sigismember(&cur, SIGUSR1) || !sigismember(&cur, SIGRTMIN + c->idx) ||
		    sigismember(&cur, SIGUSR2))
			sh->bad[c->idx] |= 2;
		if (sigaltstack(NULL, &now) || now.ss_sp != alt.ss_sp || now.ss_flags ||
		    now.ss_size != alt.ss_size)
			sh->bad[c->idx] |= 4;
		sh->progress[c->idx]++;
	}
	/* ASan unmaps a thread's alternate stack at exit: not ours */
	now.ss_flags = SS_DISABLE;
	sigaltstack(&now, NULL);
	free(alt.ss_sp);
}

static void *compute_thread(void *arg)
{
	compute_loop(arg);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
}

static void reader_loop(struct tctx *c)
{
	struct shared *sh = c->sh;

	sh->reader_tid = (int)syscall(SYS_gettid);
	for (;;) {
		struct report rep = { 0 };

		rep.n = read(c->cmd_r, &rep.c, 1);
		rep.err = rep.n < 0 ? errno : 0;
		if (rep.n < 0 && errno == EINTR)
			sh->handler_ran = 1;
		if (write(c->rep_w, &rep, sizeof(rep)) != sizeof(rep))
			_exit(101);
		if ((rep.n == 1 && rep.c == 'q') || rep.n == 0)
			break;
	}
	sh->stop = 1;
}

static void *reader_thread(void *arg)
{
	reader_loop(arg);
	return NULL;
}

static void __attribute__((noreturn)) target_main(struct shared *sh, int cmd_r, int rep_w,
						   unsigned flags)
{
	bool main_computes = flags & (TF_MAIN_COMPUTES | TF_NANOSLEEP);
	struct tctx ctx[NTHR], rctx = { .sh = sh, .flags = flags, .cmd_r = cmd_r, .rep_w = rep_w };
	pthread_t th[NTHR], rth;
	int status = 0;

	if (flags & TF_HANDLER) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;	/* no SA_RESTART: read() must see EINTR */
		sigaction(SIGUSR1, &sa, NULL);
	}
	for (int i = main_computes; i < NTHR; i++) {
		ctx[i] = (struct tctx){ .sh = sh, .idx = i, .flags = flags };
		pthread_create(&th[i], NULL, compute_thread, &ctx[i]);
	}
	if (main_computes) {
		sigset_t usr1;

		/* the reader must not take the main thread's role in signal delivery */
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
		pthread_create(&rth, NULL, reader_thread, &rctx);
		pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	}
	for (int i = main_computes; i < NTHR; i++)
		while (!sh->progress[i])
			sched_yield();
	if (main_computes) {
		sh->tids[0] = getpid();
		sh->progress[0]++;
	}
	while (main_computes && !sh->reader_tid)
		sched_yield();
	if (!main_computes)
		sh->reader_tid = getpid();
	if (write(rep_w, "R", 1) != 1)
		_exit(100);
	if (main_computes) {
		ctx[0] = (struct tctx){ .sh = sh, .idx = 0, .flags = flags };
		compute_loop(&ctx[0]);
		pthread_join(rth, NULL);
	} else {
		reader_loop(&rctx);
	}
	for (int i = main_computes; i < NTHR; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NTHR; i++)
		status |= sh->bad[i];
	_exit(status);
}

/* ---- harness helpers ---- */

static int kill_leftovers(void **state)
{
	(void)state;
	kill_children();
	return 0;
}

static void start_target(struct target *t, unsigned flags)
{
	int cmd[2], rep[2];
	char c = 0;

	t->sh = mmap(NULL, sizeof(*t->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(t->sh != MAP_FAILED);
	assert_int_equal(pipe2(cmd, O_CLOEXEC), 0);
	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	t->pid = fork();
	assert_true(t->pid >= 0);
	if (t->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(cmd[1]);
		close(rep[0]);
		target_main(t->sh, cmd[0], rep[1], flags);
	}
	track(t->pid);
	close(cmd[0]);
	close(rep[1]);
	t->cmd_w = cmd[1];
	t->rep_r = rep[0];
	assert_true(wait_readable(t->rep_r, GUARD_MS));
	assert_int_equal(read(t->rep_r, &c, 1), 1);
	assert_int_equal(c, 'R');
}

/* Send one byte to the main thread's read() and get its report back. */
static void echo(struct target *t, char c, struct report *rep)
{
	assert_int_equal(write(t->cmd_w, &c, 1), 1);
	assert_true(wait_readable(t->rep_r, GUARD_MS));
	assert_int_equal(read(t->rep_r, rep, sizeof(*rep)), (ssize_t)sizeof(*rep));
}

/* Stop the target cleanly and return its exit status (0: every check passed). */
static int finish_target(struct target *t)
{
	struct report rep;
	int st = 0;

	echo(t, 'q', &rep);
	assert_int_equal(waitpid(t->pid, &st, 0), t->pid);
	untrack(t->pid);
	close(t->cmd_w);
	close(t->rep_r);
	munmap(t->sh, sizeof(*t->sh));
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* Wait (bounded) until every worker thread made progress again. */
static bool progresses(struct target *t)
{
	uint64_t before[NTHR], deadline = mono_ms() + GUARD_MS;

	for (int i = 0; i < NTHR; i++)
		before[i] = t->sh->progress[i];
	while (mono_ms() < deadline) {
		bool all = true;

		for (int i = 0; i < NTHR; i++)
			all &= t->sh->progress[i] > before[i] + 1;
		if (all)
			return true;
		sleep_ms(1);
	}
	return false;
}

/* Is any task of @t stopped (T) or traced (t)? */
static bool any_stopped(struct target *t)
{
	char s = state_of(t->pid, t->pid);

	if (s == 't' || s == 'T')
		return true;
	for (int i = 0; i < NTHR; i++) {
		s = state_of(t->pid, t->sh->tids[i]);
		if (s == 't' || s == 'T')
			return true;
	}
	s = state_of(t->pid, t->sh->reader_tid);
	return s == 't' || s == 'T';
}

static bool wait_state(pid_t pid, pid_t tid, char want)
{
	uint64_t deadline = mono_ms() + GUARD_MS;

	while (mono_ms() < deadline) {
		if (state_of(pid, tid) == want)
			return true;
		sleep_ms(1);
	}
	return false;
}

static bool maps_contain(pid_t pid, uint64_t addr)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e;

		if (sscanf(line, "%llx-%llx", &s, &e) == 2 && addr >= s && addr < e)
			found = true;
	}
	fclose(f);
	return found;
}

static long remote(struct inj *in, long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	long args[6] = { a0, a1, a2, a3, a4, a5 }, ret = 0;

	assert_int_equal(inj_syscall(in, nr, args, &ret), 0);
	return ret;
}

/* ---- tests ---- */

/* Seize a running multi-threaded target, inject getpid/mmap/munmap many times, and check
 * that its threads never saw a wrong register or mask and its blocked read() still works. */
static void inject_multithreaded(unsigned flags)
{
	struct target t;
	struct report rep;
	struct inj *in = NULL;
	char why[256];

	start_target(&t, flags);
	assert_int_equal(inj_seize(t.pid, 0, &in, why, sizeof(why)), 0);
	assert_int_equal(inj_pid(in), t.pid);
	assert_int_equal(inj_nr_threads(in), NTHR + 1);
	assert_true(inj_syscall_ip(in) != 0);
	/* every thread is held */
	assert_int_equal(state_of(t.pid, t.pid), 't');
	for (int i = 0; i < NTHR; i++)
		assert_int_equal(state_of(t.pid, t.sh->tids[i]), 't');

	for (int round = 0; round < 20; round++) {
		uint64_t magic = 0x6d657669746f70ull + (uint64_t)round, back = 0;
		long addr;

		assert_int_equal(remote(in, SYS_getpid, 0, 0, 0, 0, 0, 0), t.pid);
		addr = remote(in, SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(addr > 0);
		assert_true(maps_contain(t.pid, (uint64_t)addr));
		assert_int_equal(inj_mem_write(in, (uint64_t)addr, &magic, sizeof(magic)), 0);
		assert_int_equal(inj_mem_read(in, (uint64_t)addr, &back, sizeof(back)), 0);
		assert_true(back == magic);
		assert_int_equal(remote(in, SYS_munmap, addr, 4096, 0, 0, 0, 0), 0);
		assert_false(maps_contain(t.pid, (uint64_t)addr));
	}
	/* errors come back as -errno */
	assert_int_equal(remote(in, SYS_close, 12345, 0, 0, 0, 0, 0), -EBADF);
	assert_int_equal(inj_release(in), 0);

	assert_false(any_stopped(&t));
	assert_true(progresses(&t));
	/* the main thread was in read() the whole time: it must read our byte */
	echo(&t, 'x', &rep);
	assert_int_equal(rep.n, 1);
	assert_int_equal(rep.c, 'x');
	assert_int_equal(finish_target(&t), 0);
}

/* The injected (main) thread is in the middle of the register check loop. */
static void test_inject_running_thread(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++)
		inject_multithreaded(TF_MAIN_COMPUTES);
}

/* The injected (main) thread is blocked in read(): it must read our byte afterwards. */
static void test_inject_blocked_read(void **state)
{
	(void)state;
	inject_multithreaded(0);
}

/* A target that was stopped (SIGSTOP) stays stopped after release; a running one runs. */
static void test_release_keeps_stop_state(void **state)
{
	struct target t;
	struct report rep;
	struct inj *in = NULL;
	char why[256];
	pid_t tid;

	(void)state;
	start_target(&t, 0);
	assert_int_equal(kill(t.pid, SIGSTOP), 0);
	assert_true(wait_state(t.pid, t.pid, 'T'));
	for (int i = 0; i < NTHR; i++)
		assert_true(wait_state(t.pid, t.sh->tids[i], 'T'));

	assert_int_equal(inj_seize(t.pid, 0, &in, why, sizeof(why)), 0);
	assert_int_equal(inj_nr_threads(in), NTHR + 1);
	for (int i = 0; i < inj_nr_threads(in); i++)
		assert_true(inj_thread_was_stopped(in, i, &tid));
	assert_int_equal(remote(in, SYS_getpid, 0, 0, 0, 0, 0, 0), t.pid);
	assert_int_equal(inj_release(in), 0);

	/* still stopped (a detached thread passes through R on its way back into the
	 * group stop), and not making progress */
	assert_true(wait_state(t.pid, t.pid, 'T'));
	for (int i = 0; i < NTHR; i++)
		assert_true(wait_state(t.pid, t.sh->tids[i], 'T'));
	{
		uint64_t p0 = t.sh->progress[0];

		sleep_ms(20);
		assert_true(t.sh->progress[0] == p0);
		assert_int_equal(state_of(t.pid, t.pid), 'T');
	}
	/* and it resumes normally */
	assert_int_equal(kill(t.pid, SIGCONT), 0);
	assert_true(progresses(&t));
	assert_false(any_stopped(&t));
	echo(&t, 'y', &rep);
	assert_int_equal(rep.n, 1);
	assert_int_equal(rep.c, 'y');

	/* the running case: seize and release again, it keeps running */
	assert_int_equal(inj_seize(t.pid, 0, &in, why, sizeof(why)), 0);
	for (int i = 0; i < inj_nr_threads(in); i++)
		assert_false(inj_thread_was_stopped(in, i, &tid));
	assert_int_equal(inj_release(in), 0);
	assert_false(any_stopped(&t));
	assert_true(progresses(&t));
	assert_int_equal(finish_target(&t), 0);
}

/* clock_nanosleep interrupted by our stop restarts through restart_syscall: it returns 0
 * after the full 300 ms, not EINTR (what a compel-style register rewrite would give). */
static void test_nanosleep_restart_block(void **state)
{
	struct target t;
	struct inj *in = NULL;
	char why[256], path[64], buf[128];
	uint64_t deadline;
	bool in_sleep = false;

	(void)state;
	start_target(&t, TF_NANOSLEEP);
	deadline = mono_ms() + GUARD_MS;
	while (!t.sh->sleeping && mono_ms() < deadline)
		sleep_ms(1);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", t.pid, t.sh->tids[0]);
	while (!in_sleep && mono_ms() < deadline) {
		FILE *f = fopen(path, "r");

		if (f && fgets(buf, sizeof(buf), f))
			in_sleep = atoi(buf) == SYS_clock_nanosleep;
		if (f)
			fclose(f);
		if (!in_sleep)
			sleep_ms(1);
	}
	assert_true(in_sleep);
	assert_int_equal(inj_seize(t.pid, 0, &in, why, sizeof(why)), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(remote(in, SYS_getpid, 0, 0, 0, 0, 0, 0), t.pid);
	assert_int_equal(inj_release(in), 0);
	deadline = mono_ms() + GUARD_MS;
	while (!t.sh->ns_done && mono_ms() < deadline)
		sleep_ms(1);
	assert_true(t.sh->ns_done);
	assert_int_equal(t.sh->ns_ret, 0);
	assert_int_equal(t.sh->ns_errno, 0);
	assert_true(t.sh->ns_elapsed_ms >= 300);
	assert_int_equal(finish_target(&t), 0);
}

/* The target's state, signals and wait channel, on stdout (for a failure's message). */
static void dump_task(pid_t pid)
{
	static const char *const files[] = { "status", "wchan", "stack" };
	char path[64], line[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, files[i]);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (i || !strncmp(line, "State", 5) || !strncmp(line, "Sig", 3) ||
			    !strncmp(line, "ShdPnd", 6) || !strncmp(line, "TracerPid", 9))
				printf("%s: %s%s", files[i], line, strchr(line, '\n') ? "" : "\n");
		fclose(f);
	}
}

/* A signal that arrives while we hold the target is delivered after release with the
 * kernel's own semantics: the read() without SA_RESTART fails with EINTR, the handler
 * ran, and the next read() works. */
static void test_signal_while_held(void **state)
{
	struct target t;
	struct report rep;
	struct inj *in = NULL;
	char why[256];

	(void)state;
	start_target(&t, TF_HANDLER);
	assert_int_equal(inj_seize(t.pid, 0, &in, why, sizeof(why)), 0);
	assert_int_equal(kill(t.pid, SIGUSR1), 0);
	assert_int_equal(remote(in, SYS_getpid, 0, 0, 0, 0, 0, 0), t.pid);
	assert_int_equal(inj_release(in), 0);
	if (!wait_readable(t.rep_r, GUARD_MS)) {
		/* Seen once (a fresh-machine run on a loaded box), not reproduced: what the
		 * target was doing tells a lost signal from a starved one. */
		dump_task(t.pid);
		fail_msg("no report from the target %d within %d ms of the release", (int)t.pid,
			 GUARD_MS);
	}
	assert_int_equal(read(t.rep_r, &rep, sizeof(rep)), (ssize_t)sizeof(rep));
	assert_int_equal(rep.n, -1);
	assert_int_equal(rep.err, EINTR);
	assert_true(t.sh->handler_ran);
	echo(&t, 'z', &rep);
	assert_int_equal(rep.n, 1);
	assert_int_equal(rep.c, 'z');
	assert_int_equal(finish_target(&t), 0);
}

/*
 * Seize, inject and release leave /proc/PID/maps and the fd table exactly as they were,
 * but for the one scratch page (named, if the kernel names anonymous mappings), which
 * the next seize reuses instead of mapping another.
 */
static void test_maps_and_fds_unchanged(void **state)
{
	struct target t;
	struct inj *in = NULL;
	char why[256], path[64];
	char *maps0, *maps1, *fds0, *fds1;
	uint64_t scratch, scratch_len;

	(void)state;
	start_target(&t, 0);
	snprintf(path, sizeof(path), "/proc/%d/maps", t.pid);
	maps0 = slurp(path);
	fds0 = NULL;
	{
		char cmd[128];
		FILE *p;

		snprintf(cmd, sizeof(cmd), "ls -l /proc/%d/fd | awk '{print $9, $11}'", t.pid);
		p = popen(cmd, "r");
		assert_non_null(p);
		fds0 = calloc(1, 8192);
		assert_non_null(fds0);
		assert_true(fread(fds0, 1, 8191, p) > 0);
		pclose(p);
	}
	assert_int_equal(inj_seize(t.pid, 0, &in, why, sizeof(why)), 0);
	for (int i = 0; i < 5; i++) {
		long addr = remote(in, SYS_mmap, 0, 8192, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		long fd = remote(in, SYS_dup, 0, 0, 0, 0, 0, 0);

		assert_true(addr > 0);
		assert_true(fd >= 0);
		assert_int_equal(remote(in, SYS_close, fd, 0, 0, 0, 0, 0), 0);
		assert_int_equal(remote(in, SYS_munmap, addr, 8192, 0, 0, 0, 0), 0);
	}
	scratch = inj_scratch(in, &scratch_len);
	assert_true(scratch != 0);
	assert_int_equal(scratch_len, 4096);
	{
		/* while held: the page is the memfd's, r-x, private (scratch.h) */
		char line[128], *held = slurp(path);

		snprintf(line, sizeof(line), "\n%" PRIx64 "-%" PRIx64 " r-xp 00000000 ", scratch,
			 scratch + scratch_len);
		assert_non_null(strstr(held, line));
		assert_non_null(strstr(strstr(held, line) + 1, " /memfd:mevitop-scratch (deleted)\n"));
		free(held);
	}
	assert_int_equal(inj_release(in), 0);
	/* released: unmapped, the maps byte for byte as before; again after a second attach */
	maps1 = slurp(path);
	assert_string_equal(maps0, maps1);
	{
		char *again;

		assert_int_equal(inj_seize(t.pid, 0, &in, why, sizeof(why)), 0);
		assert_int_equal(remote(in, SYS_getpid, 0, 0, 0, 0, 0, 0), t.pid);
		assert_int_equal(inj_release(in), 0);
		again = slurp(path);
		assert_string_equal(maps0, again);
		free(again);
	}
	{
		char cmd[128];
		FILE *p;

		snprintf(cmd, sizeof(cmd), "ls -l /proc/%d/fd | awk '{print $9, $11}'", t.pid);
		p = popen(cmd, "r");
		assert_non_null(p);
		fds1 = calloc(1, 8192);
		assert_non_null(fds1);
		assert_true(fread(fds1, 1, 8191, p) > 0);
		pclose(p);
	}
	assert_string_equal(maps0, maps1);
	assert_string_equal(fds0, fds1);
	free(maps0);
	free(maps1);
	free(fds0);
	free(fds1);
	assert_int_equal(finish_target(&t), 0);
}

/* A target traced by someone else is refused, naming the tracer. */
static void test_already_traced(void **state)
{
	struct target t;
	struct inj *in = NULL;
	char why[256], expect[128];
	int sync[2], st;
	pid_t tracer;
	char c;

	(void)state;
	start_target(&t, 0);
	assert_int_equal(pipe(sync), 0);
	tracer = fork();
	assert_true(tracer >= 0);
	if (tracer == 0) {
		int ok = ptrace(PTRACE_SEIZE, t.pid, 0, 0) == 0;

		if (write(sync[1], &ok, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_true(wait_readable(sync[0], GUARD_MS));
	assert_int_equal(read(sync[0], &c, 1), 1);
	assert_int_equal(c, 1);
	assert_int_equal(inj_seize(t.pid, 0, &in, why, sizeof(why)), -EPERM);
	assert_null(in);
	snprintf(expect, sizeof(expect), "already traced by PID %d (", tracer);
	assert_non_null(strstr(why, expect));
	kill(tracer, SIGKILL);
	waitpid(tracer, &st, 0);
	close(sync[0]);
	close(sync[1]);
	/* the tracer is gone: now it works */
	assert_int_equal(inj_seize(t.pid, 0, &in, why, sizeof(why)), 0);
	assert_int_equal(inj_release(in), 0);
	assert_int_equal(finish_target(&t), 0);
}

static void test_bad_targets(void **state)
{
	struct inj *in = NULL;
	char why[256], expect[64];
	pid_t pid;
	int st;

	(void)state;
	/* a PID that no longer exists */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(inj_seize(pid, 0, &in, why, sizeof(why)), -ESRCH);
	snprintf(expect, sizeof(expect), "no such process %d", pid);
	assert_string_equal(why, expect);
	assert_null(in);

	/* a zombie */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_true(wait_state(pid, pid, 'Z'));
	assert_int_equal(inj_seize(pid, 0, &in, why, sizeof(why)), -ESRCH);
	assert_non_null(strstr(why, "zombie"));
	assert_int_equal(waitpid(pid, &st, 0), pid);

	/* ourselves, a kernel thread */
	assert_int_equal(inj_seize(getpid(), 0, &in, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "ourselves"));
	assert_int_equal(inj_seize(2, 0, &in, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "kernel thread"));
	assert_int_equal(inj_seize(-5, 0, &in, why, sizeof(why)), -EINVAL);
	assert_int_equal(inj_release(NULL), 0);
}

/* A thread that cannot stop (a vfork parent waits uninterruptibly) makes the seize time
 * out; the target is not left stopped and runs on when the vfork child exits. */
static void test_seize_timeout_backs_out(void **state)
{
	struct inj *in = NULL;
	char why[256];
	int go[2], done[2], st;
	uint64_t t0;
	pid_t pid;
	char c;

	(void)state;
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pid_t v = vfork();

		if (v == 0) {
			char b;

			if (read(go[0], &b, 1) != 1)
				_exit(1);
			_exit(0);
		}
		if (write(done[1], "d", 1) != 1)
			_exit(2);
		waitpid(v, &st, 0);
		/* keep running until told to finish */
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		_exit(0);
	}
	/* the parent sits in vfork's uninterruptible wait (state D) */
	assert_true(wait_state(pid, pid, 'D'));
	t0 = mono_ms();
	assert_int_equal(inj_seize(pid, 200, &in, why, sizeof(why)), -ETIMEDOUT);
	assert_true(mono_ms() - t0 < 2000);
	assert_non_null(strstr(why, "did not stop"));
	assert_null(in);
	/* let the vfork child exit: the parent continues, not stopped, and reports */
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_true(wait_readable(done[0], GUARD_MS));
	assert_int_equal(read(done[0], &c, 1), 1);
	assert_true(state_of(pid, pid) != 't' && state_of(pid, pid) != 'T');
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

/* The watchdog: a caller that holds the target and goes quiet loses it after
 * 10 x timeout; the target runs on and later calls say -ETIMEDOUT. */
static void test_hold_watchdog(void **state)
{
	struct target t;
	struct inj *in = NULL;
	char why[256];
	long ret;
	uint64_t deadline;

	(void)state;
	start_target(&t, 0);
	assert_int_equal(inj_seize(t.pid, 50, &in, why, sizeof(why)), 0);
	assert_true(any_stopped(&t));
	deadline = mono_ms() + GUARD_MS;
	while (any_stopped(&t) && mono_ms() < deadline)
		sleep_ms(5);
	assert_false(any_stopped(&t));
	assert_true(progresses(&t));
	assert_int_equal(inj_syscall(in, SYS_getpid, NULL, &ret), -ETIMEDOUT);
	assert_int_equal(inj_release(in), 0);
	assert_int_equal(finish_target(&t), 0);
}

static void test_spawn(void **state)
{
	char *missing[] = { "/nonexistent/mevitop-no-such-command", NULL };
	char *truecmd[] = { "true", NULL };
	struct inj *in = NULL;
	char why[256];
	pid_t pid = 0;
	int st;

	(void)state;
	assert_int_equal(inj_spawn(missing, &in, &pid, why, sizeof(why)), -ENOENT);
	assert_null(in);
	assert_string_equal(why, "failed to execute /nonexistent/mevitop-no-such-command: "
				 "No such file or directory");

	assert_int_equal(inj_spawn(truecmd, &in, &pid, why, sizeof(why)), 0);
	assert_true(pid > 0);
	assert_int_equal(state_of(pid, pid), 't');
	assert_int_equal(remote(in, SYS_getpid, 0, 0, 0, 0, 0, 0), pid);
	assert_int_equal(remote(in, SYS_getppid, 0, 0, 0, 0, 0, 0), getpid());
	assert_int_equal(inj_release(in), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* Following a spawned shell into the program it execs, then to its exit. */
static void test_spawn_follow_exec(void **state)
{
	char *cmd[] = { "/bin/sh", "-c", "exec /bin/sh -c 'exit 7'", NULL };
	struct inj *in = NULL;
	char why[256], path[64], exe[256];
	pid_t pid = 0;
	ssize_t n;
	int st = 0;

	(void)state;
	assert_int_equal(inj_spawn(cmd, &in, &pid, why, sizeof(why)), 0);
	assert_int_equal(inj_follow_exec(in, GUARD_MS, &st), 0);
	/* parked in the new image */
	assert_int_equal(state_of(pid, pid), 't');
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	{
		FILE *f = fopen(path, "r");

		assert_non_null(f);
		n = (ssize_t)fread(exe, 1, sizeof(exe) - 1, f);
		fclose(f);
		assert_true(n > 0);
		exe[n] = '\0';
		/* argv[0] "/bin/sh", argv[1] "-c", argv[2] "exit 7" */
		assert_string_equal(exe + strlen(exe) + 1 + 3, "exit 7");
	}
	assert_int_equal(remote(in, SYS_getpid, 0, 0, 0, 0, 0, 0), pid);
	assert_int_equal(inj_follow_exec(in, GUARD_MS, &st), -ESRCH);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 7);
	assert_int_equal(inj_release(in), 0);
}

/* ---- the path a dead monitor leaves: the thread restores itself (rt_sigreturn) ---- */

static int self_restore_off(void **state)
{
	inj_force_self_restore(false);
	return kill_leftovers(state);
}

/* Registers, masks and the alternate stack of a computing main thread, via the frame. */
static void test_self_restore_running_thread(void **state)
{
	(void)state;
	inj_force_self_restore(true);
	inject_multithreaded(TF_MAIN_COMPUTES);
}

/* A main thread blocked in read(): the frame's pre-applied restart reads our byte. */
static void test_self_restore_blocked_read(void **state)
{
	(void)state;
	inj_force_self_restore(true);
	inject_multithreaded(0);
}

/* clock_nanosleep (-ERESTART_RESTARTBLOCK) sleeps on and returns 0, never EINTR. */
static void test_self_restore_nanosleep(void **state)
{
	inj_force_self_restore(true);
	test_nanosleep_restart_block(state);
}

/* A stopped target stays stopped, a running one runs. */
static void test_self_restore_stop_state(void **state)
{
	inj_force_self_restore(true);
	test_release_keeps_stop_state(state);
}

/* ---- the x86 pieces: trampoline bytes and the bootstrap's code patterns ---- */

/* The trampoline's entries reach the same rt_sigreturn sequence, aimed at frame + 8. */
static void test_trampoline_bytes(void **state)
{
	uint8_t code[128];
	uint64_t entry[ARCH_TRAMP_NENTRIES], base = 0x7f0000001040ull, frame = 0x7f00000010c0ull;
	size_t n = arch_tramp_build(code, sizeof(code), base, frame, entry), restore = 0;
	int32_t disp;

	(void)state;
	assert_true(n > 0 && n <= sizeof(code));
	for (size_t i = 0; i + 7 <= n; i++)
		if (code[i] == 0x48 && code[i + 1] == 0x8d && code[i + 2] == 0x25)
			restore = i;	/* lea disp32(%rip),%rsp */
	assert_true(restore > 0);
	memcpy(&disp, code + restore + 3, sizeof(disp));
	assert_int_equal(base + restore + 7 + (uint64_t)(int64_t)disp, frame + 8);
	assert_memory_equal(code + restore + 7, "\xb8\x0f\x00\x00\x00\x0f\x05", 7);
	/* plain: syscall; jmp restore */
	{
		size_t at = (size_t)(entry[ARCH_TRAMP_PLAIN] - base);

		assert_memory_equal(code + at, "\x0f\x05\xeb", 3);
		assert_int_equal(at + 4 + code[at + 3], restore);
	}
	/* close: syscall; test; js restore; mov %rax,%rdi; mov $3,%eax; syscall; restore */
	{
		size_t at = (size_t)(entry[ARCH_TRAMP_CLOSE] - base);

		assert_memory_equal(code + at, "\x0f\x05\x48\x85\xc0\x78", 6);
		assert_int_equal(at + 7 + code[at + 6], restore);
		assert_memory_equal(code + at + 7, "\x48\x89\xc7\xb8\x03\x00\x00\x00\x0f\x05", 10);
		assert_int_equal(at + 17, restore);
	}
}

/* Independent checks of what a match must be. */
static bool is_gadget_at(const uint8_t *p, size_t n, size_t at)
{
	size_t j = at + 2;

	if (at + 2 > n || p[at] != 0x0f || p[at + 1] != 0x05)
		return false;
	for (;;) {
		size_t rex = j < n && (p[j] == 0x45 || p[j] == 0x48 || p[j] == 0x4d);

		if (j < n && p[j] == 0xc3)
			return true;
		if (j + rex + 2 > n || p[j + rex] != 0x31)
			return false;
		if ((p[j + rex + 1] & 0xc0) != 0xc0 ||
		    ((p[j + rex + 1] >> 3) & 7) != (p[j + rex + 1] & 7))
			return false;
		j += rex + 2;
	}
}

static bool is_restorer_at(const uint8_t *p, size_t n, size_t at)
{
	return (at + 7 <= n && !memcmp(p + at, "\xb8\x0f\x00\x00\x00\x0f\x05", 7)) ||
	       (at + 9 <= n && !memcmp(p + at, "\x48\xc7\xc0\x0f\x00\x00\x00\x0f\x05", 9));
}

static void test_code_patterns(void **state)
{
	static const uint8_t vdso[] = { 0x90, 0x0f, 0x05, 0x31, 0xd2, 0x31, 0xc9, 0x45, 0x31,
					0xdb, 0xc3 };
	static const uint8_t no_ret[] = { 0x0f, 0x05, 0x31, 0xd1, 0xc3, 0x0f, 0x05, 0x90, 0xc3,
					  0x0f, 0x05, 0x31 };
	static const uint8_t glibc[] = { 0x66, 0x90, 0x90, 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00,
					 0x00, 0x0f, 0x05 };
	static const uint8_t bytes[] = { 0x0f, 0x05, 0x31, 0xc0, 0xc9, 0xd2, 0xdb, 0x45, 0x48,
					 0x4d, 0xc3, 0xb8, 0x00, 0x0f, 0x00, 0xc7 };
	const char *env = getenv("MEVITOP_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);

	(void)state;
	assert_int_equal(arch_find_ret_gadget(vdso, sizeof(vdso)), 1);
	assert_int_equal(arch_find_ret_gadget(no_ret, sizeof(no_ret)), -1);
	assert_int_equal(arch_find_restorer(glibc, sizeof(glibc)), 3);
	assert_int_equal(arch_find_restorer(glibc, sizeof(glibc) - 1), -1);
	/* seeded random code under ASan: exact-size buffers, so an overread is caught */
	printf("test_inject: MEVITOP_TEST_SEED=%" PRIu64 "\n", seed);
	srandom((unsigned)seed);
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)(random() % 40);
		uint8_t *p = malloc(n ? n : 1);
		long g, r;

		assert_non_null(p);
		for (size_t k = 0; k < n; k++)
			p[k] = random() % 4 ? bytes[random() % sizeof(bytes)] : (uint8_t)random();
		g = arch_find_ret_gadget(p, n);
		r = arch_find_restorer(p, n);
		for (long k = 0; k < (g < 0 ? (long)n : g); k++)
			assert_false(is_gadget_at(p, n, (size_t)k));
		if (g >= 0)
			assert_true(is_gadget_at(p, n, (size_t)g));
		for (long k = 0; k < (r < 0 ? (long)n : r); k++)
			assert_false(is_restorer_at(p, n, (size_t)k));
		if (r >= 0)
			assert_true(is_restorer_at(p, n, (size_t)r));
		free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_inject_running_thread, kill_leftovers),
		cmocka_unit_test_teardown(test_inject_blocked_read, kill_leftovers),
		cmocka_unit_test_teardown(test_release_keeps_stop_state, kill_leftovers),
		cmocka_unit_test_teardown(test_nanosleep_restart_block, kill_leftovers),
		cmocka_unit_test_teardown(test_signal_while_held, kill_leftovers),
		cmocka_unit_test_teardown(test_maps_and_fds_unchanged, kill_leftovers),
		cmocka_unit_test_teardown(test_already_traced, kill_leftovers),
		cmocka_unit_test_teardown(test_bad_targets, kill_leftovers),
		cmocka_unit_test_teardown(test_seize_timeout_backs_out, kill_leftovers),
		cmocka_unit_test_teardown(test_hold_watchdog, kill_leftovers),
		cmocka_unit_test_teardown(test_spawn, kill_leftovers),
		cmocka_unit_test_teardown(test_spawn_follow_exec, kill_leftovers),
		cmocka_unit_test_teardown(test_self_restore_running_thread, self_restore_off),
		cmocka_unit_test_teardown(test_self_restore_blocked_read, self_restore_off),
		cmocka_unit_test_teardown(test_self_restore_nanosleep, self_restore_off),
		cmocka_unit_test_teardown(test_self_restore_stop_state, self_restore_off),
		cmocka_unit_test(test_trampoline_bytes),
		cmocka_unit_test(test_code_patterns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
