// SPDX-License-Identifier: GPL-2.0
/*
 * mevitop: which pages of which processes are in RAM, live.
 * main() only wires things: options → feature probe → engine → JSON or UI.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "engine.h"
#include "exact.h"
#include "kfeatures.h"
#include "json.h"
#include "log.h"
#include "procfs.h"
#include "stacks/stacks.h"
#include "ui.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void raise_limits(void)
{
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };

	/* Not needed on 5.11+ (memcg accounting) and refused on some systems: best effort. */
	setrlimit(RLIMIT_MEMLOCK, &r);
	/* One pagemap fd per watched process. */
	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

/* Checks each -p PID before anything is loaded; threads are replaced by their process. */
static int check_pids(struct cli *c)
{
	size_t i, j;

	for (i = 0; i < c->npids; i++) {
		char path[64];
		struct stat st;
		pid_t tgid;

		snprintf(path, sizeof(path), "/proc/%d", c->pids[i]);
		if (stat(path, &st)) {
			log_err("no such process: %d", c->pids[i]);
			return 1;
		}
		if (c->pids[i] == getpid()) {
			log_err("refusing to watch mevitop itself (pid %d)", c->pids[i]);
			return 1;
		}
		if (procfs_read_tgid(c->pids[i], &tgid)) {
			log_err("no such process: %d", c->pids[i]);
			return 1;
		}
		if (tgid != c->pids[i]) {
			log_info("%d is a thread of process %d: watching %d", c->pids[i], tgid, tgid);
			c->pids[i] = tgid;
		}
		if (procfs_is_kernel_thread(c->pids[i])) {
			log_err("process %d is a kernel thread or a zombie: it has no user address "
				"space to show", c->pids[i]);
			return 1;
		}
		for (j = 0; j < i; j++) {
			if (c->pids[j] == c->pids[i]) {
				memmove(&c->pids[i], &c->pids[i + 1],
					(c->npids - i - 1) * sizeof(*c->pids));
				c->npids--;
				i--;
				break;
			}
		}
	}
	return 0;
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void report_exit(void *ctx, const struct proc *p)
{
	const struct cli *c = ctx;

	if (c->npids)
		log_err("process %d (%s) exited", p->pid, p->comm);
}

/* A JSON line, or with --folded nothing until the end (see run_json). */
static int snapshot(struct engine *e, const struct cli *c, const struct json_opts *jo,
		    uint64_t mono)
{
	static bool said;

	if (!c->folded)
		return json_snapshot(stdout, e, jo, mono, wall_now());
	if (!said)	/* -v: the moment --json's first line would have been written */
		log_info("hooks attached, initial scan done: folded stacks are printed at exit");
	said = true;
	return 0;
}

static int write_folded(struct engine *e)
{
	struct proc **procs;
	size_t n;
	int err;

	engine_lock(e);
	procs = engine_procs(e, &n);
	err = stacks_write_folded(engine_stacks(e), procs, n, stdout);
	engine_unlock(e);
	return err == -EPIPE ? 0 : err ? 1 : 0;
}

static int run_json(struct engine *e, struct cli *c)
{
	struct json_opts jo = { .maps = c->maps || c->npids, .interval_ms = c->interval_ms };
	uint64_t printed = 0, next, now, mono;
	int err;

	engine_lock(e);
	mono = engine_now_ns();
	err = snapshot(e, c, &jo, mono);
	engine_unlock(e);
	if (err)
		return err == -EPIPE ? 0 : 1;
	printed++;
	next = mono + c->interval_ms * 1000000ULL;
	while (!stop_signal && (!c->count || printed < c->count)) {
		now = engine_now_ns();
		if (now < next) {
			uint64_t left_ms = (next - now) / 1000000ULL;

			/* Drain often whatever the interval: records carry no wake-up (see
			 * bpf/common.bpf.h), so the ring buffer is emptied on this timer. */
			int poll = engine_poll_ms(e);

			engine_step(e, left_ms < (uint64_t)poll ? (int)left_ms : poll);
			continue;
		}
		mono = engine_now_ns();
		engine_tick(e);
		engine_lock(e);
		engine_take_exits(e, report_exit, c);
		err = snapshot(e, c, &jo, mono);
		engine_unlock(e);
		if (err)
			return err == -EPIPE ? 0 : 1;
		printed++;
		/* --max-cpu may stretch the interval (engine_interval_scale). */
		next += c->interval_ms * engine_interval_scale(e) * 1000000ULL;
		if (next < now)
			next = now + c->interval_ms * engine_interval_scale(e) * 1000000ULL;
		if (c->npids && !engine_alive_targets(e)) {
			log_err("no watched process is left");
			break;
		}
	}
	return c->folded ? write_folded(e) : 0;
}

int main(int argc, char **argv)
{
	struct engine_opts eo = { 0 };
	struct features f = { 0 };
	struct engine *e = NULL;
	char why[512] = "";
	struct cli c;
	int rc, err;

	rc = cli_parse(argc, argv, &c);
	if (rc)
		goto out;
	if (c.help) {
		cli_usage(stdout);
		goto out;
	}
	if (c.version) {
		printf("mevitop %s\n", MEVITOP_VERSION);
		goto out;
	}
	log_verbosity = c.verbose;
	log_setup_libbpf();
	f.disabled = c.disable;
	raise_limits();

	if (c.probe) {
		err = features_probe(&f, why, sizeof(why));
		features_print(&f, c.json);
		if (err)
			fprintf(c.json ? stderr : stdout, "mevitop would not start: %s\n", why);
		goto out;
	}
	if (geteuid() != 0) {
		log_err("must be run as root: loading BPF programs and reading other processes' "
			"page tables need CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE (try sudo)");
		rc = 1;
		goto out;
	}
	rc = check_pids(&c);
	if (rc)
		goto out;
	if (c.run || c.exact) {
		/* Exact mode (user/exact.h): CMD started or -p attached, the engine with its
		 * hooks, then the same view; teardown detaches (run: returns CMD's status). */
		struct exact *x = NULL;

		if (!c.json && ui_check_terminal()) {
			rc = 1;
			goto out;
		}
		install_signals();
		rc = exact_setup(&c, &f, &e, &x);
		if (!rc) {
			rc = c.json ? run_json(e, &c) : ui_run(e, &c);
			rc = exact_teardown(x, rc);
		}
		goto out;
	}
	if (!c.json && !c.folded && ui_check_terminal()) {
		rc = 1;
		goto out;
	}
	err = features_probe(&f, why, sizeof(why));
	if (err) {
		log_err("%s", why);
		rc = 1;
		goto out;
	}

	eo.mode = c.mode;
	eo.pids = c.pids;
	eo.npids = c.npids;
	eo.follow_children = !c.no_children;
	eo.reconcile = !c.no_reconcile;
	eo.ringbuf_bytes = c.ringbuf_bytes;
	eo.chunk_map_entries = c.chunk_map_entries;
	eo.filter = filter_active(&c.filter) ? &c.filter : NULL;
	eo.max_cpu_pct = c.max_cpu;
	eo.rss_hook = c.rss_hook;
	eo.stacks = c.stacks;
	eo.stack_interval_ms = c.stack_interval_ms ? c.stack_interval_ms : 1000;
	eo.stack_sample_period = c.stack_period ? c.stack_period : 251;
	install_signals();
	err = engine_new(&eo, &f, &e, why, sizeof(why));
	if (!err)
		err = engine_start(e, why, sizeof(why));
	if (err) {
		log_err("%s", why[0] ? why : strerror(-err));
		rc = 1;
		goto out;
	}
	rc = c.json || c.folded ? run_json(e, &c) : ui_run(e, &c);
out:
	engine_free(e);
	cli_free(&c);
	return rc;
}
