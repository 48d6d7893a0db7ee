// SPDX-License-Identifier: GPL-2.0
/*
 * mevitop: which pages of which processes are in RAM, live.
 * main() only wires things: options → feature probe → engine → JSON or UI.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "engine/engine.h"
#include "engine/drive.h"
#include "exact/exact.h"
#include "kernel/kfeatures.h"
#include "out/json.h"
#include "kernel/libbpf_log.h"
#include "lib/log.h"
#include "out/web_live.h"
#include "out/web_server.h"
#include "kernel/procfs.h"
#include "rec/rec_writer.h"
#include "rec/rec_format.h"
#include "stacks/stacks.h"
#include "ui/ui.h"

/* Where --json's lines and --folded's stacks go: stdout, or -o FILE. */
static FILE *output;

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

/*
 * Started with fd 0, 1 or 2 closed, the first files mevitop opens (BPF objects, pagemap)
 * would get those numbers, and snapshots or messages would be written into them: closed
 * ones are pointed at /dev/null.  Returns whether stdout was closed.
 */
static bool guard_std_fds(void)
{
	bool out_closed = false;
	int fd;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		out_closed |= fd == 1;
		if (open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
			exit(1);
	}
	return out_closed;
}

/*
 * -o FILE, opened before anything is attached (a bad path starts nothing), close-on-exec so
 * that run's CMD does not inherit it.  0, or the exit code 1 after saying why.
 */
static int open_output(const struct cli *c)
{
	output = stdout;
	if (!c->output_path)
		return 0;
	output = fopen(c->output_path, "we");
	if (!output) {
		log_err("failed to open %s: %s", c->output_path, strerror(errno));
		return 1;
	}
	return 0;
}

/* The last bytes of -o FILE may fail only now (a full disk, NFS): then the exit is 1. */
static int close_output(const struct cli *c, int rc)
{
	if (!output || output == stdout)
		return rc;
	if (fclose(output) && !rc) {
		log_err("failed to write %s: %s", c->output_path, strerror(errno));
		rc = 1;
	}
	output = NULL;
	return rc;
}

/*
 * run's CMD inherits mevitop's stdout: without -o, its output and the snapshots share one
 * stream, which a reader such as jq cannot parse.  Said once, only when stdout is not a
 * terminal (on a terminal the lines are read by a person, and mixed output is plain to see).
 */
static void warn_shared_stdout(const struct cli *c)
{
	if (c->run && c->json && !c->record && !c->output_path && !isatty(STDOUT_FILENO))
		log_warn("CMD writes to the same stdout as the snapshots: -o FILE keeps them apart");
}

/*
 * One snapshot: a JSON line on stdout, a frame of the recording (mevitop record), or
 * nothing (serve: out NULL).  Returns 0, or the exit code: a reader that went away
 * (`| head`) is a normal end (0 after saying nothing); any other failure is said.
 */
static int emit(struct engine *e, const struct json_opts *jo, struct rec_writer *rec, FILE *out,
		uint64_t mono, double wall)
{
	struct json_frame f;
	char why[WHY_LEN];
	int err;

	if (!rec) {
		err = out ? json_snapshot(out, e, jo, mono, wall) : 0;
		/* -EINTR: a stop while the reader was not reading (json_frame_write) */
		if (err && err != -EPIPE && err != -EINTR)
			log_err("failed to write snapshot: %s", strerror(-err));
		return err;
	}
	err = json_frame_from_engine(&f, e, jo, mono, wall);
	if (!err)
		err = rec_writer_frame(rec, &f, jo->maps ? REC_FLAG_MAPS : 0, why, sizeof(why));
	/* Tests: the line live JSON would have printed for this very frame, to hold replay
	 * against (heat and first touches included). */
	if (!err && getenv("MEVITOP_TEST_RECORD_JSON"))
		json_frame_write(stdout, &f, jo);
	json_frame_release(&f);
	if (err)
		log_err("%s", why);
	return err;
}

static int write_folded(struct engine *e)
{
	struct proc **procs;
	size_t n;
	int err;

	engine_lock(e);
	procs = engine_procs(e, &n);
	err = stacks_write_folded(engine_stacks(e), procs, n, output);
	engine_unlock(e);
	if (err && err != -EPIPE)
		log_err("failed to write folded stacks: %s", strerror(-err));
	return err == -EPIPE ? 0 : err ? 1 : 0;
}

/* Where run_json's frames go: stdout or -o FILE, a recording, or nothing (serve, --folded). */
struct json_loop {
	struct json_opts jo;
	struct rec_writer *rec;
	FILE *out;
};

static int json_frame(void *ctx, struct engine *e, uint64_t mono)
{
	struct json_loop *l = ctx;

	return emit(e, &l->jo, l->rec, l->out, mono, wall_now());
}

/* Stopped by a signal (q, SIGTERM, run's CMD ending): a recording gets one last frame, so
 * what happened since the last one (first touches still on their way among them) is in
 * the file too. */
static int json_last_frame(void *ctx, struct engine *e, uint64_t mono)
{
	struct json_loop *l = ctx;

	return emit(e, &l->jo, l->rec, NULL, mono, wall_now());
}

/*
 * Also `serve`'s loop, with no snapshot written (the engine on the main thread), and
 * --folded's: nothing until the end, then the folded stacks.
 */
static int run_json(struct engine *e, struct cli *c, struct rec_writer *rec)
{
	struct json_loop l = {
		.jo = { .maps = c->maps || c->npids, .touches = rec != NULL,
			.interval_ms = c->interval_ms, .whole_system = !c->npids,
			.files_top = c->files_top },
		.rec = rec,
		.out = c->serve || c->folded ? NULL : output,
	};
	struct drive_opts o = {
		.interval_ms = c->interval_ms, .count = c->count,
		.duration_ms = c->duration_s * 1000ULL, .first_frame = true,
		.report_exits = c->npids, .until_none_left = c->npids,
		.frame = json_frame, .last_frame = rec ? json_last_frame : NULL, .ctx = &l,
	};
	int err;

	if (c->folded)	/* -v: the moment --json's first line would have been written */
		log_info("hooks attached, initial scan done: folded stacks are printed at exit");
	err = engine_drive(e, &o);
	if (err)	/* a reader that went away (`| head`), or a stop it held up: a normal end */
		return err == -EPIPE || err == -EINTR ? 0 : 1;
	return c->folded ? write_folded(e) : 0;
}

/* The view, JSON or serve's headless loop, with the metrics endpoint and the web view beside
 * it (--listen). */
static int run_view(struct engine *e, struct cli *c, struct rec_writer *rec)
{
	struct web_server ws = { 0 };
	struct web_source live;
	struct ui_opts uo;
	char why[WHY_LEN];
	int rc;

	web_live_source(e, &live);
	if (c->listen_set &&
	    web_server_start(e, &c->listen, &c->metrics, &live, &ws, why, sizeof(why))) {
		log_err("%s", why);
		return 1;
	}
	cli_ui_opts(c, &uo);
	rc = c->json || c->serve || c->folded ? run_json(e, c, rec) : ui_run(e, &uo);
	web_server_stop(&ws);
	return rc;
}

/* --record: the writer opened, and the JSON loop writes frames instead of lines. */
static int open_recording(struct cli *c, struct rec_writer **rec)
{
	struct rec_writer_opts ro = { .path = c->record_path, .max_size = c->max_size,
				      .heat = c->record_heat, .fsync_every = c->record_fsync };
	char why[WHY_LEN] = "";

	if (rec_writer_open(&ro, rec, why, sizeof(why))) {
		log_err("%s", why);
		return 1;
	}
	c->json = true;
	return 0;
}

/* Exact mode (exact/exact.h): CMD started or -p attached, the engine with its hooks, then
 * the same view; teardown detaches (run: returns CMD's status).  *e: the engine, to free. */
static int run_exact(struct cli *c, struct features *f, struct rec_writer *rec,
		     struct engine **e)
{
	struct engine_opts eo;
	struct exact *x = NULL;
	int rc;

	if (!c->json && !c->serve && ui_check_terminal())
		return 1;
	drive_signals_install();
	cli_engine_opts(c, &eo);
	rc = cli_exact_setup(c, &eo, f, e, &x);
	if (!rc) {
		warn_shared_stdout(c);
		rc = run_view(*e, c, rec);
		rc = exact_teardown(x, rc, output);
	}
	return rc;
}

/* The other modes: probe, start the engine, then the view, JSON or serve.  *e: the engine,
 * to free. */
static int run_live(struct cli *c, struct features *f, struct rec_writer *rec,
		    struct engine **e)
{
	struct engine_opts eo;
	char why[WHY_LEN] = "";
	int err;

	if (!c->json && !c->serve && !c->folded && ui_check_terminal())
		return 1;
	cli_engine_opts(c, &eo);
	engine_prelaunch(&eo, f->disabled);	/* the probe (~15 ms) leaves the other CPU idle */
	err = kfeatures_probe(f, why, sizeof(why));
	if (err) {
		log_err("%s", why);
		return 1;
	}
	drive_signals_install();
	err = engine_new(&eo, f, e, why, sizeof(why));
	if (!err)
		err = engine_start(*e, why, sizeof(why));
	if (err == -EINTR && engine_quitting()) {	/* SIGTERM while starting: a clean stop */
		log_info("%s (signal %d)", why, drive_stop_signal());
		return 0;
	}
	if (err) {
		log_err("%s", why[0] ? why : strerror(-err));
		return 1;
	}
	return run_view(*e, c, rec);
}

int main(int argc, char **argv)
{
	bool out_closed = guard_std_fds();	/* before anything opens a file */
	struct features f = { 0 };
	struct engine *e = NULL;
	char why[WHY_LEN] = "";
	struct rec_writer *rec = NULL;
	const struct cli_subcmd *sub;
	struct cli c;
	int rc, err;

	/* replay and report read a file: no engine, no root, options of their own. */
	sub = argc > 1 ? cli_subcmd_find(argv[1]) : NULL;
	if (sub && sub->main)
		return sub->main(argc - 1, argv + 1);
	rc = cli_parse(argc, argv, &c);
	if (rc)
		goto out;
	if (out_closed && !c.output_path) {
		/* Everything mevitop prints goes to stdout (the view, snapshots, help). */
		log_err("failed to write %s: %s", c.json ? "snapshot" : "to stdout",
			strerror(EBADF));
		rc = 1;
		goto out;
	}
	if (c.help) {
		cli_usage(stdout);
		goto out;
	}
	if (c.keys) {
		ui_print_keys(stdout);
		goto out;
	}
	if (c.version) {
		printf("mevitop %s\n", MEVITOP_VERSION);
		goto out;
	}
	log_verbosity = c.verbose;
	libbpf_log_setup();
	f.disabled = c.disable;
	raise_limits();

	if (c.probe) {
		err = kfeatures_probe(&f, why, sizeof(why));
		kfeatures_print(&f, c.json);
		if (err && c.json)	/* stdout holds the JSON: a notice beside it */
			log_note("mevitop would not start: %s", why);
		else if (err)
			printf("mevitop would not start: %s\n", why);
		goto out;
	}
	if (geteuid() != 0) {
		log_err("must be run as root: loading BPF programs and reading other processes' "
			"page tables need CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE (try sudo)");
		rc = 1;
		goto out;
	}
	rc = check_pids(&c);
	if (!rc)
		rc = open_output(&c);
	if (rc)
		goto out;
	if (c.record)
		rc = open_recording(&c, &rec);
	if (!rc)
		rc = c.run || c.exact ? run_exact(&c, &f, rec, &e) : run_live(&c, &f, rec, &e);
out:
	engine_free(e);
	rec_writer_close(rec);
	rc = close_output(&c, rc);
	cli_free(&c);
	return rc;
}
