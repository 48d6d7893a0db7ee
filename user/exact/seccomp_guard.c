// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp_guard.c - the proof that a target's seccomp filters let mevitop's injected calls
 * through (see seccomp_guard.h).  Runs on the injection's tracer thread: ptrace requests
 * such as PTRACE_SECCOMP_GET_FILTER are answered only to the tracer.
 */
#include "exact/arch.h"
#include "exact/seccomp_guard.h"
#include "exact/seccomp_bpf.h"
#include "exact/seccomp_calls.h"
#include "exact/inject.h"
#include "lib/log.h"
#include "kernel/procfs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <linux/seccomp.h>

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER	0x420c
#endif
/* The kernel's cap on a thread's filters: 32768 instructions over the whole chain
 * (MAX_INSNS_PER_PATH), each filter costing 4 more. */
#define MAX_CHAIN_INSNS	32768

struct filters {
	int n;
	size_t total;
	struct sock_filter *insn;	/* every filter end to end, oldest first */
	unsigned short len[MAX_CHAIN_INSNS / 5 + 1];
};

static void filters_free(struct filters *f)
{
	free(f->insn);
	f->insn = NULL;
	f->n = 0;
	f->total = 0;
}

/* The seccomp mode of one thread (/proc/PID/task/TID/status), -1 if unknown. */
static long thread_mode(pid_t pid, pid_t tid)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (procfs_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "\nSeccomp:");
	return p ? strtol(p + strlen("\nSeccomp:"), NULL, 10) : -1;
}

/* Read every filter of @tid (a parked tracee of ours).  0, or -errno with why. */
static int filters_read(pid_t tid, struct filters *f, char *why, size_t whylen)
{
	memset(f, 0, sizeof(*f));
	for (unsigned long i = 0;; i++) {
		struct sock_filter *grown;
		long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, NULL);

		if (n < 0 && errno == ENOENT && i > 0)
			return 0;	/* past the oldest filter */
		if (n < 0) {
			int err = -errno;

			snprintf(why, whylen, "failed to read seccomp filter %lu of thread %d: %s%s",
				 i, tid, strerror(-err), err == -EACCES || err == -EIO ?
				 " (reading filters needs CAP_SYS_ADMIN and a kernel with "
				 "CONFIG_CHECKPOINT_RESTORE)" : "");
			filters_free(f);
			return err;
		}
		if (n == 0 || n > SCBPF_MAX_INSNS || f->total + (size_t)n > MAX_CHAIN_INSNS ||
		    f->n >= (int)(sizeof(f->len) / sizeof(f->len[0]))) {
			snprintf(why, whylen, "seccomp filter %lu of thread %d has %ld instructions, "
				 "more than the kernel allows", i, tid, n);
			filters_free(f);
			return -E2BIG;
		}
		/* Exactly the instructions read so far: each filter's size is known before it
		 * is read, at most a few filters (not a growing array: array.h). */
		grown = realloc(f->insn, (f->total + (size_t)n) * sizeof(*grown));
		if (!grown) {
			filters_free(f);
			return -ENOMEM;
		}
		f->insn = grown;
		/* the answer is the count again: a chain that changed meanwhile is refused */
		if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, f->insn + f->total) != n) {
			snprintf(why, whylen, "seccomp filter %lu of thread %d changed while read",
				 i, tid);
			filters_free(f);
			return -EAGAIN;
		}
		f->len[f->n++] = (unsigned short)n;
		f->total += (size_t)n;
	}
}

static bool filters_equal(const struct filters *a, const struct filters *b)
{
	return a->n == b->n && a->total == b->total &&
	       !memcmp(a->len, b->len, (size_t)a->n * sizeof(a->len[0])) &&
	       !memcmp(a->insn, b->insn, a->total * sizeof(a->insn[0]));
}

static void describe(const struct sc_injected *e, long nr, const long args[6], unsigned unknown,
		     char *buf, size_t len)
{
	size_t at = e ? (size_t)snprintf(buf, len, "%s(", e->name) :
			(size_t)snprintf(buf, len, "system call %ld(", nr);

	for (int a = 0; a < 6 && at < len; a++)
		at += (size_t)snprintf(buf + at, len - at, unknown & (1u << a) ? "%s?" : "%s%#lx",
				       a ? ", " : "", (unsigned long)args[a]);
	if (at < len)
		snprintf(buf + at, len - at, ")");
}

/*
 * Would a thread survive its filters seeing @c, were mevitop dead, and be left as it was?
 * A call they make fail returns to the trampoline, which goes home; ERRNO fails it, and so
 * does TRACE once there is no tracer (ENOSYS).  Not a call that undoes what an earlier one
 * did or brings the thread home - close (the target would keep a copy of the fd), munmap
 * (it would keep the page), rt_sigreturn (the thread would fall through past the
 * trampoline): those must be allowed.  KILL_*, TRAP (a SIGSYS the thread may not survive
 * with every signal blocked) and USER_NOTIF (a supervisor deciding about a call the
 * program never made) never qualify.
 */
static bool survivable(uint32_t verdict, long nr)
{
	uint32_t action = verdict & SECCOMP_RET_ACTION_FULL;

	if (seccomp_bpf_verdict_allows(verdict))
		return true;
	if (nr == __NR_close || nr == __NR_munmap || nr == __NR_rt_sigreturn)
		return false;
	return action == SECCOMP_RET_ERRNO || action == SECCOMP_RET_TRACE;
}

/*
 * Does every filter of @f allow the call @c (@ask INJ_GUARD_ALLOWED), or would the thread
 * survive them all seeing it (INJ_GUARD_SURVIVED: the kernel acts on the most restrictive
 * verdict of the chain)?  1 yes; 0 no, with why naming the call and the verdict; -errno if
 * the proof could not be made.
 */
static int prove(const struct filters *f, pid_t tid, const struct inj_call *c,
		 const struct sc_injected *e, enum inj_guard_ask ask, char *why, size_t whylen)
{
	struct scbpf_input input = {
		.nr = (int32_t)c->nr,
		.arch = ARCH_AUDIT,
		.ip = c->ip,
	};
	uint32_t worst = SECCOMP_RET_ALLOW;
	int worst_at = -1;
	bool unknown = false;
	char call[160], verdict[64];
	size_t off = 0;

	for (int a = 0; a < 6; a++) {
		input.args[a] = (uint64_t)c->args[a];
		if (c->unknown & (1u << a))
			input.unknown |= SCBPF_ARG_UNKNOWN(a);
	}
	if (c->unknown & INJ_CALL_IP_UNKNOWN)
		input.unknown |= SCBPF_IP_UNKNOWN;
	describe(e, c->nr, c->args, c->unknown, call, sizeof(call));
	for (int i = 0; i < f->n; off += f->len[i], i++) {
		char bwhy[128] = "";
		struct scbpf_result r;
		int ok = seccomp_bpf_allows(f->insn + off, f->len[i], &input, &r, bwhy, sizeof(bwhy));

		if (ok == 1)
			continue;
		if (ok < 0) {
			snprintf(why, whylen, "seccomp filter %d of thread %d cannot be proven to "
				 "allow %s: %s", i, tid, call, bwhy);
			return ok == -E2BIG || ok == -EINVAL ? 0 : ok;
		}
		if (r.verdict_unknown) {
			unknown = true;
			worst_at = i;
			break;
		}
		if (worst_at < 0 || seccomp_bpf_worse(worst, r.verdict) != worst) {
			worst = seccomp_bpf_worse(worst, r.verdict);
			worst_at = i;
		}
	}
	if (worst_at < 0 || (!unknown && ask == INJ_GUARD_SURVIVED && survivable(worst, c->nr)))
		return 1;
	if (unknown)
		snprintf(verdict, sizeof(verdict), "a verdict computed from values known only at "
			 "the call");
	else
		seccomp_bpf_verdict_name(worst, verdict, sizeof(verdict));
	snprintf(why, whylen, "seccomp filter %d of thread %d returns %s for %s, the call that %s",
		 worst_at, tid, verdict, call, e ? e->what : "mevitop injects");
	return 0;
}

/* Prove every entry of the injected-call list against @f: 1, 0 (why), -errno. */
static int prove_list(const struct filters *f, pid_t tid, char *why, size_t whylen)
{
	for (size_t i = 0; i < sc_injected_count; i++) {
		const struct sc_injected *e = &sc_injected[i];
		struct inj_call c = { .nr = e->nr, .unknown = e->unknown | INJ_CALL_IP_UNKNOWN };
		int ok;

		memcpy(c.args, e->args, sizeof(c.args));
		ok = prove(f, tid, &c, e, INJ_GUARD_ALLOWED, why, whylen);
		if (ok != 1)
			return ok;
	}
	return 1;
}

/*
 * Suspended: can an attach go ahead and never make a call the filters of @f would kill the
 * thread for, were mevitop killed during it?  The calls every attach makes must be
 * survivable (prove, INJ_GUARD_SURVIVED), and so must userfaultfd() - or else every call
 * of the /dev/userfaultfd handoff must be allowed (a thread left alone runs the chain to
 * its end).  1 yes; 0 no, with why; -errno if the proof could not be made.
 */
static int prove_ways(const struct filters *f, pid_t tid, char *why, size_t whylen)
{
	char dev_why[256] = "";
	int sys = 1, dev = 1;

	for (size_t i = 0; i < sc_injected_count; i++) {
		const struct sc_injected *e = &sc_injected[i];
		struct inj_call c = { .nr = e->nr, .unknown = e->unknown | INJ_CALL_IP_UNKNOWN };
		int ok;

		memcpy(c.args, e->args, sizeof(c.args));
		if (e->ways & SC_WAY_ALL) {
			ok = prove(f, tid, &c, e, INJ_GUARD_SURVIVED, why, whylen);
			if (ok != 1)
				return ok;
		}
		if ((e->ways & SC_WAY_SYSCALL) && sys == 1)
			sys = prove(f, tid, &c, e, INJ_GUARD_SURVIVED, why, whylen);
		if ((e->ways & SC_WAY_DEV) && dev == 1)
			dev = prove(f, tid, &c, e, INJ_GUARD_ALLOWED, dev_why, sizeof(dev_why));
	}
	if (sys == 1 || dev == 1)
		return 1;
	if (sys < 0 || dev < 0)
		return sys < 0 ? sys : dev;
	snprintf(why + strlen(why), whylen - strlen(why), "; and for the /dev/userfaultfd "
		 "handoff, %s", dev_why);
	return 0;
}

struct prep {
	char *why;
	size_t whylen;
	bool suspended;		/* prove_ways where not every call is allowed */
	bool some_refused;	/* suspended: a call the filters refuse (the guard is needed) */
	int verdict;		/* 1 proven, 0 refused, -errno */
};

static int prepare_in_tracer(struct inj *in, void *arg)
{
	struct prep *p = arg;
	struct filters last = { 0 }, cur;
	int ok = 1;

	for (int i = 0; i < inj_nr_threads(in) && ok == 1; i++) {
		pid_t tid = 0;
		long mode;

		inj_thread_was_stopped(in, i, &tid);
		mode = thread_mode(inj_pid(in), tid);
		if (mode == 0 || mode < 0)
			continue;	/* no filter (or gone) */
		if (mode == 1) {
			snprintf(p->why, p->whylen, "thread %d runs in seccomp strict mode, which "
				 "allows only read, write, exit and sigreturn: not the close of "
				 "every attach", tid);
			ok = 0;
			break;
		}
		ok = filters_read(tid, &cur, p->why, p->whylen);
		if (ok)
			break;
		ok = 1;		/* the same filters as the last thread's: proven */
		if (!last.n || !filters_equal(&cur, &last)) {
			ok = prove_list(&cur, tid, p->why, p->whylen);
			if (!ok && p->suspended) {
				p->some_refused = true;
				ok = prove_ways(&cur, tid, p->why, p->whylen);
			}
		}
		filters_free(&last);
		last = cur;
	}
	filters_free(&last);
	p->verdict = ok;
	return 0;
}

/*
 * The call-time guard: the exact call (and what the trampoline makes after it) must match
 * the list and be allowed by the filters of the thread that makes it - or, suspended
 * (@ask INJ_GUARD_SURVIVED), be survivable if they saw it.  Not suspended, a refusal is
 * a warning; suspended, uffd.c may still take another way, and says why if none is left.
 */
static const bool suspended_ctx = true;

static int guard(void *ctx, pid_t tid, const struct inj_call *calls, int n,
		 enum inj_guard_ask ask, char *why, size_t whylen)
{
	bool quiet = ctx == &suspended_ctx;
	struct filters f;
	int ok;

	if (filters_read(tid, &f, why, whylen)) {
		if (!quiet)
			log_warn("refusing to inject into thread %d: %s", tid, why);
		return -EPERM;
	}
	ok = 1;
	for (int i = 0; i < n && ok == 1; i++) {
		const struct sc_injected *e = seccomp_calls_injected_find(calls[i].nr, calls[i].args,
									  calls[i].unknown);

		if (!e) {
			char call[160];

			describe(NULL, calls[i].nr, calls[i].args, calls[i].unknown, call,
				 sizeof(call));
			snprintf(why, whylen, "%s is not in the list of injected calls the "
				 "seccomp proof reads (user/exact/seccomp_calls.c)", call);
			ok = 0;
			break;
		}
		ok = prove(&f, tid, &calls[i], e, ask, why, whylen);
	}
	filters_free(&f);
	if (ok == 1)
		return 0;
	if (!quiet)
		log_warn("refusing to inject into thread %d: %s", tid, why);
	else
		log_debug("not injecting into thread %d: %s", tid, why);
	return -EPERM;
}

int seccomp_guard_prepare(struct inj *in, char *why, size_t whylen)
{
	struct prep p = { .why = why, .whylen = whylen, .suspended = inj_seccomp_suspended(in) };
	int err;

	if (!inj_seccomp_mode(in))
		return 0;
	err = inj_run_in_tracer(in, prepare_in_tracer, &p);
	if (p.suspended) {
		/* Suspended: the filters do not run for our calls, but they would see one a
		 * killed mevitop left mid-way.  Refused before any call if no way in avoids a
		 * call they kill for, or if they cannot be read (unknown filters could kill it
		 * for anything); where they refuse some call, the guard checks each call as it
		 * is made (survivable, or the handoff, or refused). */
		if (err || p.verdict < 0)
			return err ? err : p.verdict;
		if (p.verdict == 0)
			return -EPERM;
		if (p.some_refused)
			inj_set_guard(in, guard, (void *)&suspended_ctx);
		why[0] = '\0';
		return 0;
	}
	if (err)
		return err;
	if (p.verdict < 0)
		return p.verdict;
	if (p.verdict == 0)
		return -EPERM;
	inj_set_guard(in, guard, NULL);
	inj_allow_seccomp(in, true);
	return 0;
}
