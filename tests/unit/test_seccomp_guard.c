// SPDX-License-Identifier: GPL-2.0
/*
 * test_seccomp_guard.c - the seccomp proof against real filtered children (user/exact/).
 *
 * A child installs a real filter (allow everything but what the test names: kill, or fail
 * with EXDEV) and waits.  Without suspension, uffd_inject() through each userfaultfd API
 * path, and the trampoline's own close and rt_sigreturn (inj_force_self_restore: what runs
 * if mevitop dies mid-call), must go through the guard: each of those calls matches the list
 * of exact/seccomp_calls.c and is proven allowed, the child lives and its filter is in force
 * afterwards.  A filter that kills one listed call refuses the attach before any call; a
 * call missing from the list is refused at the moment it would be made.  With suspension,
 * only calls the thread would survive the filter seeing are made (attach_suspended).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "children.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "exact/seccomp_guard.h"
#include "exact/inject.h"
#include "exact/uffd.h"

struct child {
	pid_t pid;
	int cmd;	/* write a byte: the child tries getpgid, answers its errno on res */
	int res;
};

/* A child under a filter that returns @action for @nr (-1: none) and fails getpgid with
 * EXDEV. */
static struct child start_with(long nr, uint32_t action)
{
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getpgid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EXDEV),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = sizeof(prog) / sizeof(prog[0]), .filter = prog };
	int cmd[2], res[2];
	struct child c;
	char ready;

	assert_int_equal(pipe(cmd), 0);
	assert_int_equal(pipe(res), 0);
	c.pid = fork();
	assert_true(c.pid >= 0);
	if (c.pid == 0) {
		char b;

		close(cmd[1]);
		close(res[0]);
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp))
			_exit(3);
		b = 'r';
		if (write(res[1], &b, 1) != 1)
			_exit(3);
		while (read(cmd[0], &b, 1) == 1) {
			b = syscall(__NR_getpgid, 0) < 0 ? (char)errno : 0;
			if (write(res[1], &b, 1) != 1)
				_exit(3);
		}
		_exit(0);
	}
	track(c.pid);
	close(cmd[0]);
	close(res[1]);
	c.cmd = cmd[1];
	c.res = res[0];
	assert_true(wait_readable(c.res, 5000));
	assert_int_equal(read(c.res, &ready, 1), 1);
	assert_int_equal(ready, 'r');
	return c;
}

/* A child whose filter kills @kill_nr. */
static struct child start(long kill_nr)
{
	return start_with(kill_nr, SECCOMP_RET_KILL_PROCESS);
}

/* The child is not left stopped and still runs, its filter in force (getpgid fails with
 * EXDEV); then it exits. */
static void finish(struct child *c)
{
	uint64_t deadline = mono_ms() + 5000;
	char b = 'g';
	int st;

	while (state_of(c->pid, c->pid) == 't' || state_of(c->pid, c->pid) == 'T') {
		assert_true(mono_ms() < deadline);
		sleep_ms(1);
	}
	assert_int_equal(write(c->cmd, &b, 1), 1);
	assert_true(wait_readable(c->res, 5000));
	assert_int_equal(read(c->res, &b, 1), 1);
	assert_int_equal(b, EXDEV);
	close(c->cmd);
	assert_int_equal(waitpid(c->pid, &st, 0), c->pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(c->res);
	untrack(c->pid);
}

static void attach_via(enum uffd_api_path path, bool self_restore)
{
	struct child c = start(__NR_getpriority);
	struct inj *in = NULL;
	char why[512] = "";
	uint64_t got = 0;
	int fd = -1;

	inj_set_suspend_seccomp(false);
	uffd_set_api_path(path);
	inj_force_self_restore(self_restore);
	assert_int_equal(inj_seize(c.pid, 0, &in, why, sizeof(why)), 0);
	assert_int_equal(inj_seccomp_mode(in), 2);
	assert_false(inj_seccomp_suspended(in));
	assert_int_equal(seccomp_guard_prepare(in, why, sizeof(why)), 0);
	if (uffd_inject(in, UFFD_EXACT_FEATURES, &fd, &got))
		fail_msg("uffd_inject: %s", uffd_why());
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(inj_release(in), 0);
	inj_force_self_restore(false);
	uffd_set_api_path(UFFD_API_AUTO);
	finish(&c);
}

static void test_local_api(void **state)
{
	(void)state;
	attach_via(UFFD_API_LOCAL, false);
}

static void test_remote_api(void **state)
{
	(void)state;
	attach_via(UFFD_API_REMOTE, false);
}

static void test_self_restore(void **state)
{
	(void)state;
	attach_via(UFFD_API_AUTO, true);
}

/*
 * Suspended, the filter is never asked, but a call left in a thread's registers by a
 * killed mevitop would meet it: so only calls the thread would survive it seeing are made.
 * @nr gets @action; *@create says which way the userfaultfd was made, or the error is
 * returned with why in @why: seccomp_guard_prepare's (refused before any call, the maps untouched)
 * or uffd_inject's.
 */
static int attach_suspended(long nr, uint32_t action, enum uffd_create *create, char *why,
			    size_t whylen)
{
	struct child c = start_with(nr, action);
	struct inj *in = NULL;
	uint64_t got = 0;
	int fd = -1, err;
	char path[64], *maps_before, *maps_after;

	snprintf(path, sizeof(path), "/proc/%d/maps", c.pid);
	maps_before = slurp(path);
	inj_set_suspend_seccomp(true);
	assert_int_equal(inj_seize(c.pid, 0, &in, why, whylen), 0);
	assert_true(inj_seccomp_suspended(in));
	err = seccomp_guard_prepare(in, why, whylen);
	if (!err) {
		err = uffd_inject(in, UFFD_EXACT_FEATURES, &fd, &got);
		snprintf(why, whylen, "%s", err ? uffd_why() : "");
	} else {
		maps_after = slurp(path);
		assert_string_equal(maps_before, maps_after);	/* not even a scratch page */
		free(maps_after);
	}
	free(maps_before);
	*create = err ? UFFD_CREATE_NONE : uffd_last_create();
	if (fd >= 0)
		close(fd);
	assert_int_equal(inj_release(in), 0);
	inj_set_suspend_seccomp(false);
	finish(&c);
	return err;
}

/* A filter that kills userfaultfd(): never made; the /dev/userfaultfd handoff instead. */
static void test_suspended_kill_takes_the_handoff(void **state)
{
	enum uffd_create create;
	char why[1024];

	(void)state;
	if (attach_suspended(__NR_userfaultfd, SECCOMP_RET_KILL_PROCESS, &create, why,
			     sizeof(why)))
		fail_msg("uffd_inject: %s", why);
	assert_int_equal(create, UFFD_CREATE_DEV);
}

/* One that makes it fail is survivable: userfaultfd() itself is made. */
static void test_suspended_errno_makes_the_call(void **state)
{
	enum uffd_create create;
	char why[1024];

	(void)state;
	if (attach_suspended(__NR_userfaultfd, SECCOMP_RET_ERRNO | EPERM, &create, why,
			     sizeof(why)))
		fail_msg("uffd_inject: %s", why);
	assert_int_equal(create, UFFD_CREATE_SYSCALL);
}

/* TRAP on close (every way closes the target's copy), and a close or rt_sigreturn that
 * fails (the target would keep the fd; the thread would fall through past the
 * trampoline) are not survivable: refused, with the verdict. */
static void test_suspended_refused(void **state)
{
	static const struct { long nr; uint32_t action; const char *said; } cases[] = {
		{ __NR_close, SECCOMP_RET_TRAP, "returns TRAP" },
		{ __NR_close, SECCOMP_RET_ERRNO | EPERM, "returns ERRNO(1) for close(" },
		{ __NR_rt_sigreturn, SECCOMP_RET_ERRNO | EPERM, "returns ERRNO(1) for rt_sigreturn(" },
	};
	enum uffd_create create;
	char why[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(attach_suspended(cases[i].nr, cases[i].action, &create, why,
						  sizeof(why)), -EPERM);
		if (!strstr(why, cases[i].said))
			fail_msg("case %zu: %s", i, why);
	}
}

static void test_refused_before_any_call(void **state)
{
	static const long kill[] = { __NR_userfaultfd, __NR_mmap, __NR_ioctl, __NR_close,
				     __NR_prctl, __NR_munmap, __NR_rt_sigreturn };
	static const char *const name[] = { "userfaultfd(", "mmap(", "ioctl(", "close(",
					     "prctl(", "munmap(", "rt_sigreturn(" };

	(void)state;
	inj_set_suspend_seccomp(false);
	for (size_t i = 0; i < sizeof(kill) / sizeof(kill[0]); i++) {
		struct child c = start(kill[i]);
		struct inj *in = NULL;
		char why[512] = "", *maps_before, *maps_after, path[64];

		snprintf(path, sizeof(path), "/proc/%d/maps", c.pid);
		maps_before = slurp(path);
		assert_int_equal(inj_seize(c.pid, 0, &in, why, sizeof(why)), 0);
		assert_int_equal(seccomp_guard_prepare(in, why, sizeof(why)), -EPERM);
		if (!strstr(why, "returns KILL_PROCESS for ") || !strstr(why, name[i]))
			fail_msg("case %zu: %s", i, why);
		assert_int_equal(inj_release(in), 0);
		maps_after = slurp(path);
		assert_string_equal(maps_before, maps_after);	/* not even a scratch page */
		free(maps_before);
		free(maps_after);
		finish(&c);
	}
}

/* A call nobody listed is refused when it would be made, though the filter allows it. */
static void test_unlisted_call_refused(void **state)
{
	struct child c = start(-1);
	struct inj *in = NULL;
	long args[6] = { 0 }, ret = 0;
	char why[512] = "";

	(void)state;
	inj_set_suspend_seccomp(false);
	assert_int_equal(inj_seize(c.pid, 0, &in, why, sizeof(why)), 0);
	assert_int_equal(seccomp_guard_prepare(in, why, sizeof(why)), 0);
	char *before = maps_without_scratch(c.pid), *after;

	assert_int_equal(inj_syscall(in, __NR_getppid, args, &ret), -EPERM);
	args[0] = -1;
	assert_int_equal(inj_syscall(in, __NR_close, args, &ret), 0);	/* listed */
	assert_int_equal(ret, -EBADF);
	assert_int_equal(inj_release(in), 0);
	after = maps_without_scratch(c.pid);
	assert_string_equal(before, after);
	free(before);
	free(after);
	finish(&c);
}

static int teardown(void **state)
{
	(void)state;
	kill_children();
	inj_set_suspend_seccomp(false);
	inj_force_self_restore(false);
	uffd_set_api_path(UFFD_API_AUTO);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_local_api, teardown),
		cmocka_unit_test_teardown(test_remote_api, teardown),
		cmocka_unit_test_teardown(test_self_restore, teardown),
		cmocka_unit_test_teardown(test_suspended_kill_takes_the_handoff, teardown),
		cmocka_unit_test_teardown(test_suspended_errno_makes_the_call, teardown),
		cmocka_unit_test_teardown(test_suspended_refused, teardown),
		cmocka_unit_test_teardown(test_refused_before_any_call, teardown),
		cmocka_unit_test_teardown(test_unlisted_call_refused, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
