// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp_bpf.c - the checker and the all-paths runner of seccomp_bpf.h.
 *
 * What the kernel does with a seccomp program, and so what this file does:
 *  - accepts it only if every opcode is in seccomp's list (kernel/seccomp.c,
 *    seccomp_check_filter: no packet loads, no MOD, no RET X), every absolute load reads an
 *    aligned word inside struct seccomp_data, every jump lands inside the program, division
 *    and shifts by a constant are sane, the last instruction returns, and no path reads a
 *    scratch slot before writing it (net/core/filter.c, bpf_check_classic and
 *    check_load_and_stores, reproduced as the same forward data flow);
 *  - starts with A = X = 0, a division by an X of 0 returns 0 (KILL_THREAD), a shift by X
 *    uses its low 5 bits (kernel/bpf/core.c, and the x86 JIT's shl %cl);
 *  - takes the most restrictive verdict of all filters, comparing the action part as a
 *    signed number (seccomp_run_filters: KILL_PROCESS < KILL_THREAD < TRAP < ERRNO <
 *    USER_NOTIF < TRACE < LOG < ALLOW); an action it does not know kills.
 * Anything the runner cannot decide (a division by an unknown X, a return of an unknown A)
 * counts as "not allowed": the proof only ever errs towards
 * refusing.
 */
#include "exact/seccomp_bpf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF	0x7fc00000U
#endif
#ifndef SECCOMP_RET_LOG
#define SECCOMP_RET_LOG		0x7ffc0000U
#endif
#ifndef SECCOMP_RET_ACTION_FULL
#define SECCOMP_RET_ACTION_FULL	0xffff0000U
#endif

#define SCBPF_MAX_STEPS	(1ul << 24)	/* instructions run over all paths */
#define MEMWORDS	16		/* BPF_MEMWORDS */
#define DATA_LEN	64		/* sizeof(struct seccomp_data) */

static bool code_allowed(uint16_t code)
{
	switch (code) {
	case BPF_LD | BPF_W | BPF_ABS:
	case BPF_LD | BPF_W | BPF_LEN:
	case BPF_LDX | BPF_W | BPF_LEN:
	case BPF_RET | BPF_K:
	case BPF_RET | BPF_A:
	case BPF_ALU | BPF_ADD | BPF_K:
	case BPF_ALU | BPF_ADD | BPF_X:
	case BPF_ALU | BPF_SUB | BPF_K:
	case BPF_ALU | BPF_SUB | BPF_X:
	case BPF_ALU | BPF_MUL | BPF_K:
	case BPF_ALU | BPF_MUL | BPF_X:
	case BPF_ALU | BPF_DIV | BPF_K:
	case BPF_ALU | BPF_DIV | BPF_X:
	case BPF_ALU | BPF_AND | BPF_K:
	case BPF_ALU | BPF_AND | BPF_X:
	case BPF_ALU | BPF_OR | BPF_K:
	case BPF_ALU | BPF_OR | BPF_X:
	case BPF_ALU | BPF_XOR | BPF_K:
	case BPF_ALU | BPF_XOR | BPF_X:
	case BPF_ALU | BPF_LSH | BPF_K:
	case BPF_ALU | BPF_LSH | BPF_X:
	case BPF_ALU | BPF_RSH | BPF_K:
	case BPF_ALU | BPF_RSH | BPF_X:
	case BPF_ALU | BPF_NEG:
	case BPF_LD | BPF_IMM:
	case BPF_LDX | BPF_IMM:
	case BPF_MISC | BPF_TAX:
	case BPF_MISC | BPF_TXA:
	case BPF_LD | BPF_MEM:
	case BPF_LDX | BPF_MEM:
	case BPF_ST:
	case BPF_STX:
	case BPF_JMP | BPF_JA:
	case BPF_JMP | BPF_JEQ | BPF_K:
	case BPF_JMP | BPF_JEQ | BPF_X:
	case BPF_JMP | BPF_JGE | BPF_K:
	case BPF_JMP | BPF_JGE | BPF_X:
	case BPF_JMP | BPF_JGT | BPF_K:
	case BPF_JMP | BPF_JGT | BPF_X:
	case BPF_JMP | BPF_JSET | BPF_K:
	case BPF_JMP | BPF_JSET | BPF_X:
		return true;
	}
	return false;
}

static bool is_cond_jump(uint16_t code)
{
	return BPF_CLASS(code) == BPF_JMP && BPF_OP(code) != BPF_JA;
}

static int bad(char *why, size_t whylen, size_t pc, const char *what)
{
	if (why && whylen)
		snprintf(why, whylen, "instruction %zu %s", pc, what);
	return -EINVAL;
}

int seccomp_bpf_check(const struct sock_filter *prog, size_t len, char *why, size_t whylen)
{
	uint16_t *masks, valid = 0;	/* nothing written yet */
	size_t pc;
	int err = 0;

	if (!prog || len == 0 || len > SCBPF_MAX_INSNS) {
		if (why && whylen)
			snprintf(why, whylen, "a program of %zu instructions (1 to %d allowed)", len,
				 SCBPF_MAX_INSNS);
		return -EINVAL;
	}
	for (pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &prog[pc];

		if (!code_allowed(f->code))
			return bad(why, whylen, pc, "has an opcode seccomp does not allow");
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (f->k >= DATA_LEN || (f->k & 3))
				return bad(why, whylen, pc, "loads outside struct seccomp_data");
			break;
		case BPF_ALU | BPF_DIV | BPF_K:
			if (f->k == 0)
				return bad(why, whylen, pc, "divides by zero");
			break;
		case BPF_ALU | BPF_LSH | BPF_K:
		case BPF_ALU | BPF_RSH | BPF_K:
			if (f->k >= 32)
				return bad(why, whylen, pc, "shifts by 32 or more");
			break;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			if (f->k >= MEMWORDS)
				return bad(why, whylen, pc, "uses a scratch slot past 15");
			break;
		case BPF_JMP | BPF_JA:
			if (f->k >= len - 1 - pc)
				return bad(why, whylen, pc, "jumps past the end");
			break;
		default:
			if (is_cond_jump(f->code) &&
			    (pc + f->jt + 1 >= len || pc + f->jf + 1 >= len))
				return bad(why, whylen, pc, "jumps past the end");
			break;
		}
	}
	if (BPF_CLASS(prog[len - 1].code) != BPF_RET)
		return bad(why, whylen, len - 1, "is the last and does not return");

	/* Scratch slots written before read on every path: the kernel's forward data flow. */
	masks = malloc(len * sizeof(*masks));
	if (!masks)
		return -ENOMEM;
	memset(masks, 0xff, len * sizeof(*masks));
	for (pc = 0; pc < len && !err; pc++) {
		const struct sock_filter *f = &prog[pc];

		valid &= masks[pc];
		switch (f->code) {
		case BPF_ST:
		case BPF_STX:
			valid |= (uint16_t)(1u << f->k);
			break;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
			if (!(valid & (1u << f->k)))
				err = bad(why, whylen, pc, "reads a scratch slot before writing it");
			break;
		case BPF_JMP | BPF_JA:
			masks[pc + 1 + f->k] &= valid;
			valid = 0xffff;
			break;
		default:
			if (is_cond_jump(f->code)) {
				masks[pc + 1 + f->jt] &= valid;
				masks[pc + 1 + f->jf] &= valid;
				valid = 0xffff;
			}
			break;
		}
	}
	free(masks);
	return err;
}

uint32_t seccomp_bpf_worse(uint32_t a, uint32_t b)
{
	int32_t aa = (int32_t)(a & SECCOMP_RET_ACTION_FULL);
	int32_t bb = (int32_t)(b & SECCOMP_RET_ACTION_FULL);

	return bb < aa ? b : a;
}

bool seccomp_bpf_verdict_allows(uint32_t verdict)
{
	uint32_t action = verdict & SECCOMP_RET_ACTION_FULL;

	return action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG;
}

const char *seccomp_bpf_verdict_name(uint32_t verdict, char *buf, size_t len)
{
	uint32_t data = verdict & SECCOMP_RET_DATA;

	switch (verdict & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_KILL_PROCESS:
		snprintf(buf, len, "KILL_PROCESS");
		break;
	case SECCOMP_RET_KILL_THREAD:
		snprintf(buf, len, "KILL_THREAD");
		break;
	case SECCOMP_RET_TRAP:
		snprintf(buf, len, "TRAP");
		break;
	case SECCOMP_RET_ERRNO:
		snprintf(buf, len, "ERRNO(%u)", data);
		break;
	case SECCOMP_RET_USER_NOTIF:
		snprintf(buf, len, "USER_NOTIF");
		break;
	case SECCOMP_RET_TRACE:
		snprintf(buf, len, "TRACE(%u)", data);
		break;
	case SECCOMP_RET_LOG:
		snprintf(buf, len, "LOG");
		break;
	case SECCOMP_RET_ALLOW:
		snprintf(buf, len, "ALLOW");
		break;
	default:
		snprintf(buf, len, "unknown action %#x (the kernel kills)", verdict);
		break;
	}
	return buf;
}

/* One path's machine: A, X and the scratch slots, each known or not. */
struct state {
	uint32_t pc;
	uint32_t a, x;
	bool ak, xk;
	uint16_t memk;		/* bit i: mem[i] is known */
	uint32_t mem[MEMWORDS];
};

static bool word_of(const struct scbpf_input *in, uint32_t off, uint32_t *v)
{
	uint32_t w = off / 4;
	uint64_t q;

	if (in->unknown & (1u << w))
		return false;
	if (w == 0) {
		*v = (uint32_t)in->nr;
		return true;
	}
	if (w == 1) {
		*v = in->arch;
		return true;
	}
	q = w < 4 ? in->ip : in->args[(w - 4) / 2];
	*v = (w & 1) ? (uint32_t)(q >> 32) : (uint32_t)q;	/* little-endian words */
	return true;
}

enum step { STEP_NEXT, STEP_FORK, STEP_RET };

/*
 * Run one instruction of @s.  STEP_FORK: the jump depends on an unknown value; @s takes
 * the true branch and *@other the false one.  STEP_RET: *ret, *ret_known hold the verdict.
 */
static enum step step(const struct sock_filter *prog, const struct scbpf_input *in,
		      struct state *s, struct state *other, uint32_t *ret, bool *ret_known)
{
	const struct sock_filter *f = &prog[s->pc];
	uint32_t src, k = f->k;
	bool srck, taken;

	switch (BPF_CLASS(f->code)) {
	case BPF_LD:
		if (f->code == (BPF_LD | BPF_W | BPF_ABS))
			s->ak = word_of(in, k, &s->a);
		else if (f->code == (BPF_LD | BPF_W | BPF_LEN))
			s->a = DATA_LEN, s->ak = true;
		else if (f->code == (BPF_LD | BPF_IMM))
			s->a = k, s->ak = true;
		else	/* BPF_MEM */
			s->a = s->mem[k], s->ak = s->memk & (1u << k);
		break;
	case BPF_LDX:
		if (f->code == (BPF_LDX | BPF_W | BPF_LEN))
			s->x = DATA_LEN, s->xk = true;
		else if (f->code == (BPF_LDX | BPF_IMM))
			s->x = k, s->xk = true;
		else
			s->x = s->mem[k], s->xk = s->memk & (1u << k);
		break;
	case BPF_ST:
	case BPF_STX: {
		bool st = BPF_CLASS(f->code) == BPF_ST;

		s->mem[k] = st ? s->a : s->x;
		if (st ? s->ak : s->xk)
			s->memk |= (uint16_t)(1u << k);
		else
			s->memk &= (uint16_t)~(1u << k);
		break;
	}
	case BPF_MISC:
		if (BPF_MISCOP(f->code) == BPF_TAX)
			s->x = s->a, s->xk = s->ak;
		else
			s->a = s->x, s->ak = s->xk;
		break;
	case BPF_RET:
		*ret = BPF_RVAL(f->code) == BPF_K ? k : s->a;
		*ret_known = BPF_RVAL(f->code) == BPF_K || s->ak;
		return STEP_RET;
	case BPF_ALU:
		src = BPF_SRC(f->code) == BPF_X ? s->x : k;
		srck = BPF_SRC(f->code) == BPF_X ? s->xk : true;
		if (BPF_OP(f->code) == BPF_DIV && srck && src == 0) {
			*ret = 0, *ret_known = true;	/* the kernel returns 0 */
			return STEP_RET;
		}
		if (BPF_OP(f->code) == BPF_DIV && !srck) {
			*ret = 0, *ret_known = true;	/* X might be 0: not provably allowed */
			return STEP_RET;
		}
		if (BPF_OP(f->code) == BPF_LSH || BPF_OP(f->code) == BPF_RSH)
			src &= 31;	/* by X: the interpreter and the JITs use the low 5 bits */
		if (BPF_OP(f->code) == BPF_AND && srck && src == 0) {
			s->a = 0, s->ak = true;
			break;
		}
		if (!s->ak || !srck) {
			s->ak = false;
			break;
		}
		switch (BPF_OP(f->code)) {
		case BPF_ADD: s->a += src; break;
		case BPF_SUB: s->a -= src; break;
		case BPF_MUL: s->a *= src; break;
		case BPF_DIV: s->a /= src; break;
		case BPF_AND: s->a &= src; break;
		case BPF_OR: s->a |= src; break;
		case BPF_XOR: s->a ^= src; break;
		case BPF_LSH: s->a <<= src; break;
		case BPF_RSH: s->a >>= src; break;
		case BPF_NEG: s->a = 0u - s->a; break;
		}
		break;
	case BPF_JMP:
		if (BPF_OP(f->code) == BPF_JA) {
			s->pc += 1 + k;
			return STEP_NEXT;
		}
		src = BPF_SRC(f->code) == BPF_X ? s->x : k;
		srck = BPF_SRC(f->code) == BPF_X ? s->xk : true;
		if (BPF_OP(f->code) == BPF_JSET && srck && src == 0) {
			s->pc += 1 + f->jf;	/* A & 0 is never true */
			return STEP_NEXT;
		}
		if (!s->ak || !srck) {
			*other = *s;
			other->pc += 1 + f->jf;
			s->pc += 1 + f->jt;
			/* the true side of an equality knows A */
			if (BPF_OP(f->code) == BPF_JEQ && srck)
				s->a = src, s->ak = true;
			return STEP_FORK;
		}
		switch (BPF_OP(f->code)) {
		case BPF_JEQ: taken = s->a == src; break;
		case BPF_JGT: taken = s->a > src; break;
		case BPF_JGE: taken = s->a >= src; break;
		default: taken = (s->a & src) != 0; break;	/* BPF_JSET */
		}
		s->pc += 1 + (taken ? f->jt : f->jf);
		return STEP_NEXT;
	}
	s->pc++;
	return STEP_NEXT;
}

int seccomp_bpf_allows(const struct sock_filter *prog, size_t len, const struct scbpf_input *in,
		       struct scbpf_result *res, char *why, size_t whylen)
{
	struct scbpf_result r = { .verdict = SECCOMP_RET_ALLOW, .insn = -1 };
	unsigned long steps = 0;
	struct state *stack, s;
	size_t depth = 0;
	int err, out = 1;

	err = seccomp_bpf_check(prog, len, why, whylen);
	if (err)
		return err;
	/* A path forks at most once per instruction, so at most len states wait. */
	stack = malloc(len * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	memset(&s, 0, sizeof(s));
	s.ak = s.xk = true;	/* the kernel starts with A = X = 0 */
	for (;;) {
		struct state other;
		uint32_t ret = 0;
		bool known = true;
		enum step st;

		if (++steps > SCBPF_MAX_STEPS) {
			out = -E2BIG;
			break;
		}
		st = step(prog, in, &s, &other, &ret, &known);
		if (st == STEP_FORK) {
			stack[depth++] = other;
			continue;
		}
		if (st == STEP_NEXT)
			continue;
		r.paths++;
		if (!known || !seccomp_bpf_verdict_allows(ret)) {
			r.verdict = known ? ret : SECCOMP_RET_KILL_PROCESS;
			r.verdict_unknown = !known;
			r.insn = (int)s.pc;
			out = 0;
			break;
		}
		r.verdict = seccomp_bpf_worse(r.verdict, ret);
		r.insn = (int)s.pc;
		if (!depth)
			break;
		if (r.paths >= SCBPF_MAX_PATHS) {
			out = -E2BIG;
			break;
		}
		s = stack[--depth];
	}
	free(stack);
	if (out == -E2BIG && why && whylen)
		snprintf(why, whylen, "more than %d paths or %lu steps to follow", SCBPF_MAX_PATHS,
			 SCBPF_MAX_STEPS);
	if (res)
		*res = r;
	return out;
}
