/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seccomp_bpf.h - check and run a seccomp classic-BPF program the way the kernel would, to
 * prove that it lets a system call through before mevitop makes that call in a target.
 *
 * The program is untrusted input (read from the target with PTRACE_SECCOMP_GET_FILTER):
 * seccomp_bpf_check() accepts exactly what the kernel's seccomp accepts (opcode list, loads of
 * aligned words inside struct seccomp_data, jumps inside the program, scratch memory
 * written before it is read, a return at the end), and the runner is bounded.
 *
 * The input may leave some 32-bit words of seccomp_data unknown (an argument or an
 * instruction pointer that is not decided yet): the runner then follows every path those
 * words allow (both ways of each jump on an unknown value), so "allowed" is a proof for
 * every value they may take.  cBPF jumps only forward, so a path is at most as long as the
 * program; the number of paths is capped (SCBPF_MAX_PATHS) and beyond it nothing is proven.
 */
#ifndef MEVITOP_SECCOMP_BPF_H
#define MEVITOP_SECCOMP_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>

#define SCBPF_MAX_INSNS	4096	/* BPF_MAXINSNS: the kernel's limit per filter */
#define SCBPF_MAX_PATHS	65536	/* beyond this many paths nothing is proven (-E2BIG) */
#define SCBPF_DATA_WORDS 16	/* struct seccomp_data is 64 bytes */

/* What the kernel shows the filter (struct seccomp_data), word by word. */
struct scbpf_input {
	int32_t nr;
	uint32_t arch;
	uint64_t ip;		/* the address after the `syscall` instruction */
	uint64_t args[6];
	uint16_t unknown;	/* bit w: 32-bit word w (bytes 4w..4w+3) may be anything */
};

/* Unknown-word masks for scbpf_input.unknown */
#define SCBPF_IP_UNKNOWN	(3u << 2)
#define SCBPF_ARG_UNKNOWN(i)	(3u << (4 + 2 * (i)))

struct scbpf_result {
	uint32_t verdict;	/* the most restrictive return value seen on any path */
	bool verdict_unknown;	/* some path returns A, and A depends on an unknown word */
	int insn;		/* the return instruction that gave it */
	unsigned long paths;	/* paths followed */
};

/* Accepts what the kernel's seccomp accepts; 0 or -EINVAL with why. */
int seccomp_bpf_check(const struct sock_filter *prog, size_t len, char *why, size_t whylen);

/*
 * Run a program (checked here first) on every path @in allows.  Returns 1 if every path
 * returns ALLOW or LOG (the call goes through), 0 if some path returns another verdict (or
 * an unknown one: *res says which), -EINVAL for a program the kernel would not have
 * accepted, -E2BIG past SCBPF_MAX_PATHS paths.  @why says why for the negative returns.
 */
int seccomp_bpf_allows(const struct sock_filter *prog, size_t len, const struct scbpf_input *in,
		       struct scbpf_result *res, char *why, size_t whylen);

/* The more restrictive of two return values, by the kernel's own rule. */
uint32_t seccomp_bpf_worse(uint32_t a, uint32_t b);
/* Does the verdict let the call run (SECCOMP_RET_ALLOW or SECCOMP_RET_LOG)? */
bool seccomp_bpf_verdict_allows(uint32_t verdict);
/* "KILL_PROCESS", "ERRNO(1)", "TRACE(7)", ... into @buf. */
const char *seccomp_bpf_verdict_name(uint32_t verdict, char *buf, size_t len);

#endif /* MEVITOP_SECCOMP_BPF_H */
