// SPDX-License-Identifier: GPL-2.0
/*
 * exact.c - exact mode's processes and threads: start CMD or attach to -p's processes, give
 * each address space a userfaultfd only mevitop holds, serve it, follow execs, detach.
 * The model side (what the records mean for the page model) is exact_track.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include "lib/array.h"
#include "lib/clock.h"
#include "exact/exact.h"
#include "exact/arch.h"
#include "exact/exact_int.h"
#include "exact/inject.h"
#include "out/json.h"
#include "lib/log.h"
#include "exact/stage.h"
#include "kernel/procfs.h"
#include "exact/seccomp_guard.h"
#include "kernel/seccomp_probe.h"
#include "exact/uffd_dev.h"
#include "lib/page.h"

#define CHILD_GRACE_MS		200	/* run: how long CMD may take to exit by itself on quit */
#define FOLLOW_SLICE_MS		100
/* Between the view's drains (every 100 ms) the pump drains the ring buffer this often, so
 * a new mapping is registered within ~1 ms of its mmap (see exact.h; measured in bench). */
#define PUMP_DEFAULT_US		1000

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- injection ---- */

struct reg_ctx {
	struct exact *x;
	int fd;
	unsigned ranges;
	unsigned busy;		/* refused with EBUSY: registered with another userfaultfd */
};

static int register_entry(const struct maps_entry *me, void *arg)
{
	struct reg_ctx *rc = arg;
	int err;

	if (!mappings_eligible_entry(me->path, me->perms))
		return 0;
	/* A mapping the kernel will not register (another userfaultfd owns it, VM_PFNMAP)
	 * stays tracked by pagemap. */
	err = uffd_register(rc->fd, me->start, me->end - me->start, rc->x->reg_mode, NULL);
	if (err == 0)
		rc->ranges++;
	else
		log_debug("%s", uffd_why());
	rc->busy += err == -EBUSY;
	return 0;
}

/* With @in holding @pid stopped: inject a userfaultfd and register every private anonymous
 * mapping.  Returns our fd or -errno with why. */
/* The injected syscalls and saved registers are the native ABI's: in a 32-bit image (i386,
 * x32 or arm32, its own syscall table) the first injected mmap fails with EFAULT.  Checked before the
 * seize too, so such a process is never stopped. */
static int refuse_32bit(const struct exact *x, pid_t pid, char *why, size_t whylen)
{
	if (procfs_exe_is_32bit(pid) != 1)
		return 0;
	snprintf(why, whylen, "process %d is 32-bit: 32-bit processes are not supported in exact "
		 "mode%s", pid, x->run_pid ? "" : "; watch it without --exact (mevitop -p PID)");
	return -ENOEXEC;
}

/* Does @pid live in another user namespace than mevitop (a container's)? */
static bool own_userns(pid_t pid)
{
	struct stat mine, its;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	return stat("/proc/self/ns/user", &mine) == 0 && stat(path, &its) == 0 &&
	       (mine.st_ino != its.st_ino || mine.st_dev != its.st_dev);
}

/* A target whose seccomp filters mevitop may neither suspend nor prove safe. */
static void explain_seccomp(struct exact *x, struct inj *in, pid_t pid, int err,
			    const char *sc_why, char *why, size_t whylen)
{
	const char *tail = x->run_pid ? "" : "; watch it without --exact (mevitop -p PID)";

	if (inj_seccomp_suspended(in) && err == -EPERM)
		snprintf(why, whylen, "cannot attach to process %d: %s" SCG_SUSPENDED_WHY "%s",
			 pid, sc_why, tail);
	else if (inj_seccomp_suspended(in))
		snprintf(why, whylen, "cannot attach to process %d: %s; its filters are suspended "
			 "while mevitop holds it, but unread they could kill it for a call a "
			 "killed mevitop left mid-way%s", pid, sc_why[0] ? sc_why : strerror(-err),
			 tail);
	else
		snprintf(why, whylen, "cannot attach to process %d: %s; and its filters cannot "
			 "be suspended (%s)%s", pid, sc_why[0] ? sc_why : strerror(-err),
			 x->suspend_why, tail);
}

static int inject_and_register(struct exact *x, struct inj *in, pid_t pid, char *why,
			       size_t whylen)
{
	struct reg_ctx rc = { .x = x, .fd = -1 };
	char scwhy[768] = "";
	uint64_t got = 0, t0;
	int err;

	err = refuse_32bit(x, pid, why, whylen);
	if (err)
		return err;
	err = seccomp_guard_prepare(in, scwhy, sizeof(scwhy));	/* a new program may have a filter */
	if (err) {
		explain_seccomp(x, in, pid, err, scwhy, why, whylen);
		return err;
	}
	t0 = clock_mono_ns();
	err = uffd_inject(in, x->features, &rc.fd, &got);
	t0 = clock_mono_ns() - t0;
	if (err) {
		const char *hint = "";

		if (inj_guard_why(in)[0])	/* its seccomp filters said no */
			hint = x->run_pid ? "" : "; watch it without --exact (mevitop -p PID)";
		else if (err == -EPERM && own_userns(pid))
			hint = "; it runs in a user namespace of its own (a container), where its "
			       "capabilities do not count for userfaultfd";
		snprintf(why, whylen, "%s%s", uffd_why(), hint);
		return err;
	}
	stage_enter("injected", NULL);
	err = procfs_read_maps(pid, register_entry, &rc);
	if (err) {
		close(rc.fd);
		snprintf(why, whylen, "failed to read the mappings of process %d: %s", pid,
			 strerror(-err));
		return err;
	}
	/*
	 * The kernel lets one userfaultfd register a VMA and answers EBUSY to any other: this
	 * is how a second monitor (another mevitop, a CRIU lazy-pages daemon) shows.  A
	 * program using userfaultfd on a few of its own ranges leaves most mappings free;
	 * a monitor holds most of them (all but the ones it has not reached yet).
	 */
	if (rc.busy && rc.busy >= rc.ranges) {
		close(rc.fd);	/* our only copy: what we did register goes with it */
		snprintf(why, whylen, "process %d is already watched by another userfaultfd monitor "
			 "(%u of its %u private anonymous mappings are registered with another "
			 "userfaultfd): stop that monitor first%s", pid, rc.busy, rc.busy + rc.ranges,
			 x->run_pid ? "" : "; or watch it without --exact (mevitop -p PID)");
		return -EBUSY;
	}
	log_debug("process %d: userfaultfd (by %s) in %llu us, features 0x%llx, %u mappings "
		  "registered, %u held by another userfaultfd", pid,
		  uffd_last_create() == UFFD_CREATE_DEV ? "/dev/userfaultfd" : "userfaultfd()",
		  (unsigned long long)(t0 / 1000), (unsigned long long)got, rc.ranges, rc.busy);
	stage_enter("registered", NULL);
	return rc.fd;
}

static void explain_seize(struct exact *x, pid_t pid, int err, const char *inj_why, char *why,
			  size_t whylen)
{
	const char *alt = x->run_pid ? "" : "; or watch it without --exact (mevitop -p PID)";

	if (err == -EPERM && strstr(inj_why, "already traced"))
		snprintf(why, whylen, "cannot attach to process %d: %s. Exact mode needs ptrace: "
			 "detach the other tracer first%s", pid, inj_why, alt);
	else if (err == -EPERM)
		snprintf(why, whylen, "cannot attach to process %d: %s. Exact mode needs ptrace: "
			 "run mevitop as root with CAP_SYS_PTRACE%s", pid, inj_why, alt);
	else
		snprintf(why, whylen, "cannot attach to process %d: %s", pid, inj_why);
}

/* Seize @pid, inject, register, hand over, release.  The process is held stopped for the
 * whole of it, within --attach-timeout (inj's watchdog releases it if we stall). */
static int attach_one(struct exact *x, pid_t pid, char *why, size_t whylen)
{
	uint64_t t0 = clock_mono_ns(), held_ms;
	char iwhy[256] = "";
	struct inj *in = NULL;
	int err, fd;

	err = refuse_32bit(x, pid, why, whylen);
	if (err)
		return err;
	err = inj_seize(pid, (unsigned)x->o.attach_timeout_ms, &in, iwhy, sizeof(iwhy));
	if (err) {
		explain_seize(x, pid, err, iwhy, why, whylen);
		return err;
	}
	stage_enter("seized", NULL);
	fd = inject_and_register(x, in, pid, why, whylen);
	held_ms = (clock_mono_ns() - t0) / 1000000;
	if (fd >= 0 && held_ms > x->o.attach_timeout_ms) {
		close(fd);	/* our only copy: every registration goes with it */
		fd = -ETIMEDOUT;
	}
	if (fd == -ETIMEDOUT) {
		inj_release(in);
		snprintf(why, whylen, "attaching to process %d took %llu ms, more than "
			 "--attach-timeout %llu ms: backed out, the process is as it was", pid,
			 (unsigned long long)held_ms, (unsigned long long)x->o.attach_timeout_ms);
		return -ETIMEDOUT;
	}
	if (fd < 0) {
		inj_release(in);
		return fd;
	}
	/* The server must serve before the process runs again (ordered: its faults wait). */
	err = server_hand_over(x, pid, fd);
	if (err) {
		inj_release(in);
		snprintf(why, whylen, "failed to serve the userfaultfd of process %d: %s", pid,
			 strerror(-err));
		return err;
	}
	err = inj_release(in);
	if (err)
		log_warn("process %d: detaching ptrace: %s", pid, strerror(-err));
	log_debug("process %d: held stopped %llu us", pid,
		  (unsigned long long)((clock_mono_ns() - t0) / 1000));
	atomic_store(&x->ctl.last_attach_ms, held_ms);
	return 0;
}

/* ---- the control thread: execed processes get a new userfaultfd ---- */

static void *control_main(void *arg)
{
	struct exact *x = arg;
	char why[WHY_LEN];
	pid_t pid;

	while (jobq_pop(&x->ctl.jobs, &pid)) {
		if (attach_one(x, pid, why, sizeof(why)) && kill(pid, 0) == 0)
			log_warn("process %d (a new program or a forked child) could not be given a "
				 "userfaultfd (%s): its memory is tracked by pagemap only", pid, why);
	}
	return NULL;
}

/* ---- run: follow CMD with ptrace until it exits ---- */

static void *runner_main(void *arg)
{
	struct exact *x = arg;
	char why[WHY_LEN];
	int err, status = 0, fd;

	for (;;) {
		err = inj_follow_exec(x->run.inj, FOLLOW_SLICE_MS, &status);
		if (err == -ETIMEDOUT)
			continue;
		if (err == 0) {
			/* CMD executed a new program: it is parked at the new entry point. */
			fd = inject_and_register(x, x->run.inj, x->run_pid, why, sizeof(why));
			if (fd >= 0 && (err = server_hand_over(x, x->run_pid, fd)))
				snprintf(why, sizeof(why), "%s", strerror(-err));
			if (fd < 0 || err)
				log_warn("%s executed a new program and could not get a userfaultfd "
					 "(%s): its memory is tracked by pagemap only",
					 x->o.run_argv[0], why);
			continue;
		}
		break;
	}
	if (err != -ESRCH) {
		/* Cannot follow it any more: it must not outlive a mevitop that lost it. */
		log_err("lost track of %s: %s", x->o.run_argv[0], strerror(-err));
		kill(x->run_pid, SIGKILL);
		status = W_EXITCODE(0, SIGKILL);
	}
	x->run.child_status = status;
	atomic_store(&x->run.child_done, true);
	pthread_mutex_lock(&x->ctl.lock);
	if (!x->ctl.stopping)
		kill(getpid(), SIGTERM);	/* the view quits; teardown returns the status */
	pthread_mutex_unlock(&x->ctl.lock);
	return NULL;
}

/* ---- the pump ----
 *
 * Not engine_drive() (user/engine/drive.h): the pump never ticks, it drains beside the
 * view's loop (which runs engine_drive), waking every pump_us microseconds rather than on
 * the engine's millisecond poll, and it must also stop at teardown (x->ctl.stopping) when the
 * view ended by itself (-n, --duration), which is not a quit.
 */

static void *pump_main(void *arg)
{
	struct exact *x = arg;

	for (;;) {
		struct timespec ts = { .tv_nsec = (long)x->pump.us * 1000 };
		bool stop;

		pthread_mutex_lock(&x->ctl.lock);
		stop = x->ctl.stopping;
		pthread_mutex_unlock(&x->ctl.lock);
		if (stop || engine_quitting())
			break;
		nanosleep(&ts, NULL);
		engine_step(x->e, 0);
	}
	return NULL;
}

/* ---- setup and teardown ---- */

static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	/* Our threads take no signals: SIGINT/SIGTERM belong to the view's thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

/* The /dev/userfaultfd chain's stages ("dev-socketpair", ...) are test-pause stages too. */
static void dev_test_hook(void *ctx, const char *stage)
{
	stage_enter(stage, NULL);
}

/* Says what to change when userfaultfd cannot be used; returns false then. */
static bool check_uffd(struct exact *x, const struct features *f)
{
	const char *what = x->o.run_argv ? "mevitop run needs exact mode" :
			   "--exact needs userfaultfd";
	const char *alt = x->o.run_argv ? "" : "; or watch without --exact (mevitop -p PID)";
	uint64_t need = UFFD_FEATURE_EVENT_FORK | UFFD_FEATURE_EVENT_REMAP |
			UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_UNMAP |
			UFFD_FEATURE_THREAD_ID;

	if (!f->uffd && (f->disabled & DIS_UFFD)) {
		log_err("%s, and userfaultfd is disabled (--disable uffd or MEVITOP_DISABLE)%s",
			what, alt);
		return false;
	}
	if (!f->uffd && (f->disabled & DIS_UFFD_SYSCALL) && (f->disabled & DIS_UFFD_DEV)) {
		log_err("%s, and both ways to create one in a process are disabled (--disable "
			"uffd_syscall,uffd_dev)%s", what, alt);
		return false;
	}
	if (!f->uffd && f->uffd_errno == ENOSYS) {
		log_err("%s, and this kernel has no userfaultfd: build it with CONFIG_USERFAULTFD=y%s",
			what, alt);
		return false;
	}
	if (!f->uffd && f->uffd_errno == EPERM) {
		log_err("%s, and userfaultfd is not permitted: run mevitop as root (CAP_SYS_PTRACE), "
			"or set sysctl vm.unprivileged_userfaultfd=1%s", what, alt);
		return false;
	}
	if (!f->uffd) {
		log_err("%s, and userfaultfd failed: %s%s", what, strerror(f->uffd_errno), alt);
		return false;
	}
	if ((f->uffd_features & need) != need) {
		log_err("%s with fork, remap, remove and unmap events and thread ids (Linux 4.14+); "
			"this kernel's userfaultfd offers features 0x%llx%s", what,
			(unsigned long long)f->uffd_features, alt);
		return false;
	}
	uffd_set_caps(&f->uffd_ways);	/* how each target gets its userfaultfd */
	uffd_dev_set_test_hook(dev_test_hook, x);
	return true;
}

static int choose_variant(struct exact *x, const struct features *f)
{
	bool wp = f->uffd_ways.wp;

	x->variant = x->o.variant == EXACT_ORDERED ? EXACT_ORDERED : EXACT_FAST;
	if (x->variant == EXACT_FAST && !wp) {
		if (x->o.variant == EXACT_FAST) {
			log_err("--exact=fast needs userfaultfd write-protect registration of anonymous "
				"memory (Linux 5.7+ with CONFIG_HAVE_ARCH_USERFAULTFD_WP): use "
				"--exact=ordered");
			return -EOPNOTSUPP;
		}
		log_info("userfaultfd write-protect unavailable: exact mode is ordered");
		x->variant = EXACT_ORDERED;
	}
	x->features = UFFD_EXACT_FEATURES;
	if (x->variant == EXACT_FAST) {
		/* No non-cooperative events: the kernel makes the target's fork, mremap, munmap
		 * and madvise(DONTNEED) wait until the monitor has read each one, so a stopped
		 * mevitop (SIGSTOP, Ctrl-Z) would stall the target.  Fast mode learns the same
		 * from the engine's BPF records instead (the zapped/moved/mapped hooks), and
		 * gives forked children a userfaultfd of their own by injection. */
		x->features = UFFD_FEATURE_THREAD_ID;
		x->reg_mode = UFFDIO_REGISTER_MODE_WP;
		/* Nothing is ever write-protected; if a PTE carried the bit anyway (inherited),
		 * the kernel would resolve the write itself instead of waiting for us. */
		x->features |= f->uffd_features & UFFD_FEATURE_WP_ASYNC;
	} else {
		x->reg_mode = UFFDIO_REGISTER_MODE_MISSING;
	}
	return 0;
}

static void free_exact(struct exact *x)
{
	if (!x)
		return;
	exact_track_free(x);
	for (int i = 0; i < x->srv.n; i++)
		uffd_server_free(x->srv.servers[i]);
	if (x->srv.n)
		pthread_spin_destroy(&x->ring.lock);
	pthread_cond_destroy(&x->ctl.cond);
	pthread_mutex_destroy(&x->ctl.lock);
	jobq_destroy(&x->ctl.jobs);
	free(x->ring.recs);
	free(x);
}

/* Stops our threads, closes every userfaultfd (attached processes run on untouched), and
 * for run ends CMD.  Safe at any point of setup. */
static void stop_all(struct exact *x)
{
	int i;

	pthread_mutex_lock(&x->ctl.lock);
	x->ctl.stopping = true;
	pthread_cond_broadcast(&x->ctl.cond);
	pthread_mutex_unlock(&x->ctl.lock);
	jobq_stop(&x->ctl.jobs);
	if (x->pump.started)
		pthread_join(x->pump.thread, NULL);
	x->pump.started = false;
	if (x->run.inj) {
		if (x->run.started) {
			for (i = 0; i < CHILD_GRACE_MS && !atomic_load(&x->run.child_done); i++)
				sleep_ms(1);
			if (!atomic_load(&x->run.child_done))
				kill(x->run_pid, SIGKILL);
			pthread_join(x->run.thread, NULL);
			x->run.started = false;
		} else {
			kill(x->run_pid, SIGKILL);
			x->run.child_status = W_EXITCODE(0, SIGKILL);
		}
		inj_release(x->run.inj);	/* reaps CMD if it was never followed */
		x->run.inj = NULL;
	}
	if (x->ctl.started)
		pthread_join(x->ctl.thread, NULL);
	x->ctl.started = false;
	server_unpark_all(x);
	for (i = 0; i < x->srv.n; i++)
		uffd_server_stop(x->srv.servers[i]);
	for (i = 0; i < x->srv.started; i++)
		pthread_join(x->srv.threads[i], NULL);
	x->srv.started = 0;
}

static int fail_setup(struct exact *x, struct engine **e, int rc)
{
	stop_all(x);
	free_exact(x);
	engine_free(*e);
	*e = NULL;
	return rc;
}

/* Setup's stages, in order.  Each logs what failed; none leaves a process modified. */

/* 1. Exact mode's own state, from the options and what the kernel offers: NULL when
 * userfaultfd cannot work here (logged). */
static struct exact *new_exact(const struct exact_opts *o, struct features *f)
{
	struct exact *x = calloc(1, sizeof(*x));
	const char *env;

	if (!x)
		return NULL;
	x->o = *o;
	x->o.pids = NULL;
	x->follow_children = !o->no_children;
	x->use_scan = f->pagemap_scan && !(f->disabled & DIS_PAGEMAP_SCAN);
	inj_set_suspend_seccomp(seccomp_probe_path(f, x->suspend_why, sizeof(x->suspend_why)) ==
				SC_SUSPEND);
	atomic_init(&x->srv.next_id, 1);
	pthread_mutex_init(&x->ctl.lock, NULL);
	pthread_cond_init(&x->ctl.cond, NULL);
	jobq_init(&x->ctl.jobs);
	env = getenv("MEVITOP_EXACT_PUMP_US");
	x->pump.us = env ? (unsigned)strtoul(env, NULL, 10) : PUMP_DEFAULT_US;
	x->ring.recs = calloc(XQ_SIZE, sizeof(*x->ring.recs));
	if (!x->ring.recs || !check_uffd(x, f) || choose_variant(x, f) ||
	    server_make(x)) {
		free_exact(x);
		return NULL;
	}
	return x;
}

/* 2. run: CMD started seized, held at its first instruction.  0, or the exit code. */
static int spawn_cmd(struct exact *x)
{
	char why[WHY_LEN] = "";
	int err = inj_spawn(x->o.run_argv, &x->run.inj, &x->run_pid, why, sizeof(why));

	if (err == -EOPNOTSUPP) {
		log_err("cannot watch %s in exact mode: %s", x->o.run_argv[0], why);
		return 1;
	}
	if (err) {
		log_err("%s", why);
		return err == -ENOENT ? 127 : err == -EACCES ? 126 : 1;
	}
	return 0;
}

/* 3. The engine (MODE_EXACT) with exact mode's hooks, and exact mode's threads. */
static int start_engine(struct exact *x, struct engine_opts *eo, struct features *f,
			struct engine **e)
{
	char why[WHY_LEN] = "";
	int err = engine_new(eo, f, e, why, sizeof(why));

	if (!err) {
		x->e = *e;
		exact_track_install(x);
		err = engine_start(*e, why, sizeof(why));
	}
	if (err) {
		log_err("%s", why[0] ? why : strerror(-err));
		return -1;
	}
	while (x->srv.started < x->srv.n &&
	       start_thread(&x->srv.threads[x->srv.started], server_main,
			    &x->srv.args[x->srv.started]) == 0)
		x->srv.started++;
	if (start_thread(&x->ctl.thread, control_main, x) == 0)
		x->ctl.started = true;
	if (x->srv.started < x->srv.n || !x->ctl.started) {
		log_err("failed to start exact mode's threads");
		return -1;
	}
	return 0;
}

/* 4. Every target gets its userfaultfd: run's CMD, or each of -p's processes. */
static int attach_targets(struct exact *x, const struct exact_opts *o)
{
	char why[WHY_LEN] = "";
	size_t i;
	int err, fd;

	if (!o->run_argv) {
		for (i = 0; i < o->npids; i++) {
			err = attach_one(x, o->pids[i], why, sizeof(why));
			if (err) {
				log_err("%s", why);
				return -1;
			}
		}
		return 0;
	}
	fd = inject_and_register(x, x->run.inj, x->run_pid, why, sizeof(why));
	if (fd >= 0 && (err = server_hand_over(x, x->run_pid, fd))) {
		snprintf(why, sizeof(why), "failed to serve a userfaultfd: %s", strerror(-err));
		fd = err;
	}
	if (fd < 0) {
		log_err("cannot watch %s in exact mode: %s", o->run_argv[0], why);
		return -1;
	}
	atomic_store(&x->ctl.last_attach_ms, 0);
	return 0;
}

/* 5. The threads that run beside the view: run's follower, the pump. */
static int start_followers(struct exact *x)
{
	if (x->o.run_argv) {
		if (start_thread(&x->run.thread, runner_main, x)) {
			log_err("failed to start the thread following %s", x->o.run_argv[0]);
			return -1;
		}
		x->run.started = true;
	}
	if (x->pump.us && start_thread(&x->pump.thread, pump_main, x) == 0)
		x->pump.started = true;
	return 0;
}

int exact_setup(const struct exact_opts *o, struct engine_opts *eo, struct features *f,
		struct engine **e, struct exact **out)
{
	char why[WHY_LEN] = "";
	struct exact *x;
	int rc;

	*e = NULL;
	*out = NULL;
	if (arch_unsupported()) {
		log_err("%s", arch_unsupported());
		return 1;
	}
	if (kfeatures_probe(f, why, sizeof(why))) {
		log_err("%s", why);
		return 1;
	}
	x = new_exact(o, f);
	if (!x)
		return 1;
	if (o->run_argv && (rc = spawn_cmd(x))) {
		free_exact(x);
		return rc;
	}
	/* The processes watched are -p's, or run's CMD, known only now: from here on `run`
	 * behaves like -p CMD (its heatmap, its mappings in JSON). */
	eo->pids = o->run_argv ? &x->run_pid : o->pids;
	eo->npids = o->run_argv ? 1 : o->npids;
	if (start_engine(x, eo, f, e) || attach_targets(x, o))
		return fail_setup(x, e, 1);
	/* Apply the hand-overs now, so the first snapshot already says which mappings are
	 * tracked by userfaultfd. */
	engine_step(*e, 0);
	if (start_followers(x))
		return fail_setup(x, e, 1);
	log_info("exact mode (%s) on %zu process(es)",
		 x->variant == EXACT_ORDERED ? "ordered" : "fast", eo->npids);
	stage_enter("serving", NULL);
	*out = x;
	return 0;
}

/* run --json: CMD finished, so the view stopped before its next tick; one last snapshot
 * gives the picture at exit with everything counted. */
static void last_snapshot(struct exact *x, FILE *out)
{
	struct json_opts jo = { .maps = true, .interval_ms = x->o.interval_ms };
	struct timespec wall;
	uint64_t mono;

	engine_tick(x->e);
	clock_gettime(CLOCK_REALTIME, &wall);
	engine_lock(x->e);
	mono = engine_now_ns();
	json_snapshot(out, x->e, &jo, mono, wall.tv_sec + wall.tv_nsec / 1e9);
	engine_unlock(x->e);
}

int exact_teardown(struct exact *x, int rc, FILE *out)
{
	bool finished;
	int st;

	if (!x)
		return rc;
	stage_enter("detach", NULL);
	finished = x->run_pid && atomic_load(&x->run.child_done);
	stop_all(x);
	/* (Not when recording: --record set json for its loop, and stdout is not the file.) */
	if (finished && x->o.json && !x->o.record) {
		/* The view stopped on the runner's SIGTERM, not on the user's: count all. */
		engine_set_quitting(false);
		last_snapshot(x, out);
	}
	if (x->run_pid) {
		st = x->run.child_status;
		rc = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
	}
	free_exact(x);
	return rc;
}

enum exact_variant exact_variant_of(const struct exact *x)
{
	return x->variant;
}

pid_t exact_run_pid(const struct exact *x)
{
	return x->run_pid;
}
