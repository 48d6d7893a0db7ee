// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp_wl - a target under a seccomp filter of its own, for exact mode's seccomp tests
 * (tests/integration/test_exact_seccomp.py, killsweep.py):
 *
 *   seccomp_wl RULE... [-- PROG ARG...]
 *
 * RULE: kill=NAME (SECCOMP_RET_KILL_PROCESS on that call), errno=NAME (it fails with
 * EXDEV), killexec=NAME (kill if its third argument has PROT_EXEC: mmap's prot).  NAME is
 * one of the calls below.  It sets PR_SET_NO_NEW_PRIVS, installs the filter (a small cBPF
 * program built here: arch check, then one block per rule, default ALLOW), and either
 * execs PROG (the filter goes with it) or serves:
 *
 *   prints "ready PID", then one command per line on stdin:
 *   touch START COUNT	write one byte in each of COUNT pages of its 1024-page region
 *			from page START: "done MONO_NS 0xREGION"
 *   try NAME		make that call with harmless arguments: "done MONO_NS ret=R errno=E"
 *			(a filter that kills ends the process with SIGSYS instead)
 *   exit
 */
#include "workload.h"

#include <fcntl.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#define REGION_PAGES	1024
#define MAX_INSNS	256

static const struct {
	const char *name;
	long nr;
} calls[] = {
	{ "getpriority", __NR_getpriority },
	{ "getpgid", __NR_getpgid },
	{ "userfaultfd", __NR_userfaultfd },
	{ "ioctl", __NR_ioctl },
	{ "mmap", __NR_mmap },
	{ "munmap", __NR_munmap },
	{ "prctl", __NR_prctl },
	{ "close", __NR_close },
	{ "socketpair", __NR_socketpair },	/* the /dev/userfaultfd handoff's */
	{ "memfd_create", __NR_memfd_create },	/* the scratch page's */
	{ "ftruncate", __NR_ftruncate },
};

static long nr_of(const char *name)
{
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(calls[i].name, name))
			return calls[i].nr;
	fprintf(stderr, "workload: unknown system call %s\n", name);
	exit(2);
}

static struct sock_filter prog[MAX_INSNS];
static unsigned short n;

static void emit(struct sock_filter f)
{
	if (n == MAX_INSNS) {
		fprintf(stderr, "workload: too many rules\n");
		exit(2);
	}
	prog[n++] = f;
}

#define LD(off)		emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off)))
#define RET(v)		emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, (v)))
#define JEQ(k, t, f)	emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f)))
#define JSET(k, t, f)	emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (k), (t), (f)))

static void install(int nrules, char **rules)
{
	struct sock_fprog fp;

	LD(offsetof(struct seccomp_data, arch));
	JEQ(AUDIT_ARCH_X86_64, 1, 0);
	RET(SECCOMP_RET_KILL_PROCESS);
	for (int i = 0; i < nrules; i++) {
		char *eq = strchr(rules[i], '=');
		long nr;

		if (!eq) {
			fprintf(stderr, "workload: bad rule %s\n", rules[i]);
			exit(2);
		}
		*eq = '\0';
		nr = nr_of(eq + 1);
		LD(offsetof(struct seccomp_data, nr));
		if (!strcmp(rules[i], "kill")) {
			JEQ((uint32_t)nr, 0, 1);
			RET(SECCOMP_RET_KILL_PROCESS);
		} else if (!strcmp(rules[i], "errno")) {
			JEQ((uint32_t)nr, 0, 1);
			RET(SECCOMP_RET_ERRNO | EXDEV);
		} else if (!strcmp(rules[i], "killexec")) {
			JEQ((uint32_t)nr, 0, 3);
			LD(offsetof(struct seccomp_data, args[2]));
			JSET(PROT_EXEC, 0, 1);
			RET(SECCOMP_RET_KILL_PROCESS);
		} else {
			fprintf(stderr, "workload: bad rule kind %s\n", rules[i]);
			exit(2);
		}
	}
	RET(SECCOMP_RET_ALLOW);
	fp.len = n;
	fp.filter = prog;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		wl_die("failed to set no_new_privs");
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp))
		wl_die("failed to install the seccomp filter");
}

static long try(const char *name)
{
	long nr = nr_of(name), r;

	switch (nr) {
	case __NR_getpriority:
		return syscall(nr, PRIO_PROCESS, 0);
	case __NR_getpgid:
		return syscall(nr, 0);
	case __NR_userfaultfd:
		r = syscall(nr, O_CLOEXEC | O_NONBLOCK);
		if (r >= 0)
			close((int)r);
		return r;
	case __NR_mmap: {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -1;
		munmap(p, 4096);
		return 0;
	}
	default:
		return syscall(nr, -1, 0, 0);	/* a bad fd or pointer: fails, harmlessly */
	}
}

int main(int argc, char **argv)
{
	char line[256], extra[64];
	int nrules = 0;
	char *region;

	while (1 + nrules < argc && strcmp(argv[1 + nrules], "--"))
		nrules++;
	install(nrules, argv + 1);
	if (1 + nrules < argc) {
		execv(argv[2 + nrules], argv + 2 + nrules);
		wl_die("failed to execute %s", argv[2 + nrules]);
	}
	region = mmap(NULL, REGION_PAGES * 4096, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		wl_die("failed to map the region");
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", getpid());
	while (fgets(line, sizeof(line), stdin)) {
		char word[32], name[32];
		unsigned long start, count;

		if (sscanf(line, "%31s", word) != 1)
			continue;
		if (!strcmp(word, "exit"))
			break;
		if (!strcmp(word, "touch") && sscanf(line, "%*s %lu %lu", &start, &count) == 2 &&
		    start + count <= REGION_PAGES) {
			for (unsigned long p = start; p < start + count; p++)
				region[p * 4096] = 1;
			snprintf(extra, sizeof(extra), "%p", (void *)region);
			wl_done(extra);
		} else if (!strcmp(word, "try") && sscanf(line, "%*s %31s", name) == 1) {
			long r;

			errno = 0;
			r = try(name);
			snprintf(extra, sizeof(extra), "ret=%ld errno=%d", r, r < 0 ? errno : 0);
			wl_done(extra);
		} else {
			errno = EINVAL;
			wl_fail(word);
		}
	}
	return 0;
}
