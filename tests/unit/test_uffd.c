// SPDX-License-Identifier: GPL-2.0
/*
 * test_uffd.c - userfaultfd injection and fault serving against real processes,
 * including a monitor that is SIGKILLed at every stage.
 *
 * The target (a forked child) maps a region, then on command its toucher threads touch
 * their own pages in a known order and log what they touched; a spinner thread shows
 * that the process keeps running.  We compare what the fault server saw with the log.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "children.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel/uffd_caps.h"
#include "exact/inject.h"
#include "exact/uffd.h"

/*
 * A forked child of a sanitizer build may mmap memory whose shadow still says "ASan
 * internal" from the parent's past; unpoison what we map.
 */
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#define UNPOISON(p, n)	__asan_unpoison_memory_region((void *)(p), (n))
#else
#define UNPOISON(p, n)	((void)(p), (void)(n))
#endif

#define PG		4096ul
#define NTOUCH		3		/* toucher threads */
#define PER		8		/* pages each toucher touches per round */
#define NPAGES		64		/* region size */
#define GUARD_MS	5000

struct ushared {
	volatile uint64_t region;
	volatile int tids[NTOUCH];
	volatile int go;			/* futex: bumped for each touch round */
	volatile int done;			/* touchers finished this round */
	volatile int order[NTOUCH][PER];	/* page index touched, in order */
	volatile uint64_t spin;			/* spinner progress */
	volatile int stop;
	volatile uint64_t ev_remove, ev_remap_from, ev_remap_to, ev_unmap;
	volatile int fork_child;
	volatile int fork_child_ok;
};

struct utarget {
	pid_t pid;
	struct ushared *sh;
	int cmd_w;
	int rep_r;
};

/* Page index touched by toucher @k as its @j-th touch in round @round. */
static int page_of(int k, int j, int round)
{
	int base = round * NTOUCH * PER;

	/* toucher 1 walks backwards; everyone stays in its own pages */
	return base + k + NTOUCH * (k == 1 ? PER - 1 - j : j);
}

static long futex(volatile int *addr, int op, int val)
{
	return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

/* ---- the target ---- */

/*
 * The touches themselves are not instrumented: ASan in a forked child sometimes keeps
 * "internal" shadow bytes over a fresh mapping next to its thread structures.
 */
__attribute__((no_sanitize_address, noinline))
static void touch_page(volatile char *p, bool write)
{
	if (write)
		p[1] = 1;
	else
		(void)p[0];
}

__attribute__((no_sanitize_address, noinline))
static char peek(volatile char *p)
{
	return *p;
}

struct tctx {
	struct ushared *sh;
	int k;
};

static void *toucher(void *arg)
{
	struct tctx *c = arg;
	struct ushared *sh = c->sh;
	int seen = 0;

	sh->tids[c->k] = (int)syscall(SYS_gettid);
	for (;;) {
		volatile char *r = (volatile char *)(uintptr_t)sh->region;
		int round;

		while (sh->go == seen && !sh->stop)
			futex(&sh->go, FUTEX_WAIT, seen);
		if (sh->stop)
			break;
		round = seen;
		seen = sh->go;
		for (int j = 0; j < PER; j++) {
			int p = page_of(c->k, j, round);

			sh->order[c->k][j] = p;
			touch_page(r + (size_t)p * PG, c->k != 2);	/* toucher 2 reads */
		}
		__atomic_fetch_add(&sh->done, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static void *spinner(void *arg)
{
	struct ushared *sh = arg;

	while (!sh->stop)
		sh->spin++;
	return NULL;
}

static void do_events(struct ushared *sh)
{
	char *r = (char *)(uintptr_t)sh->region;
	void *dst;

	/* zap, move, unmap pieces of the region: REMOVE, REMAP, UNMAP in this order */
	madvise(r + 40 * PG, 2 * PG, MADV_DONTNEED);
	sh->ev_remove = (uint64_t)(uintptr_t)(r + 40 * PG);
	dst = mmap(NULL, 2 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mremap(r + 44 * PG, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst) == MAP_FAILED)
		_exit(20);
	UNPOISON(dst, 2 * PG);
	sh->ev_remap_from = (uint64_t)(uintptr_t)(r + 44 * PG);
	sh->ev_remap_to = (uint64_t)(uintptr_t)dst;
	munmap(r + 48 * PG, 2 * PG);
	sh->ev_unmap = (uint64_t)(uintptr_t)(r + 48 * PG);
}

static void do_fork(struct ushared *sh)
{
	volatile char *r = (volatile char *)(uintptr_t)sh->region;
	pid_t c = fork();
	int st;

	if (c == 0) {
		/* pages nobody touched yet: the child's faults go to the child's uffd */
		for (int p = 56; p < 60; p++)
			touch_page(r + (size_t)p * PG, true);
		_exit(peek(r + 56 * PG + 1) == 1 ? 0 : 1);
	}
	sh->fork_child = c;
	waitpid(c, &st, 0);
	sh->fork_child_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void __attribute__((noreturn)) target_main(struct ushared *sh, int cmd_r, int rep_w)
{
	pthread_t th[NTOUCH], sp;
	struct tctx ctx[NTOUCH];
	void *r;
	char c;

	r = mmap(NULL, NPAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		_exit(10);
	madvise(r, NPAGES * PG, MADV_NOHUGEPAGE);
	UNPOISON(r, NPAGES * PG);
	sh->region = (uint64_t)(uintptr_t)r;
	for (int k = 0; k < NTOUCH; k++) {
		ctx[k] = (struct tctx){ .sh = sh, .k = k };
		pthread_create(&th[k], NULL, toucher, &ctx[k]);
	}
	pthread_create(&sp, NULL, spinner, sh);
	for (int k = 0; k < NTOUCH; k++)
		while (!sh->tids[k])
			sched_yield();
	while (!sh->spin)
		sched_yield();
	if (write(rep_w, "R", 1) != 1)
		_exit(11);
	while (read(cmd_r, &c, 1) == 1 && c != 'q') {
		char ack = c;

		switch (c) {
		case 'g': {
			int want = sh->done + NTOUCH;

			__atomic_fetch_add(&sh->go, 1, __ATOMIC_SEQ_CST);
			futex(&sh->go, FUTEX_WAKE, NTOUCH);
			while (__atomic_load_n(&sh->done, __ATOMIC_SEQ_CST) < want)
				sched_yield();
			ack = 'D';
			break;
		}
		case 'e':
			do_events(sh);
			ack = 'E';
			break;
		case 'f':
			do_fork(sh);
			ack = 'F';
			break;
		default:
			break;
		}
		if (write(rep_w, &ack, 1) != 1)
			_exit(12);
	}
	sh->stop = 1;
	futex(&sh->go, FUTEX_WAKE, NTOUCH);
	for (int k = 0; k < NTOUCH; k++)
		pthread_join(th[k], NULL);
	pthread_join(sp, NULL);
	_exit(0);
}

/* ---- harness ---- */

static int kill_leftovers(void **state)
{
	(void)state;
	kill_children();
	uffd_set_api_path(UFFD_API_AUTO);
	return 0;
}

static void start_target(struct utarget *t)
{
	int cmd[2], rep[2];
	char c = 0;

	t->sh = mmap(NULL, sizeof(*t->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(t->sh != MAP_FAILED);
	UNPOISON(t->sh, sizeof(*t->sh));
	assert_int_equal(pipe2(cmd, O_CLOEXEC), 0);
	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	t->pid = fork();
	assert_true(t->pid >= 0);
	if (t->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* nothing inherited but our pipes (not even a failed test's uffd) */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != cmd[0] && fd != rep[1])
				close(fd);
		target_main(t->sh, cmd[0], rep[1]);
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

/* Send a command and wait for its acknowledgement. */
static char command(struct utarget *t, char c)
{
	char ack = 0;

	assert_int_equal(write(t->cmd_w, &c, 1), 1);
	assert_true(wait_readable(t->rep_r, GUARD_MS));
	assert_int_equal(read(t->rep_r, &ack, 1), 1);
	return ack;
}

static void finish_target(struct utarget *t)
{
	int st = 0;
	char c = 'q';

	assert_int_equal(write(t->cmd_w, &c, 1), 1);
	assert_int_equal(waitpid(t->pid, &st, 0), t->pid);
	untrack(t->pid);
	close(t->cmd_w);
	close(t->rep_r);
	munmap(t->sh, sizeof(*t->sh));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static bool any_stopped(struct utarget *t)
{
	char path[64];
	struct dirent *de;
	bool stopped = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", t->pid);
	d = opendir(path);
	if (!d)
		return false;
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);
		char s;

		if (tid <= 0)
			continue;
		s = state_of(t->pid, tid);
		stopped |= s == 't' || s == 'T';
	}
	closedir(d);
	return stopped;
}

static bool spins(struct utarget *t)
{
	uint64_t before = t->sh->spin, deadline = mono_ms() + GUARD_MS;

	while (mono_ms() < deadline) {
		if (t->sh->spin > before + 1000)
			return true;
		sleep_ms(1);
	}
	return false;
}

/* The maps to compare before and after: all but the injection's one scratch page. */
static char *maps_of(pid_t pid)
{
	return maps_without_scratch(pid);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* "fd -> target" lines, sorted by fd */
static char *fds_of(pid_t pid)
{
	char path[64], link[300], tgt[256];
	int fds[256], n = 0;
	size_t cap = 16384, len = 0;
	char *out = calloc(1, cap);
	struct dirent *de;
	DIR *d;

	assert_non_null(out);
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d)) && n < 256)
		if (de->d_name[0] != '.')
			fds[n++] = atoi(de->d_name);
	closedir(d);
	qsort(fds, (size_t)n, sizeof(int), cmp_int);
	for (int i = 0; i < n; i++) {
		ssize_t l;

		snprintf(link, sizeof(link), "/proc/%d/fd/%d", pid, fds[i]);
		l = readlink(link, tgt, sizeof(tgt) - 1);
		tgt[l > 0 ? l : 0] = '\0';
		len += (size_t)snprintf(out + len, cap - len, "%d %s\n", fds[i], tgt);
	}
	return out;
}

/* ---- a fault log filled by the server's callbacks ---- */

#define LOGMAX 1024

struct flog {
	pthread_mutex_t lock;
	struct uffd_fault f[LOGMAX];
	int fd_of[LOGMAX];
	int n;
	struct uffd_event ev[64];
	int ev_fd[64];
	int nev;
};

static void log_fault(void *ctx, int fd, const struct uffd_fault *f)
{
	struct flog *l = ctx;

	pthread_mutex_lock(&l->lock);
	if (l->n < LOGMAX) {
		l->fd_of[l->n] = fd;
		l->f[l->n++] = *f;
	}
	pthread_mutex_unlock(&l->lock);
}

static int log_event(void *ctx, int fd, const struct uffd_event *ev)
{
	struct flog *l = ctx;

	pthread_mutex_lock(&l->lock);
	if (l->nev < 64) {
		l->ev_fd[l->nev] = fd;
		l->ev[l->nev++] = *ev;
	}
	pthread_mutex_unlock(&l->lock);
	return 1;	/* serve forked children too */
}

static void *serve(void *arg)
{
	uffd_server_run(arg);
	return NULL;
}

struct served {
	struct flog log;
	struct uffd_server *srv;
	pthread_t th;
};

static void serve_start(struct served *s, int fd, unsigned flags)
{
	struct uffd_server_ops ops = { .fault = log_fault, .event = log_event };

	memset(&s->log, 0, sizeof(s->log));
	pthread_mutex_init(&s->log.lock, NULL);
	assert_int_equal(uffd_server_new(&ops, &s->log, flags, &s->srv), 0);
	assert_int_equal(uffd_server_add(s->srv, fd), 0);
	assert_int_equal(pthread_create(&s->th, NULL, serve, s->srv), 0);
}

static void serve_stop(struct served *s)
{
	uffd_server_stop(s->srv);
	pthread_join(s->th, NULL);
	uffd_server_free(s->srv);
	s->srv = NULL;
}

/* Seize, inject a userfaultfd, register the target's region, release. */
static int take_region(struct utarget *t, uint64_t *got)
{
	struct inj *in = NULL;
	char why[256];
	uint64_t ioctls = 0;
	int fd = -1;

	assert_int_equal(inj_seize(t->pid, 0, &in, why, sizeof(why)), 0);
	assert_int_equal(uffd_inject(in, UFFD_EXACT_FEATURES, &fd, got), 0);
	assert_int_equal(uffd_register(fd, t->sh->region, NPAGES * PG, UFFDIO_REGISTER_MODE_MISSING,
				       &ioctls), 0);
	assert_true(ioctls & (1ull << _UFFDIO_COPY));
	assert_true(ioctls & (1ull << _UFFDIO_ZEROPAGE));
	assert_int_equal(inj_release(in), 0);
	return fd;
}

/* Every toucher's faults, in its own order, with its TID and the right write flag. */
static void check_round(struct utarget *t, struct flog *l, int round)
{
	pthread_mutex_lock(&l->lock);
	for (int k = 0; k < NTOUCH; k++) {
		int j = 0;

		for (int i = 0; i < l->n; i++) {
			int page;

			if (l->f[i].tid != (uint32_t)t->sh->tids[k])
				continue;
			page = (int)((l->f[i].addr - t->sh->region) / PG);
			if (page < round * NTOUCH * PER || page >= (round + 1) * NTOUCH * PER)
				continue;
			assert_true(j < PER);
			assert_int_equal(page, page_of(k, j, round));
			assert_int_equal(page, t->sh->order[k][j]);
			assert_int_equal(!!(l->f[i].flags & UFFD_PAGEFAULT_FLAG_WRITE), k != 2);
			if (i > 0)
				assert_true(l->f[i].ts_ns >= l->f[i - 1].ts_ns);
			j++;
		}
		assert_int_equal(j, PER);
	}
	pthread_mutex_unlock(&l->lock);
}

/* ---- tests ---- */

static void test_probe(void **state)
{
	uint64_t f = 0;

	(void)state;
	assert_int_equal(uffd_probe(&f), 0);
	assert_true(f & UFFD_FEATURE_EVENT_FORK);
	assert_true(f & UFFD_FEATURE_THREAD_ID);
}

/* First touches from several threads arrive in each thread's order, with its TID. */
static void first_touches(enum uffd_api_path path, unsigned flags)
{
	struct utarget t;
	struct served s;
	uint64_t got = 0;
	char *maps0, *fds0, *maps1, *fds1;
	int fd;

	uffd_set_api_path(path);
	start_target(&t);
	maps0 = maps_of(t.pid);
	fds0 = fds_of(t.pid);
	fd = take_region(&t, &got);
	assert_true(got & UFFD_FEATURE_THREAD_ID);
	assert_int_equal(uffd_last_api_path(), path == UFFD_API_AUTO ? UFFD_API_LOCAL : path);
	/* nothing of ours is left in the target */
	fds1 = fds_of(t.pid);
	assert_string_equal(fds0, fds1);
	free(fds1);

	serve_start(&s, fd, flags);
	assert_int_equal(command(&t, 'g'), 'D');
	check_round(&t, &s.log, 0);
	assert_int_equal(command(&t, 'g'), 'D');
	check_round(&t, &s.log, 1);
	assert_int_equal(s.log.n, 2 * NTOUCH * PER);
	serve_stop(&s);	/* closes our uffd */

	assert_false(any_stopped(&t));
	assert_true(spins(&t));
	/* after the uffd is gone the target runs on: a third round is not blocked */
	assert_int_equal(command(&t, 'g'), 'D');
	maps1 = maps_of(t.pid);
	fds1 = fds_of(t.pid);
	assert_string_equal(maps0, maps1);
	assert_string_equal(fds0, fds1);
	free(maps0);
	free(maps1);
	free(fds0);
	free(fds1);
	finish_target(&t);
}

static void test_first_touches_zeropage(void **state)
{
	(void)state;
	first_touches(UFFD_API_AUTO, 0);
}

static void test_first_touches_copy(void **state)
{
	(void)state;
	first_touches(UFFD_API_LOCAL, UFFD_SRV_COPY);
}

/* The fallback: UFFDIO_API issued by the target through a scratch page it unmaps again. */
static void test_first_touches_remote_api(void **state)
{
	(void)state;
	first_touches(UFFD_API_REMOTE, UFFD_SRV_COPY);
}

/*
 * The /dev/userfaultfd handoff (issue 13) instead of the syscall: the target's fd table is
 * as before and its faults are served through the fd it made with USERFAULTFD_IOC_NEW.
 * With @self_restore the chain's thread also gets home alone, as with a dead monitor.
 */
static void first_touches_dev(bool self_restore)
{
	struct uffd_caps c;

	uffd_caps_probe(&c, true, false);
	assert_true(c.dev);
	assert_false(c.syscall);
	uffd_set_caps(&c);
	inj_force_self_restore(self_restore);
	first_touches(UFFD_API_AUTO, UFFD_SRV_COPY);
	inj_force_self_restore(false);
	assert_int_equal(uffd_last_create(), UFFD_CREATE_DEV);
	uffd_caps_probe(&c, false, false);
	uffd_set_caps(&c);
}

static void test_first_touches_dev(void **state)
{
	(void)state;
	first_touches_dev(false);
}

static void test_first_touches_dev_self_restore(void **state)
{
	(void)state;
	first_touches_dev(true);
}

static void test_busy_poll_server(void **state)
{
	(void)state;
	first_touches(UFFD_API_AUTO, UFFD_SRV_COPY | UFFD_SRV_BUSY_POLL);
}

/* A thread blocked on an unserved fault runs on as soon as we close the uffd. */
static void test_close_unblocks(void **state)
{
	struct utarget t;
	uint64_t got, spin;
	char c = 'g', ack = 0;
	int fd;

	(void)state;
	start_target(&t);
	fd = take_region(&t, &got);
	assert_int_equal(write(t.cmd_w, &c, 1), 1);
	/* a fault is pending and nobody serves it: the round cannot finish */
	assert_true(wait_readable(fd, GUARD_MS));
	assert_false(wait_readable(t.rep_r, 50));
	spin = t.sh->spin;
	assert_true(spins(&t));	/* only the touchers are blocked */
	(void)spin;
	close(fd);
	assert_true(wait_readable(t.rep_r, GUARD_MS));
	assert_int_equal(read(t.rep_r, &ack, 1), 1);
	assert_int_equal(ack, 'D');
	assert_false(any_stopped(&t));
	finish_target(&t);
}

/* After unregistering part of the region, touches there are no longer reported. */
static void test_unregister(void **state)
{
	struct utarget t;
	struct served s;
	uint64_t got, split = 32;	/* pages [0, 32) unregistered */
	int fd, n0, below = 0;

	(void)state;
	start_target(&t);
	fd = take_region(&t, &got);
	assert_int_equal(uffd_unregister(fd, t.sh->region, split * PG), 0);
	serve_start(&s, fd, UFFD_SRV_COPY);
	assert_int_equal(command(&t, 'g'), 'D');	/* pages 0..23: none reported */
	pthread_mutex_lock(&s.log.lock);
	n0 = s.log.n;
	pthread_mutex_unlock(&s.log.lock);
	assert_int_equal(n0, 0);
	assert_int_equal(command(&t, 'g'), 'D');	/* pages 24..47: only 32..47 */
	pthread_mutex_lock(&s.log.lock);
	for (int i = 0; i < s.log.n; i++)
		below += s.log.f[i].addr < t.sh->region + split * PG;
	assert_int_equal(below, 0);
	assert_int_equal(s.log.n, 2 * NTOUCH * PER - (int)split);
	pthread_mutex_unlock(&s.log.lock);
	serve_stop(&s);
	finish_target(&t);
}

/* Non-cooperative events arrive in order; a fork hands us the child's uffd. */
static void test_events_and_fork(void **state)
{
	struct utarget t;
	struct served s;
	uint64_t got, deadline;
	int fd, child_faults = 0, child_fd = -1, gone = 0;

	(void)state;
	start_target(&t);
	fd = take_region(&t, &got);
	assert_true(got & UFFD_FEATURE_EVENT_FORK);
	serve_start(&s, fd, UFFD_SRV_COPY);
	assert_int_equal(command(&t, 'g'), 'D');
	assert_int_equal(command(&t, 'e'), 'E');
	assert_int_equal(command(&t, 'f'), 'F');
	assert_true(t.sh->fork_child_ok);
	/* the child's fd goes idle when the child exits: the server notices and drops it */
	deadline = mono_ms() + GUARD_MS;
	while (mono_ms() < deadline && uffd_server_nr_fds(s.srv) != 1)
		sleep_ms(5);
	assert_int_equal(uffd_server_nr_fds(s.srv), 1);

	pthread_mutex_lock(&s.log.lock);
	assert_int_equal(s.log.nev, 6);
	assert_int_equal(s.log.ev[0].kind, UFFD_EV_REMOVE);
	assert_true(s.log.ev[0].range.start == t.sh->ev_remove);
	assert_true(s.log.ev[0].range.end == t.sh->ev_remove + 2 * PG);
	assert_int_equal(s.log.ev[1].kind, UFFD_EV_REMAP);
	assert_true(s.log.ev[1].remap.from == t.sh->ev_remap_from);
	assert_true(s.log.ev[1].remap.to == t.sh->ev_remap_to);
	assert_true(s.log.ev[1].remap.len == 2 * PG);
	/* the kernel follows a move with an UNMAP of the source range */
	assert_int_equal(s.log.ev[2].kind, UFFD_EV_UNMAP);
	assert_true(s.log.ev[2].range.start == t.sh->ev_remap_from);
	assert_true(s.log.ev[2].range.end == t.sh->ev_remap_from + 2 * PG);
	assert_int_equal(s.log.ev[3].kind, UFFD_EV_UNMAP);
	assert_true(s.log.ev[3].range.start == t.sh->ev_unmap);
	assert_true(s.log.ev[3].range.end == t.sh->ev_unmap + 2 * PG);
	assert_int_equal(s.log.ev[4].kind, UFFD_EV_FORK);
	child_fd = s.log.ev[4].fork.fd;
	assert_true(child_fd >= 0 && child_fd != fd);
	for (int i = 5; i < s.log.nev; i++) {
		if (s.log.ev[i].kind == UFFD_EV_GONE) {
			assert_int_equal(s.log.ev_fd[i], child_fd);
			gone++;
		}
	}
	assert_int_equal(gone, 1);
	for (int i = 0; i < s.log.n; i++) {
		if (s.log.fd_of[i] != child_fd)
			continue;
		assert_int_equal(s.log.f[i].tid, t.sh->fork_child);
		assert_true(s.log.f[i].addr == t.sh->region + (uint64_t)(56 + child_faults) * PG);
		child_faults++;
	}
	assert_int_equal(child_faults, 4);
	pthread_mutex_unlock(&s.log.lock);
	serve_stop(&s);
	finish_target(&t);
}

/* ---- KILL -9 chaos: the monitor dies at every stage ---- */

enum stage { ST_SEIZED, ST_LEAK_WINDOW, ST_MID_INJECT, ST_REGISTERED, ST_RELEASED, ST_SERVING };

static int chaos_rep = -1, chaos_hold = -1, chaos_faults;

static void hold_here(enum stage st)
{
	char c = (char)st;

	if (write(chaos_rep, &c, 1) != 1)
		_exit(90);
	/* wait to be killed */
	while (read(chaos_hold, &c, 1) != 0)
		;
	_exit(91);
}

static void chaos_fault(void *ctx, int fd, const struct uffd_fault *f)
{
	(void)ctx;
	(void)fd;
	(void)f;
	/* block inside the callback while other touches are pending */
	if (++chaos_faults == 5)
		hold_here(ST_SERVING);
}

static void __attribute__((noreturn)) injector(struct utarget *t, enum stage kill_at)
{
	struct uffd_server_ops ops = { .fault = chaos_fault };
	struct uffd_server *srv;
	struct inj *in = NULL;
	char why[256];
	long args[6] = { O_CLOEXEC | O_NONBLOCK }, rfd = -1, ret;
	uint64_t got;
	int fd = -1;

	if (inj_seize(t->pid, 0, &in, why, sizeof(why)))
		_exit(80);
	if (kill_at == ST_SEIZED)
		hold_here(ST_SEIZED);
	if (kill_at == ST_LEAK_WINDOW || kill_at == ST_MID_INJECT) {
		/* uffd_inject()'s steps by hand, to stop between them */
		if (inj_syscall(in, __NR_userfaultfd, args, &rfd) || rfd < 0)
			_exit(81);
		if (kill_at == ST_LEAK_WINDOW)
			hold_here(ST_LEAK_WINDOW);
		if (inj_getfd(in, (int)rfd, &fd))
			_exit(82);
		args[0] = rfd;
		if (inj_syscall(in, __NR_close, args, &ret) || ret)
			_exit(83);
		hold_here(ST_MID_INJECT);
	}
	if (uffd_inject(in, UFFD_EXACT_FEATURES, &fd, &got))
		_exit(84);
	if (uffd_register(fd, t->sh->region, NPAGES * PG, UFFDIO_REGISTER_MODE_MISSING, NULL))
		_exit(85);
	if (kill_at == ST_REGISTERED)
		hold_here(ST_REGISTERED);
	if (inj_release(in))
		_exit(86);
	if (uffd_server_new(&ops, NULL, UFFD_SRV_COPY, &srv) || uffd_server_add(srv, fd))
		_exit(87);
	if (kill_at == ST_RELEASED)
		hold_here(ST_RELEASED);
	/* tell the parent we serve; it starts a round; we block in the 5th fault */
	{
		char c = (char)ST_RELEASED;

		if (write(chaos_rep, &c, 1) != 1)
			_exit(88);
	}
	uffd_server_run(srv);
	_exit(89);
}

static void chaos(enum stage kill_at)
{
	struct utarget t;
	char *maps0, *fds0, *maps1, *fds1, c = 0, ack = 0;
	int rep[2], hold[2], st;
	pid_t inj;

	start_target(&t);
	maps0 = maps_of(t.pid);
	fds0 = fds_of(t.pid);
	assert_int_equal(pipe(rep), 0);
	assert_int_equal(pipe(hold), 0);
	inj = fork();
	assert_true(inj >= 0);
	if (inj == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(rep[0]);
		close(hold[1]);
		chaos_rep = rep[1];
		chaos_hold = hold[0];
		injector(&t, kill_at);
	}
	track(inj);
	close(rep[1]);
	close(hold[0]);
	assert_true(wait_readable(rep[0], GUARD_MS));
	assert_int_equal(read(rep[0], &c, 1), 1);
	if (kill_at == ST_SERVING) {
		/* start a touch round; the injector blocks in its 5th fault */
		assert_int_equal(c, ST_RELEASED);
		assert_int_equal(write(t.cmd_w, "g", 1), 1);
		assert_true(wait_readable(rep[0], GUARD_MS));
		assert_int_equal(read(rep[0], &c, 1), 1);
		assert_false(wait_readable(t.rep_r, 0));	/* the round is stuck */
	}
	assert_int_equal(c, (char)kill_at);
	if (kill_at == ST_SEIZED || kill_at == ST_REGISTERED || kill_at == ST_MID_INJECT ||
	    kill_at == ST_LEAK_WINDOW)
		assert_true(any_stopped(&t));	/* held right now */

	assert_int_equal(kill(inj, SIGKILL), 0);
	assert_int_equal(waitpid(inj, &st, 0), inj);
	untrack(inj);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	close(hold[1]);
	close(rep[0]);

	/* running, not stopped, not blocked on a fault, same maps and fds */
	assert_false(any_stopped(&t));
	assert_true(spins(&t));
	if (kill_at == ST_SERVING) {
		assert_true(wait_readable(t.rep_r, GUARD_MS));
		assert_int_equal(read(t.rep_r, &ack, 1), 1);
		assert_int_equal(ack, 'D');
	}
	assert_int_equal(command(&t, 'g'), 'D');
	maps1 = maps_of(t.pid);
	fds1 = fds_of(t.pid);
	assert_string_equal(maps0, maps1);
	if (kill_at == ST_LEAK_WINDOW) {
		/* documented: one inert, unregistered userfaultfd stays behind */
		assert_string_not_equal(fds0, fds1);
		assert_non_null(strstr(fds1, "anon_inode:[userfaultfd]"));
		assert_null(strstr(fds0, "anon_inode:[userfaultfd]"));
		{
			int l0 = 0, l1 = 0;

			for (char *p = fds0; *p; p++)
				l0 += *p == '\n';
			for (char *p = fds1; *p; p++)
				l1 += *p == '\n';
			assert_int_equal(l1, l0 + 1);
		}
	} else {
		assert_string_equal(fds0, fds1);
	}
	free(maps0);
	free(maps1);
	free(fds0);
	free(fds1);
	finish_target(&t);
}

static void test_kill_after_seize(void **state)
{
	(void)state;
	chaos(ST_SEIZED);
}

static void test_kill_mid_inject(void **state)
{
	(void)state;
	chaos(ST_MID_INJECT);
}

static void test_kill_in_leak_window(void **state)
{
	(void)state;
	chaos(ST_LEAK_WINDOW);
}

static void test_kill_registered_and_held(void **state)
{
	(void)state;
	chaos(ST_REGISTERED);
}

static void test_kill_after_release(void **state)
{
	(void)state;
	chaos(ST_RELEASED);
}

static void test_kill_while_serving(void **state)
{
	(void)state;
	chaos(ST_SERVING);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_probe, kill_leftovers),
		cmocka_unit_test_teardown(test_first_touches_zeropage, kill_leftovers),
		cmocka_unit_test_teardown(test_first_touches_copy, kill_leftovers),
		cmocka_unit_test_teardown(test_first_touches_remote_api, kill_leftovers),
		cmocka_unit_test_teardown(test_busy_poll_server, kill_leftovers),
		cmocka_unit_test_teardown(test_first_touches_dev, kill_leftovers),
		cmocka_unit_test_teardown(test_first_touches_dev_self_restore, kill_leftovers),
		cmocka_unit_test_teardown(test_close_unblocks, kill_leftovers),
		cmocka_unit_test_teardown(test_unregister, kill_leftovers),
		cmocka_unit_test_teardown(test_events_and_fork, kill_leftovers),
		cmocka_unit_test_teardown(test_kill_after_seize, kill_leftovers),
		cmocka_unit_test_teardown(test_kill_mid_inject, kill_leftovers),
		cmocka_unit_test_teardown(test_kill_in_leak_window, kill_leftovers),
		cmocka_unit_test_teardown(test_kill_registered_and_held, kill_leftovers),
		cmocka_unit_test_teardown(test_kill_after_release, kill_leftovers),
		cmocka_unit_test_teardown(test_kill_while_serving, kill_leftovers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
