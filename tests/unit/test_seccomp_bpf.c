// SPDX-License-Identifier: GPL-2.0
/*
 * test_seccomp_bpf.c - the seccomp cBPF checker and all-paths runner (user/exact/).
 *
 *  - hand-made programs: each verdict, each kind of program the kernel refuses, unknown
 *    words followed both ways, the path cap;
 *  - the kernel as the truth: random programs (seeded) are installed as real filters in
 *    forked children, which then make a real system call with random arguments; the kernel
 *    must accept exactly the programs seccomp_bpf_check() accepts, and the call must end as the
 *    runner says (allowed, failed with that errno, or killed by SIGSYS);
 *  - fuzzing under ASan/UBSan: random and mutated programs with random unknown words must
 *    end in a clean answer, and a proof with unknown words must hold for random values of
 *    them (a proven "allowed" is never contradicted by a concrete run).
 * MEVITOP_TEST_SEED=<n> replays a run; the seed in use is always printed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/seccomp.h>

#include "exact/seccomp_bpf.h"
#include "rng.h"

#define S(code, k)		((struct sock_filter)BPF_STMT((code), (k)))
#define J(code, k, t, f)	((struct sock_filter)BPF_JUMP((code), (k), (t), (f)))
#define LD(off)			S(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v)			S(BPF_RET | BPF_K, (v))
#define OFF_NR			offsetof(struct seccomp_data, nr)
#define OFF_ARCH		offsetof(struct seccomp_data, arch)
#define OFF_ARG(i)		(offsetof(struct seccomp_data, args) + 8 * (i))
#define N(a)			(sizeof(a) / sizeof((a)[0]))

static struct scbpf_input input(long nr)
{
	struct scbpf_input in = { .nr = (int32_t)nr, .arch = AUDIT_ARCH_X86_64 };

	return in;
}

static int allows(const struct sock_filter *p, size_t n, const struct scbpf_input *in,
		  struct scbpf_result *r)
{
	char why[128];

	return seccomp_bpf_allows(p, n, in, r, why, sizeof(why));
}

static void test_verdicts(void **state)
{
	struct sock_filter p[] = {
		LD(OFF_ARCH),
		J(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		RET(SECCOMP_RET_KILL_PROCESS),
		LD(OFF_NR),
		J(BPF_JMP | BPF_JEQ | BPF_K, __NR_getpriority, 0, 1),
		RET(SECCOMP_RET_KILL_PROCESS),
		J(BPF_JMP | BPF_JEQ | BPF_K, __NR_getpgid, 0, 1),
		RET(SECCOMP_RET_ERRNO | EXDEV),
		J(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		RET(SECCOMP_RET_LOG),
		RET(SECCOMP_RET_ALLOW),
	};
	struct scbpf_input in = input(__NR_userfaultfd);
	struct scbpf_result r;
	char name[64];

	(void)state;
	assert_int_equal(allows(p, N(p), &in, &r), 1);
	assert_int_equal(r.paths, 1);
	in.nr = __NR_getppid;
	assert_int_equal(allows(p, N(p), &in, &r), 1);	/* LOG lets it run */
	in.nr = __NR_getpriority;
	assert_int_equal(allows(p, N(p), &in, &r), 0);
	assert_int_equal(r.verdict, SECCOMP_RET_KILL_PROCESS);
	assert_int_equal(r.insn, 5);
	assert_string_equal(seccomp_bpf_verdict_name(r.verdict, name, sizeof(name)), "KILL_PROCESS");
	in.nr = __NR_getpgid;
	assert_int_equal(allows(p, N(p), &in, &r), 0);
	assert_string_equal(seccomp_bpf_verdict_name(r.verdict, name, sizeof(name)), "ERRNO(18)");
	in = input(__NR_userfaultfd);
	in.arch = AUDIT_ARCH_I386;
	assert_int_equal(allows(p, N(p), &in, &r), 0);
	/* the nr unknown: some path kills */
	in = input(0);
	in.unknown = 1;
	assert_int_equal(allows(p, N(p), &in, &r), 0);
	assert_int_equal(seccomp_bpf_worse(SECCOMP_RET_ALLOW, SECCOMP_RET_KILL_PROCESS),
			 SECCOMP_RET_KILL_PROCESS);
	assert_int_equal(seccomp_bpf_worse(SECCOMP_RET_ERRNO | 1, SECCOMP_RET_TRAP), SECCOMP_RET_TRAP);
	assert_int_equal(seccomp_bpf_worse(SECCOMP_RET_KILL_THREAD, SECCOMP_RET_KILL_PROCESS),
			 SECCOMP_RET_KILL_PROCESS);
	assert_false(seccomp_bpf_verdict_allows(0x12345678));	/* unknown actions kill */
}

/* mmap's prot: a filter on an argument, proven only where the argument is known */
static void test_unknown_args(void **state)
{
	struct sock_filter p[] = {
		LD(OFF_NR),
		J(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 0, 3),
		LD(OFF_ARG(2)),
		J(BPF_JMP | BPF_JSET | BPF_K, 4 /* PROT_EXEC */, 0, 1),
		RET(SECCOMP_RET_KILL_PROCESS),
		RET(SECCOMP_RET_ALLOW),
	};
	/* equality refines: after jeq 7 on the true side A is 7, so jeq 8 cannot be true */
	struct sock_filter q[] = {
		LD(OFF_ARG(0)),
		J(BPF_JMP | BPF_JEQ | BPF_K, 7, 0, 2),
		J(BPF_JMP | BPF_JEQ | BPF_K, 8, 0, 1),
		RET(SECCOMP_RET_KILL_PROCESS),
		RET(SECCOMP_RET_ALLOW),
	};
	struct sock_filter ret_a[] = { LD(OFF_ARG(1)), S(BPF_RET | BPF_A, 0) };
	struct scbpf_input in = input(__NR_mmap);
	struct scbpf_result r;

	(void)state;
	in.args[2] = 3;
	assert_int_equal(allows(p, N(p), &in, &r), 1);
	in.args[2] = 5;
	assert_int_equal(allows(p, N(p), &in, &r), 0);
	in.unknown = SCBPF_ARG_UNKNOWN(2);
	assert_int_equal(allows(p, N(p), &in, &r), 0);
	in.unknown = SCBPF_ARG_UNKNOWN(1) | SCBPF_IP_UNKNOWN;	/* not read: still proven */
	in.args[2] = 3;
	assert_int_equal(allows(p, N(p), &in, &r), 1);
	in = input(0);
	in.unknown = SCBPF_ARG_UNKNOWN(0);
	assert_int_equal(allows(q, N(q), &in, &r), 1);
	assert_int_equal(r.paths, 2);
	in.unknown = SCBPF_ARG_UNKNOWN(1);
	assert_int_equal(allows(ret_a, N(ret_a), &in, &r), 0);
	assert_true(r.verdict_unknown);
	in.unknown = 0;
	in.args[1] = SECCOMP_RET_ALLOW;
	assert_int_equal(allows(ret_a, N(ret_a), &in, &r), 1);
}

/* ALU, scratch memory, X, and division by zero returning 0 (KILL_THREAD) */
static void test_alu_mem(void **state)
{
	struct sock_filter p[] = {
		LD(OFF_ARG(0)),
		S(BPF_ST, 3),
		S(BPF_ALU | BPF_ADD | BPF_K, 5),
		S(BPF_MISC | BPF_TAX, 0),
		S(BPF_LD | BPF_MEM, 3),
		S(BPF_ALU | BPF_SUB | BPF_X, 0),	/* A = arg0 - (arg0 + 5) = -5 */
		S(BPF_ALU | BPF_NEG, 0),		/* 5 */
		S(BPF_ALU | BPF_LSH | BPF_K, 2),	/* 20 */
		J(BPF_JMP | BPF_JEQ | BPF_K, 20, 1, 0),
		RET(SECCOMP_RET_KILL_PROCESS),
		S(BPF_LDX | BPF_IMM, 0),
		S(BPF_ALU | BPF_DIV | BPF_X, 0),	/* by zero: the kernel returns 0 */
		RET(SECCOMP_RET_ALLOW),
	};
	struct scbpf_input in = input(1);
	struct scbpf_result r;

	(void)state;
	in.args[0] = 1234;
	assert_int_equal(allows(p, N(p), &in, &r), 0);
	assert_int_equal(r.verdict, SECCOMP_RET_KILL_THREAD);
	assert_int_equal(r.insn, 11);
	/* with arg0 unknown the arithmetic is unknown: both ways of the jeq are followed */
	in.unknown = SCBPF_ARG_UNKNOWN(0);
	assert_int_equal(allows(p, N(p), &in, &r), 0);
}

static void test_refused_programs(void **state)
{
	static const struct {
		struct sock_filter p[3];
		size_t n;
		const char *what;
	} cases[] = {
		{ { LD(64), RET(0) }, 2, "outside" },
		{ { LD(2), RET(0) }, 2, "outside" },
		{ { S(BPF_LD | BPF_W | BPF_IND, 0), RET(0) }, 2, "opcode" },
		{ { S(BPF_LD | BPF_B | BPF_ABS, 0), RET(0) }, 2, "opcode" },
		{ { S(BPF_ALU | BPF_MOD | BPF_K, 3), RET(0) }, 2, "opcode" },
		{ { S(BPF_RET | BPF_X, 0) }, 1, "opcode" },
		{ { S(BPF_ALU | BPF_DIV | BPF_K, 0), RET(0) }, 2, "divides" },
		{ { S(BPF_ALU | BPF_RSH | BPF_K, 32), RET(0) }, 2, "shifts" },
		{ { S(BPF_ST, 16), RET(0) }, 2, "slot" },
		{ { S(BPF_JMP | BPF_JA, 1), RET(0) }, 2, "past the end" },
		{ { J(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1), RET(0) }, 2, "past the end" },
		{ { LD(0), S(BPF_ALU | BPF_ADD | BPF_K, 1) }, 2, "does not return" },
		{ { S(BPF_LD | BPF_MEM, 2), RET(0) }, 2, "before writing" },
		/* written on one side of a jump only */
		{ { J(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 0), S(BPF_LDX | BPF_MEM, 1), RET(0) }, 3,
		  "before writing" },
	};
	struct sock_filter one = RET(SECCOMP_RET_ALLOW);
	struct scbpf_input in = input(0);
	struct scbpf_result r;
	char why[128];

	(void)state;
	for (size_t i = 0; i < N(cases); i++) {
		why[0] = '\0';
		assert_int_equal(seccomp_bpf_check(cases[i].p, cases[i].n, why, sizeof(why)), -EINVAL);
		if (!strstr(why, cases[i].what))
			fail_msg("case %zu: '%s' does not say '%s'", i, why, cases[i].what);
		assert_int_equal(seccomp_bpf_allows(cases[i].p, cases[i].n, &in, &r, why, sizeof(why)),
				 -EINVAL);
	}
	assert_int_equal(seccomp_bpf_check(&one, 0, why, sizeof(why)), -EINVAL);
	assert_int_equal(seccomp_bpf_check(NULL, 1, why, sizeof(why)), -EINVAL);
	assert_int_equal(seccomp_bpf_check(&one, SCBPF_MAX_INSNS + 1, why, sizeof(why)), -EINVAL);
	assert_int_equal(seccomp_bpf_check(&one, 1, why, sizeof(why)), 0);
}

/* 2^20 paths: past the cap, answered quickly and without a proof */
static void test_path_cap(void **state)
{
	struct sock_filter p[41];
	struct scbpf_input in = input(0);
	struct scbpf_result r;
	char why[128];

	(void)state;
	for (int i = 0; i < 20; i++) {
		p[2 * i] = LD(OFF_ARG(i % 6));
		p[2 * i + 1] = J(BPF_JMP | BPF_JSET | BPF_K, 1u << i, 0, 0);
	}
	p[40] = RET(SECCOMP_RET_ALLOW);
	in.unknown = 0xfff0;
	assert_int_equal(seccomp_bpf_allows(p, N(p), &in, &r, why, sizeof(why)), -E2BIG);
	assert_non_null(strstr(why, "paths"));
	in.unknown = 0;
	assert_int_equal(seccomp_bpf_allows(p, N(p), &in, &r, why, sizeof(why)), 1);
}

/* ---- random programs ---- */

static const uint16_t codes[] = {
	BPF_LD | BPF_W | BPF_ABS, BPF_LD | BPF_W | BPF_ABS, BPF_LD | BPF_W | BPF_ABS,
	BPF_LD | BPF_W | BPF_LEN, BPF_LDX | BPF_W | BPF_LEN, BPF_ALU | BPF_ADD | BPF_K,
	BPF_ALU | BPF_ADD | BPF_X, BPF_ALU | BPF_SUB | BPF_K, BPF_ALU | BPF_SUB | BPF_X,
	BPF_ALU | BPF_MUL | BPF_K, BPF_ALU | BPF_MUL | BPF_X, BPF_ALU | BPF_DIV | BPF_K,
	BPF_ALU | BPF_DIV | BPF_X, BPF_ALU | BPF_AND | BPF_K, BPF_ALU | BPF_AND | BPF_X,
	BPF_ALU | BPF_OR | BPF_K, BPF_ALU | BPF_OR | BPF_X, BPF_ALU | BPF_XOR | BPF_K,
	BPF_ALU | BPF_XOR | BPF_X, BPF_ALU | BPF_LSH | BPF_K, BPF_ALU | BPF_LSH | BPF_X,
	BPF_ALU | BPF_RSH | BPF_K, BPF_ALU | BPF_RSH | BPF_X, BPF_ALU | BPF_NEG,
	BPF_LD | BPF_IMM, BPF_LDX | BPF_IMM, BPF_MISC | BPF_TAX, BPF_MISC | BPF_TXA,
	BPF_LD | BPF_MEM, BPF_LDX | BPF_MEM, BPF_ST, BPF_STX, BPF_JMP | BPF_JA,
	BPF_JMP | BPF_JEQ | BPF_K, BPF_JMP | BPF_JEQ | BPF_K, BPF_JMP | BPF_JEQ | BPF_X,
	BPF_JMP | BPF_JGE | BPF_K, BPF_JMP | BPF_JGE | BPF_X, BPF_JMP | BPF_JGT | BPF_K,
	BPF_JMP | BPF_JGT | BPF_X, BPF_JMP | BPF_JSET | BPF_K, BPF_JMP | BPF_JSET | BPF_X,
	BPF_RET | BPF_K, BPF_RET | BPF_A,
};

/* Return values the kernel check can tell apart: ERRNO(n) for small n, and ALLOW. */
static uint32_t random_verdict(bool kernel)
{
	switch (rng_under(kernel ? 3 : 6)) {
	case 0: return SECCOMP_RET_ALLOW;
	case 1: return SECCOMP_RET_ERRNO | (uint32_t)(1 + rng_under(100));
	case 2: return kernel ? SECCOMP_RET_ALLOW : SECCOMP_RET_LOG;
	case 3: return SECCOMP_RET_KILL_PROCESS;
	case 4: return SECCOMP_RET_TRAP;
	default: return (uint32_t)rng_u64();
	}
}

/*
 * A program of @len instructions (@valid: ending in a return; else with a few lies).
 * @kernel: for the kernel test - no loads of the instruction pointer (it cannot know
 * glibc's), no RET A, and only verdicts it can tell apart.
 */
static void random_prog(struct sock_filter *p, size_t len, bool kernel, bool valid)
{
	for (size_t i = 0; i < len; i++) {
		uint16_t code = codes[rng_under(N(codes))];
		struct sock_filter f = { .code = code };
		size_t left = len - 1 - i;

		if (kernel && code == (BPF_RET | BPF_A))
			code = f.code = BPF_RET | BPF_K;
		switch (code) {
		case BPF_LD | BPF_W | BPF_ABS:
			do
				f.k = (uint32_t)(rng_under(16) * 4);
			while (kernel && (f.k == 8 || f.k == 12));
			break;
		case BPF_LD | BPF_MEM: case BPF_LDX | BPF_MEM: case BPF_ST: case BPF_STX:
			f.k = (uint32_t)rng_under(16);
			break;
		case BPF_ALU | BPF_LSH | BPF_K: case BPF_ALU | BPF_RSH | BPF_K:
			f.k = (uint32_t)rng_under(32);
			break;
		case BPF_ALU | BPF_DIV | BPF_K:
			f.k = (uint32_t)(1 + rng_under(9));
			break;
		case BPF_RET | BPF_K:
			f.k = random_verdict(kernel);
			break;
		default:
			f.k = rng_under(2) ? (uint32_t)rng_under(8) : (uint32_t)rng_u64();
			break;
		}
		if (BPF_CLASS(code) == BPF_JMP) {
			if (!left) {
				f = (struct sock_filter)RET(random_verdict(kernel));
			} else if (BPF_OP(code) == BPF_JA) {
				f.k = (uint32_t)rng_under(left);
			} else {
				f.jt = (uint8_t)rng_under(left < 256 ? left : 256);
				f.jf = (uint8_t)rng_under(left < 256 ? left : 256);
			}
		}
		p[i] = f;
	}
	if (valid) {
		p[len - 1] = (struct sock_filter)RET(random_verdict(kernel));
		return;
	}
	/* a lie here and there: a bad opcode, offset, jump or slot */
	for (int m = (int)rng_under(3); m >= 0; m--) {
		struct sock_filter *f = &p[rng_under(len)];

		switch (rng_under(5)) {
		case 0: f->code = (uint16_t)rng_u64(); break;
		case 1: f->k = (uint32_t)rng_u64(); break;
		case 2: f->jt = (uint8_t)rng_u64(); break;
		case 3: f->jf = (uint8_t)rng_u64(); break;
		default: *f = (struct sock_filter)S(BPF_LD | BPF_MEM, (uint32_t)rng_under(20)); break;
		}
	}
}

/* What the kernel did with program @p and a call of @nr with @args: 'r' refused the
 * program, 'a' allowed the call, 'e' errno in *err, 'k' killed (SIGSYS), '?' else. */
static char kernel_says(const struct sock_filter *body, size_t n, long nr, const long args[6],
			int *err)
{
	/* Every other call the child makes (write, exit) is allowed by the prefix, which
	 * then sets A back to 0 as the body expects. */
	struct sock_filter p[4 + SCBPF_MAX_INSNS];
	struct sock_fprog fp = { .len = (unsigned short)(n + 4), .filter = p };
	int pfd[2], st;
	char c = '?';
	pid_t pid;

	p[0] = LD(OFF_NR);
	p[1] = J(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 1, 0);
	p[2] = RET(SECCOMP_RET_ALLOW);
	p[3] = S(BPF_LD | BPF_IMM, 0);
	memcpy(p + 4, body, n * sizeof(*body));
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char out[8];
		long r;

		close(pfd[0]);
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp)) {
			out[0] = 'r';
			syscall(__NR_write, pfd[1], out, 1);
			syscall(__NR_exit_group, 0);
		}
		r = syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]);
		out[0] = r < 0 ? 'e' : 'a';
		out[1] = (char)(r < 0 ? errno : 0);
		syscall(__NR_write, pfd[1], out, 2);
		syscall(__NR_exit_group, 0);
	}
	close(pfd[1]);
	{
		char in[2] = { 0, 0 };
		ssize_t got = read(pfd[0], in, 2);

		if (got >= 1)
			c = in[0];
		*err = (unsigned char)in[1];
	}
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (c == '?' && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
		c = 'k';
	return c;
}

/* The kernel as the truth, on random programs and random arguments of getppid. */
static void test_against_kernel(void **state)
{
	static struct sock_filter p[64];
	int rounds = 1500, disagree = 0, accepted = 0;

	(void)state;
	rng_seed("test_against_kernel");
	for (int round = 0; round < rounds; round++) {
		size_t len = 1 + rng_under(N(p));
		struct scbpf_input in = input(__NR_getppid);
		struct scbpf_result r;
		char why[128] = "", k, want;
		int err = 0, ok;

		random_prog(p, len, true, rng_under(8) != 0);
		for (int a = 0; a < 6; a++)
			in.args[a] = rng_under(2) ? rng_under(10) : rng_u64();
		ok = seccomp_bpf_allows(p, len, &in, &r, why, sizeof(why));
		k = kernel_says(p, len, __NR_getppid, (long *)in.args, &err);
		if (ok == -EINVAL)
			want = 'r';
		else if (ok == 1)
			want = 'a';
		else if ((r.verdict & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO)
			want = 'e';
		else
			want = 'k';	/* 0 from a division by zero kills the thread */
		accepted += ok != -EINVAL;
		assert_int_not_equal(ok, -E2BIG);
		if (k != want || (k == 'e' && (uint32_t)err != (r.verdict & SECCOMP_RET_DATA))) {
			disagree++;
			print_message("round %d: kernel says %c (errno %d), we say %c (%s, verdict "
				      "%#x)\n", round, k, err, want, why, r.verdict);
			for (size_t i = 0; i < len; i++)
				print_message("  %zu: code %#x jt %u jf %u k %#x\n", i, p[i].code,
					      p[i].jt, p[i].jf, p[i].k);
			for (int a = 0; a < 6; a++)
				print_message("  arg%d %#llx\n", a, (unsigned long long)in.args[a]);
		}
		if (ok >= 0)
			assert_int_equal(r.paths, 1);	/* all known: one path */
	}
	print_message("kernel: %d of %d programs accepted, %d answers differ\n", accepted,
		      rounds, disagree);
	assert_int_equal(disagree, 0);
	assert_true(accepted > rounds / 4);
}

/* Hostile programs and unknown words: clean answers, and proofs that hold. */
static void test_fuzz(void **state)
{
	static struct sock_filter p[300];
	unsigned long proven = 0;

	(void)state;
	rng_seed("test_fuzz");
	for (int round = 0; round < 20000; round++) {
		size_t len = 1 + rng_under(round % 10 ? 40 : N(p));
		struct scbpf_input in = input((long)rng_under(400));
		struct scbpf_result r;
		char why[128];
		int ok;

		random_prog(p, len, false, rng_under(4) != 0);
		in.arch = rng_under(4) ? AUDIT_ARCH_X86_64 : (uint32_t)rng_u64();
		in.ip = rng_u64();
		for (int a = 0; a < 6; a++)
			in.args[a] = rng_under(2) ? rng_under(10) : rng_u64();
		in.unknown = (uint16_t)(rng_under(3) ? rng_u64() & 0xfff0 : rng_u64());
		ok = seccomp_bpf_allows(p, len, &in, &r, why, sizeof(why));
		assert_true(ok == 1 || ok == 0 || ok == -EINVAL || ok == -E2BIG);
		if (ok < 0)
			continue;
		assert_true(r.paths >= 1 && r.paths <= SCBPF_MAX_PATHS);
		/* soundness: every concrete filling of the unknown words agrees with a proof */
		for (int t = 0; t < 8; t++) {
			struct scbpf_input c = in;
			struct scbpf_result rc;
			int okc;

			c.unknown = 0;
			for (int w = 0; w < 16; w++) {
				uint32_t v = rng_under(2) ? (uint32_t)rng_under(16) : (uint32_t)rng_u64();

				if (!(in.unknown & (1u << w)))
					continue;
				if (w == 0)
					c.nr = (int32_t)v;
				else if (w == 1)
					c.arch = v;
				else if (w < 4)
					c.ip = w == 2 ? (c.ip & ~0xffffffffull) | v :
						(c.ip & 0xffffffffull) | (uint64_t)v << 32;
				else
					c.args[(w - 4) / 2] = (w & 1) ?
						(c.args[(w - 4) / 2] & 0xffffffffull) | (uint64_t)v << 32 :
						(c.args[(w - 4) / 2] & ~0xffffffffull) | v;
			}
			okc = seccomp_bpf_allows(p, len, &c, &rc, why, sizeof(why));
			assert_true(okc == 0 || okc == 1);
			assert_int_equal(rc.paths, 1);
			if (ok == 1)
				assert_int_equal(okc, 1);
		}
		proven += ok == 1;
	}
	print_message("fuzz: %lu programs proven allowing\n", proven);
	assert_true(proven > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_unknown_args),
		cmocka_unit_test(test_alu_mem),
		cmocka_unit_test(test_refused_programs),
		cmocka_unit_test(test_path_cap),
		cmocka_unit_test(test_against_kernel),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
