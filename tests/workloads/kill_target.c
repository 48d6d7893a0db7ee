// SPDX-License-Identifier: GPL-2.0
/*
 * kill_target - a target that checks its own registers, for the kill -9 tests of exact
 * mode's injection (tests/integration/test_exact_kill.py, tests/stress/):
 *
 *   kill_target spin  [-t N]	the main thread spins checking rbx, r12-r15, ymm8, ymm9
 *   kill_target block [-t N]	the main thread sits in read(0) with those registers set
 *				and checks them when the read returns
 *   kill_target fork  [-t N]	the main thread spins and forks + execs /bin/true in a loop
 *   kill_target amx   [-t N]	as spin, and the main thread holds AMX tile data in tmm0
 *				(checked each round): its signal frame is the full XSAVE
 *				size, the case a killed attach's frame must restore whole
 *
 * -t N adds N threads that spin checking their own registers too.  Prints "ready PID";
 * then each line on stdin ("status") is answered "done MONO_NS rounds=R" (R: check loops
 * the main thread completed), "exit" exits 0.  A register found changed prints
 * "error corrupt THREAD" and exits 4.  Needs AVX2 (amx: AMX-TILE; exits 2 without it).
 */
#include "workload.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct expect {
	uint64_t gpr[8];	/* rbx r12 r13 r14 r15 (and padding) */
	uint8_t ymm[64];	/* ymm8, ymm9 */
} __attribute__((aligned(64)));

static _Atomic long rounds;
static _Atomic int started;	/* threads past their start (their signal mask is final) */

static void corrupt(const char *who)
{
	printf("error corrupt %s\n", who);
	fflush(stdout);
	_exit(4);
}

static void fill(struct expect *e, uint64_t seed)
{
	for (int i = 0; i < 8; i++)
		e->gpr[i] = seed * 0x9e3779b97f4a7c15ull + (uint64_t)i * 0x0101010101010101ull;
	for (int i = 0; i < 64; i++)
		e->ymm[i] = (uint8_t)(seed * 31 + (uint64_t)i * 7 + 1);
}

#define LOAD_REGS							\
	"mov 0(%[e]), %%rbx\n\t"					\
	"mov 8(%[e]), %%r12\n\t"					\
	"mov 16(%[e]), %%r13\n\t"					\
	"mov 24(%[e]), %%r14\n\t"					\
	"mov 32(%[e]), %%r15\n\t"					\
	"vmovdqu 64(%[e]), %%ymm8\n\t"					\
	"vmovdqu 96(%[e]), %%ymm9\n\t"

/* jumps to 2f if any register differs from @e */
#define CHECK_REGS							\
	"cmp 0(%[e]), %%rbx\n\tjne 2f\n\t"				\
	"cmp 8(%[e]), %%r12\n\tjne 2f\n\t"				\
	"cmp 16(%[e]), %%r13\n\tjne 2f\n\t"				\
	"cmp 24(%[e]), %%r14\n\tjne 2f\n\t"				\
	"cmp 32(%[e]), %%r15\n\tjne 2f\n\t"				\
	"vpcmpeqq 64(%[e]), %%ymm8, %%ymm10\n\t"			\
	"vpmovmskb %%ymm10, %%r11d\n\t"					\
	"cmp $-1, %%r11d\n\tjne 2f\n\t"					\
	"vpcmpeqq 96(%[e]), %%ymm9, %%ymm10\n\t"			\
	"vpmovmskb %%ymm10, %%r11d\n\t"					\
	"cmp $-1, %%r11d\n\tjne 2f\n\t"

/* 0 if the registers held over @iters loops, 1 if one changed */
static long spin_check(const struct expect *e, long iters)
{
	long bad;

	__asm__ volatile(
		LOAD_REGS
		"1:\n\t"
		CHECK_REGS
		"dec %[n]\n\tjnz 1b\n\t"
		"xor %k[bad], %k[bad]\n\tjmp 3f\n"
		"2:\n\tmov $1, %k[bad]\n"
		"3:\n\tvzeroupper\n\t"
		: [bad] "=&r"(bad), [n] "+r"(iters)
		: [e] "r"(e)
		: "rbx", "r11", "r12", "r13", "r14", "r15", "xmm8", "xmm9", "xmm10", "cc",
		  "memory");
	return bad;
}

/* read(0, buf, len) by a raw `syscall` with the registers set; -10000 if they changed */
static long read_check(const struct expect *e, char *buf, long len)
{
	long ret;

	__asm__ volatile(
		LOAD_REGS
		"xor %%edi, %%edi\n\t"
		"xor %%eax, %%eax\n\t"
		"syscall\n\t"
		CHECK_REGS
		"jmp 3f\n"
		"2:\n\tmov $-10000, %%rax\n"
		"3:\n\tvzeroupper\n\t"
		: "=&a"(ret)
		: [e] "r"(e), "S"(buf), "d"(len)
		: "rdi", "rcx", "rbx", "r11", "r12", "r13", "r14", "r15", "xmm8", "xmm9",
		  "xmm10", "cc", "memory");
	return ret;
}

static void *spinner(void *arg)
{
	struct expect e;
	char who[32];

	fill(&e, (uint64_t)(uintptr_t)arg);
	snprintf(who, sizeof(who), "thread%lu", (unsigned long)(uintptr_t)arg);
	atomic_fetch_add(&started, 1);
	for (;;)
		if (spin_check(&e, 1000000))
			corrupt(who);
	return NULL;
}

static bool answer(const char *line)
{
	if (!strncmp(line, "exit", 4))
		exit(0);
	if (strncmp(line, "status", 6))
		return false;
	{
		char extra[64];

		snprintf(extra, sizeof(extra), "rounds=%ld", atomic_load(&rounds));
		wl_done(extra);
	}
	return true;
}

static void *reporter(void *arg)
{
	char line[128];

	(void)arg;
	free(malloc(1));	/* this thread's malloc arena exists before "ready" */
	atomic_fetch_add(&started, 1);
	while (fgets(line, sizeof(line), stdin))
		if (!answer(line))
			printf("error unknown command: %s", line);
	exit(0);
	return NULL;
}

/*
 * AMX: tile data is a dynamic (XFD-armed) XSAVE feature.  A process must ask for it
 * (arch_prctl ARCH_REQ_XCOMP_PERM); the thread's first tile instruction then traps, the
 * kernel gives it a full-size fpstate and its signal frames carry tile data: the one case
 * where exact mode's rt_sigreturn frame for a killed attach is ~11 KiB.  tmm0 is loaded
 * once with a pattern and stored back each round: a restore that dropped tile state would
 * bring it back zeroed (XSTATE_BV clear means the init state, all zero).
 */
#define ARCH_REQ_XCOMP_PERM	0x1023
#define XFEATURE_XTILEDATA	18
#define TILE_ROWS		16
#define TILE_COLSB		64

struct tilecfg {
	uint8_t palette, start_row, reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
} __attribute__((packed, aligned(64)));

static uint8_t tile_want[TILE_ROWS * TILE_COLSB] __attribute__((aligned(64)));

static void amx_load(void)
{
	static struct tilecfg cfg = { .palette = 1 };

	if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA))
		wl_die("arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) failed");
	for (size_t i = 0; i < sizeof(tile_want); i++)
		tile_want[i] = (uint8_t)(i * 13 + 5);
	cfg.colsb[0] = TILE_COLSB;
	cfg.rows[0] = TILE_ROWS;
	__asm__ volatile("ldtilecfg %0" : : "m"(cfg));
	__asm__ volatile("tileloadd (%0,%1,1), %%tmm0"
			 : : "r"(tile_want), "r"((long)TILE_COLSB) : "memory");
}

static void amx_check(void)
{
	uint8_t got[sizeof(tile_want)] __attribute__((aligned(64)));

	__asm__ volatile("tilestored %%tmm0, (%0,%1,1)"
			 : : "r"(got), "r"((long)TILE_COLSB) : "memory");
	if (memcmp(got, tile_want, sizeof(got)))
		corrupt("main-tmm0");
}

static void fork_true(void)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		wl_die("failed to fork");
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "spin";
	int nthreads = 0;
	struct expect e;
	pthread_t th;

	if (argc > 3 && !strcmp(argv[2], "-t"))
		nthreads = atoi(argv[3]);
	if (!__builtin_cpu_supports("avx2")) {
		fprintf(stderr, "kill_target: needs AVX2\n");
		return 2;
	}
	if (!strcmp(mode, "amx") && !__builtin_cpu_supports("amx-tile")) {
		fprintf(stderr, "kill_target: amx needs AMX-TILE\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	fill(&e, 1000);
	if (!strcmp(mode, "amx"))
		amx_load();
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th, NULL, spinner, (void *)(uintptr_t)(i + 1)))
			wl_die("failed to create thread");
	if (strcmp(mode, "block") && pthread_create(&th, NULL, reporter, NULL))
		wl_die("failed to create thread");
	/* "ready" once every thread runs with its own signal mask (pthread_create starts a
	 * thread with all signals blocked) */
	while (atomic_load(&started) < nthreads + !!strcmp(mode, "block"))
		sched_yield();
	printf("ready %d\n", getpid());
	if (!strcmp(mode, "block")) {
		char line[128], *p = line;

		for (;;) {
			long n = read_check(&e, p, (long)(sizeof(line) - 1 - (size_t)(p - line)));

			if (n == -10000)
				corrupt("main");
			if (n == 0)
				exit(0);
			if (n < 0) {
				printf("error read: %ld\n", n);
				exit(3);
			}
			p[n] = '\0';
			atomic_fetch_add(&rounds, 1);
			if (!strchr(line, '\n')) {
				p += n;
				continue;
			}
			if (!answer(line))
				printf("error unknown command: %s", line);
			p = line;
		}
	}
	for (;;) {
		if (spin_check(&e, 200000))
			corrupt("main");
		if (!strcmp(mode, "amx"))
			amx_check();
		atomic_fetch_add(&rounds, 1);
		if (!strcmp(mode, "fork"))
			fork_true();
	}
}
