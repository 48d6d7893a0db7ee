/* SPDX-License-Identifier: GPL-2.0 */
/* Command line: options, validation and --help (kept in step with README.md and the man page). */
#ifndef MEVITOP_CLI_H
#define MEVITOP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "engine/engine.h"
#include "kernel/filter.h"
#include "out/listen_addr.h"
#include "out/metrics.h"
#include "exact/exact_opts.h"

struct cli {
	bool run;			/* `mevitop run -- CMD` */
	char **run_argv;
	pid_t *pids;
	size_t npids;
	bool json;
	bool maps;
	bool probe;
	bool exact;			/* --exact (implied by run) */
	enum exact_variant exact_variant;
	uint64_t attach_timeout_ms;	/* longest a target may be held stopped */
	bool help, version;
	bool keys;			/* --keys: print the view's key tables */
	int layout;			/* --layout: enum hm_style, HL_AUTO by default */
	bool no_reconcile;
	bool no_children;
	enum engine_mode mode;
	bool mode_set;
	uint64_t interval_ms;
	bool interval_set;
	uint64_t count;			/* 0: forever */
	uint32_t disable;		/* enum feat_disable */
	size_t ringbuf_bytes;
	size_t chunk_map_entries;
	struct filter filter;		/* -u, --comm, --cgroup */
	uint32_t max_cpu;		/* --max-cpu PCT, 0: off */
	bool rss_hook;			/* --rss-hook */
	bool sharing;			/* --sharing: USS, PSS (doc/sharing.md) */
	uint64_t sharing_budget;	/* --sharing-budget PAGES, 0: the default */
	bool serve;			/* `mevitop serve`: no terminal, metrics endpoint only */
	bool listen_set;		/* --listen (implied by serve) */
	struct listen_addr listen;
	struct metrics_opts metrics;	/* --metrics-top, --metrics-procs */
	bool stacks;			/* --stacks (implied by --folded) */
	uint64_t stack_interval_ms;	/* --stack-interval, 0: the default */
	uint64_t stack_period;		/* --stack-period, 0: the default */
	uint64_t stack_duty_on_ms;	/* --stack-duty ON/EVERY, every 0: the default */
	uint64_t stack_duty_every_ms;
	bool folded;			/* --folded: folded stacks at exit instead of JSON */
	int verbose;
	/* -o FILE outside record: --json's snapshots or --folded's stacks go to FILE instead of
	 * stdout (so `run`'s CMD keeps stdout to itself). */
	const char *output_path;
	/* `mevitop record -o FILE` (user/rec/): frames go to FILE instead of stdout. */
	bool record;
	bool record_cmd;		/* `mevitop record` itself: its -o is the recording */
	const char *record_path;	/* record's -o, or --record */
	uint64_t duration_s;		/* --duration, 0: until stopped */
	uint64_t max_size;		/* --max-size bytes, 0: unbounded */
	bool record_heat;		/* --heat: the heat goes into the frames too */
	bool record_fsync;		/* --fsync: every frame synced, not only keyframes */
	/* The page cache (doc/pagecache.md). */
	bool no_files;			/* --no-files: no file table, no filemap tracepoints */
	bool files_view;		/* --files: the view opens on the Files view */
	const char **file_paths;	/* --file PATH, repeatable */
	size_t nfile_paths;
	uint32_t files_top;		/* --files-top N: JSON "files" rows (0: all) */
};
#define FILES_TOP_DEFAULT 20

/* Parses argv; returns 0, or 2 after printing a usage error. */
int cli_parse(int argc, char **argv, struct cli *c);
void cli_usage(FILE *out);
/* The engine's options, for every mode (exact mode's included): built here once. */
void cli_engine_opts(struct cli *c, struct engine_opts *eo);
/* The view's options (ui/ui.h), after cli_exact_setup: the variant and run's pid are known. */
struct ui_opts;
void cli_ui_opts(const struct cli *c, struct ui_opts *o);
/* Exact mode's setup (exact_setup) from c's options; then what it resolved goes back into c
 * for the view: the variant, and run's CMD as c's one pid.  Returns exact_setup's code. */
struct exact;
struct features;
int cli_exact_setup(struct cli *c, struct engine_opts *eo, struct features *f, struct engine **e,
		    struct exact **x);
void cli_free(struct cli *c);

/* A subcommand: a mode of the live engine (set marks it in struct cli, and the options go
 * on), or a program of its own (main gets the arguments after the subcommand's name). */
struct cli_subcmd {
	const char *name;
	void (*set)(struct cli *c);
	int (*main)(int argc, char **argv);
};

const struct cli_subcmd *cli_subcmd_find(const char *name);

#endif
