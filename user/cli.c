// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "exact/exact.h"
#include "ui/ui_maplayout.h"
#include "kernel/fault_sampler.h"
#include "lib/getopt_msg.h"
#include "kernel/kfeatures.h"
#include "lib/log.h"
#include "rec/replay.h"
#include "rec/subcmd.h"
#include "rec/report.h"
#include "ui/ui.h"

enum {
	OPT_NO_RECONCILE = 256,
	OPT_NO_CHILDREN,
	OPT_PROBE,
	OPT_MODE,
	OPT_MAPS,
	OPT_EXACT,
	OPT_DISABLE,
	OPT_RINGBUF,
	OPT_COMM,
	OPT_CGROUP,
	OPT_MAX_CPU,
	OPT_CHUNK_MAP,
	OPT_ATTACH_TIMEOUT,
	OPT_RSS_HOOK,
	OPT_LISTEN,
	OPT_METRICS_TOP,
	OPT_METRICS_PROCS,
	OPT_DURATION,
	OPT_RECORD,
	OPT_MAX_SIZE,
	OPT_HEAT,
	OPT_FSYNC,
	OPT_STACKS,
	OPT_STACK_INTERVAL,
	OPT_STACK_PERIOD,
	OPT_STACK_DUTY,
	OPT_FOLDED,
	OPT_KEYS,
	OPT_FILE,
	OPT_FILES,
	OPT_FILES_TOP,
	OPT_NO_FILES,
	OPT_METRICS_FILES,
	OPT_LAYOUT,
	OPT_SHARING,
	OPT_SHARING_BUDGET,
};

static const struct option longopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "json", no_argument, NULL, 'j' },
	{ "interval", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, 'n' },
	{ "maps", no_argument, NULL, OPT_MAPS },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "exact", optional_argument, NULL, OPT_EXACT },
	{ "attach-timeout", required_argument, NULL, OPT_ATTACH_TIMEOUT },
	{ "no-reconcile", no_argument, NULL, OPT_NO_RECONCILE },
	{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
	{ "probe", no_argument, NULL, OPT_PROBE },
	{ "user", required_argument, NULL, 'u' },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "max-cpu", required_argument, NULL, OPT_MAX_CPU },
	{ "rss-hook", no_argument, NULL, OPT_RSS_HOOK },
	{ "sharing", no_argument, NULL, OPT_SHARING },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "metrics-top", required_argument, NULL, OPT_METRICS_TOP },
	{ "metrics-procs", required_argument, NULL, OPT_METRICS_PROCS },
	{ "output", required_argument, NULL, 'o' },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "heat", no_argument, NULL, OPT_HEAT },
	{ "fsync", no_argument, NULL, OPT_FSYNC },
	{ "stacks", no_argument, NULL, OPT_STACKS },
	{ "stack-interval", required_argument, NULL, OPT_STACK_INTERVAL },
	{ "stack-period", required_argument, NULL, OPT_STACK_PERIOD },
	{ "stack-duty", required_argument, NULL, OPT_STACK_DUTY },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "keys", no_argument, NULL, OPT_KEYS },
	{ "file", required_argument, NULL, OPT_FILE },
	{ "files", no_argument, NULL, OPT_FILES },
	{ "files-top", required_argument, NULL, OPT_FILES_TOP },
	{ "no-files", no_argument, NULL, OPT_NO_FILES },
	{ "metrics-files", required_argument, NULL, OPT_METRICS_FILES },
	{ "layout", required_argument, NULL, OPT_LAYOUT },
	/* For tests and debugging; documented in doc/options.md's testing switches. */
	{ "disable", required_argument, NULL, OPT_DISABLE },
	{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
	{ "chunk-map-size", required_argument, NULL, OPT_CHUNK_MAP },
	{ "sharing-budget", required_argument, NULL, OPT_SHARING_BUDGET },
	{ 0 },
};

/* The part of --help without numbers in it: the commands, and the options up to --max-cpu. */
static void usage_head(FILE *out)
{
	fputs(
"Usage: mevitop [OPTIONS]                 watch every process (like top)\n"
"       mevitop -p PID[,PID...] [OPTIONS] the heatmap of these processes\n"
"       mevitop --exact[=HOW] -p PID[,PID...] [OPTIONS]\n"
"                                         the same, seeing every first touch\n"
"       mevitop run [OPTIONS] [--] CMD [ARGS...]\n"
"                                         start CMD in exact mode and show it; exits\n"
"                                         with CMD's status (CMD dies with mevitop)\n"
"       mevitop serve [--listen ADDR:PORT] [OPTIONS]\n"
"                                         no view: serve Prometheus metrics (logs on\n"
"                                         stderr, exits 0 on SIGTERM; for systemd)\n"
"       mevitop record -o FILE [-p PID,...] [--duration S] [--max-size SIZE] [OPTIONS]\n"
"                                         write the model over time to FILE\n"
"       mevitop replay FILE [--json [--at T | --from T1 --to T2]] [--folded]\n"
"                                         the view on a recording, with a time cursor;\n"
"                                         --json: its frames as live JSON; --folded:\n"
"                                         its --stacks as --folded prints them\n"
"       mevitop replay FILE --listen ADDR:PORT\n"
"                                         the web view on a recording, with a time slider\n"
"       mevitop report FILE -o OUT.svg [-p PID]\n"
"                                         a picture of one process over a recording\n"
"\n"
"Shows, page by page, which parts of processes' address spaces are in RAM, live.\n"
"Needs root (BPF, other processes' pagemap; exact mode: ptrace and userfaultfd).\n"
"\n"
"Options:\n"
"  -p, --pid PID[,PID...]   watch these processes (and, unless --no-children, their\n"
"                           descendants); default: every process\n"
"  -j, --json               print NDJSON snapshots on stdout (or -o FILE) instead of\n"
"                           the interactive view; the first line comes once the hooks\n"
"                           are attached and the initial scan is complete; messages\n"
"                           on stderr become JSON objects too ({\"error\": ...}).\n"
"                           mevitop run's CMD writes to the same stdout: use -o FILE\n"
"  -i, --interval MS        snapshot / refresh period, 10 to 3600000 ms (default 1000)\n"
"  -n, --count N            exit after N snapshots (the first included)\n"
"      --maps               include mappings and page runs in whole-system JSON\n"
"      --layout HOW         the heatmap's layout: auto (default: packed when the\n"
"                           labels need more than one screen), labels, compact, packed\n"
"                           (always included with -p)\n"
"      --mode MODE          sample (default): nothing runs at page faults; at each\n"
"                           refresh the processes whose fault or rss counters moved\n"
"                           are rescanned: exact at every refresh, for a cost a\n"
"                           server does not notice\n"
"                           chunk: faults counted in the kernel per 2 MiB chunk, only\n"
"                           the chunks that changed rescanned (finer heat; costs a\n"
"                           BPF program per fault)\n"
"                           both learn layout changes from mmap_lock releases (no\n"
"                           syscall hook: syscalls keep their speed)\n"
"                           trace: every fault and mm syscall, streamed in order\n"
"      --exact[=HOW]        exact mode: mevitop gives the process a userfaultfd only\n"
"                           mevitop holds (a brief ptrace stop) and registers its\n"
"                           private anonymous mappings; other mappings stay tracked\n"
"                           by pagemap (JSON \"tracker\").  Processes of any user:\n"
"                           where the process may not call userfaultfd() (no\n"
"                           CAP_SYS_PTRACE), mevitop hands it /dev/userfaultfd\n"
"                           (--probe says which ways exist).  HOW is\n"
"                           fast (default): first touches found by scanning page\n"
"                           tables (new mappings every ms, all at each refresh),\n"
"                           unordered within a scan; about 1x the process's speed\n"
"                           ordered: every first touch seen as it happens, in order,\n"
"                           with its thread; mevitop serves each one (the process\n"
"                           runs several times slower on fault-heavy work)\n"
"                           q, Ctrl-C or SIGTERM detach and leave the process as it\n"
"                           was, running or stopped; so does mevitop dying (even\n"
"                           kill -9 mid-injection); a clean exit leaves no trace;\n"
"                           after kill -9 one page may stay, reused and removed by\n"
"                           the next attach (/memfd:mevitop-scratch, r-x).  A\n"
"                           stopped mevitop never blocks it in fast mode; ordered\n"
"                           refuses Ctrl-Z (its faults would wait).  Under seccomp\n"
"                           the filters are suspended while mevitop holds the\n"
"                           process, or (--disable seccomp_suspend) every injected\n"
"                           call must be proven allowed by them, else the process is\n"
"                           refused (as without CAP_SYS_ADMIN); --probe says which\n"
"      --attach-timeout MS  exact mode: the longest a process may be held stopped\n"
"                           while mevitop attaches (default 2000); past it mevitop\n"
"                           backs out and leaves the process unchanged\n"
"      --no-reconcile       no periodic rescans (event-driven scans and healing after\n"
"                           lost events stay)\n"
"      --no-children        with -p, do not watch their descendants\n"
"  -u, --user USER          only processes of this user (name or uid; effective uid)\n"
"      --comm NAME          only processes with this command name (as /proc/PID/comm)\n"
"      --cgroup PATH        only processes in this cgroup or below it (v2, or a v1\n"
"                           hierarchy; relative paths start at /sys/fs/cgroup);\n"
"                           processes join and leave live\n"
"                           (-u, --comm and --cgroup filter the whole system: they\n"
"                           do not combine with -p or --exact)\n",
	      out);
}

void cli_usage(FILE *out)
{
	usage_head(out);
	fprintf(out,
"      --max-cpu PCT        when mevitop would use more than PCT%% of one core, widen\n"
"                           its interval (shown as interval_scale) instead\n"
"      --rss-hook           learn rss changes from kmem:rss_stat (counters kept in a\n"
"                           BPF map) instead of polling /proc/PID/stat; runs a BPF\n"
"                           program at every fault (~3.5%% of a fault measured here)\n"
"      --sharing            USS, PSS and shared bytes per process and mapping, and the\n"
"                           heatmap's sharing layer, from pagemap PFNs and\n"
"                           /proc/kpagecount (root; mevitop's CPU only, within a page\n"
"                           budget per refresh: doc/sharing.md)\n"
"      --listen ADDR:PORT   also serve Prometheus/OpenMetrics text on\n"
"                           http://ADDR:PORT/metrics and the web view on\n"
"                           http://ADDR:PORT/ (with the view, --json or serve;\n"
"                           serve's default " LISTEN_ADDR_DEFAULT "). :PORT or PORT alone\n"
"                           binds loopback; 0.0.0.0:PORT or [::]:PORT every interface,\n"
"                           where the web view needs the token printed in its URL\n"
"      --metrics-top N      per-mapping series for the N largest resident mappings of\n"
"                           each process (default %d, 0: none)\n"
"      --metrics-procs N    export at most N processes, the largest by resident bytes\n"
"                           (default %d)\n"
"      --stacks             who first touched each range: the user stack of the first\n"
"                           fault sampled in each mapping's part of a 2 MiB chunk\n"
"                           (frame-pointer chain, or the faulting instruction only),\n"
"                           named with libdwfl; JSON \"first_touch\" per mapping, the\n"
"                           heatmap's cursor line, key w, the web view's who-touched\n"
"                           layer.  Trace and chunk modes take it at the fault hook;\n"
"                           sample mode samples one page fault in --stack-period (a\n"
"                           perf software event): statistical; --exact=ordered: every\n"
"                           page its first touch's stack\n"
"      --stack-interval MS  --stacks: at most one stack per chunk this often (default\n"
"                           1000)\n"
"      --stack-period N     sample mode's --stacks: one page fault in N (default 251)\n"
"      --stack-duty ON/EVERY  sample mode's --stacks: the perf events are open ON ms\n"
"                           of every EVERY ms, closed (free) between (default %d/%d;\n"
"                           ON = EVERY: always open)\n"
"      --folded             with --stacks (implied): at exit, print folded stacks\n"
"                           weighted by resident pages (flamegraph.pl, inferno,\n"
"                           speedscope) instead of JSON\n"
"      --files              open the view on the Files view: every file in the page\n"
"                           cache (whole-system JSON has them anyway: \"files\")\n"
"      --file PATH          watch this file page by page (repeatable): JSON \"runs\"\n"
"                           of cached, dirty and writeback pages; a bad PATH (missing,\n"
"                           a directory, a FIFO, unreadable) exits 1 saying why\n"
"      --files-top N        whole-system JSON lists the N files with the most cached\n"
"                           pages (default %d, 0: all), the rest summed in\n"
"                           \"files_omitted\"\n"
"      --no-files           no page cache side: no memory summary beyond\n"
"                           /proc/meminfo, no file table, no filemap tracepoints\n"
"      --metrics-files N    cached/dirty series for the N largest cached files\n"
"                           (default %d, at most %d)\n"
"      --probe              print kernel features, the hooks mevitop would use and how\n"
"                           exact mode creates userfaultfds, exit\n"
"  -o, --output FILE        --json's snapshots or --folded's stacks go to FILE, not\n"
"                           stdout (mevitop run: CMD keeps stdout); record: the\n"
"                           recording (FILE.1 too with --max-size)\n"
"      --record FILE        record while watching, as mevitop record -o FILE does\n"
"                           (mevitop run --record FILE -- CMD: exact mode recorded)\n"
"      --duration S         record: stop after S seconds\n"
"      --max-size SIZE      record: keep the newest history in SIZE bytes (K, M, G\n"
"                           suffixes; FILE and FILE.1 hold half each)\n"
"      --heat               record: the heat too, so replay's heat layer shows it\n"
"                           (each frame then also holds the 64 KiB blocks that were\n"
"                           faulted since the last one)\n"
"      --fsync              record: fdatasync every frame (default: each keyframe, so\n"
"                           a power cut loses at most the frames since the last one)\n"
"  -v, --verbose            more messages on stderr (-vv: libbpf debug)\n"
"  -h, --help               this help\n"
"      --keys               the interactive view's keys, one per line (view, keys,\n"
"                           what they do; the help screen shows the same), exit\n"
"  -V, --version            version\n"
"\n"
"Testing switches: --disable FEATURE[,...] forces a fallback (%s;\n"
"- reads as _; also MEVITOP_DISABLE=...; uffd_syscall / uffd_dev: exact mode never\n"
"runs userfaultfd() in a target / never hands it /dev/userfaultfd),\n"
"--ringbuf-size BYTES (power of two, >= 4096),\n"
"--chunk-map-size N (entries of chunk mode's per-chunk fault map),\n"
"--sharing-budget PAGES (--sharing's pagemap entries a refresh, default 262144).\n",
		METRICS_TOP_DEFAULT, METRICS_PROCS_DEFAULT, STACK_DUTY_ON_MS_DEFAULT,
		STACK_DUTY_EVERY_MS_DEFAULT, FILES_TOP_DEFAULT, METRICS_FILES_DEFAULT,
		METRICS_FILES_MAX, kfeatures_disable_names());
}

static const char *exact_refused(const struct cli *c);


/* "+": stop at the first non-option so `run CMD -x` leaves -x to CMD; ":": see getopt_error. */
#define OPTSTRING "+:p:ji:n:u:o:vhV"

/* Usage errors are said one way for every command (rec/subcmd.c, lib/log.c's log_usage):
 * the main command is the one with no name. */
#define usage_error(...) subcmd_usage(NULL, __VA_ARGS__)

/*
 * getopt's own messages would start with argv[0] ("run: ..." after `mevitop run`) and not
 * follow --json: opterr is off and the leading ':' of the option string makes a missing
 * argument ':', so each case is said in getopt's words (lib/getopt_msg.c).
 */
static int getopt_error(int opt, char **argv)
{
	return subcmd_getopt_error(NULL, opt, argv);
}

static bool parse_u64(const char *s, uint64_t *v, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long x;

	/* Digits only: strtoull would also take leading blanks and a sign. */
	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end || x < min || x > max)
		return false;
	*v = x;
	return true;
}

/* "ON/EVERY" milliseconds, 1 <= ON <= EVERY <= an hour. */
static bool parse_duty(const char *s, uint64_t *on, uint64_t *every)
{
	const char *slash = strchr(s, '/');
	char head[24];

	if (!slash || (size_t)(slash - s) >= sizeof(head))
		return false;
	memcpy(head, s, slash - s);
	head[slash - s] = '\0';
	return parse_u64(head, on, 1, 3600000) && parse_u64(slash + 1, every, *on, 3600000);
}

/* "64M", "1G", "4096": bytes with an optional binary suffix. */
static bool parse_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;
	unsigned shift = 0;

	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (*end || x > (UINT64_MAX >> shift))
		return false;
	*v = x << shift;
	return true;
}

static int parse_pids(const char *arg, struct cli *c)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	uint64_t v;

	if (!copy)
		return 1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		pid_t *np;

		if (!parse_u64(tok, &v, 1, INT_MAX)) {
			usage_error("invalid pid '%s': expected a positive number", tok);
			free(copy);
			return 2;
		}
		/* One more, exactly: a command line's few pids (struct cli keeps no capacity,
		 * and cli_exact_setup sizes c->pids itself for run). */
		np = realloc(c->pids, (c->npids + 1) * sizeof(*np));
		if (!np) {
			free(copy);
			return 1;
		}
		c->pids = np;
		c->pids[c->npids++] = v;
	}
	free(copy);
	if (!c->npids)
		return usage_error("-p needs at least one pid");
	return 0;
}

static void set_run(struct cli *c)
{
	c->run = true;
}

static void set_serve(struct cli *c)
{
	c->serve = true;
}

static void set_record(struct cli *c)
{
	c->record = c->record_cmd = true;
}

static int replay_cmd(int argc, char **argv)
{
	return replay_main(argc, argv, ui_replay_main);
}

/* Every subcommand, once: run, serve and record are modes of the live engine (cli_parse
 * goes on with their options); replay and report read a file and parse their own. */
static const struct cli_subcmd subcmds[] = {
	{ "run", set_run, NULL },
	{ "serve", set_serve, NULL },
	{ "record", set_record, NULL },
	{ "replay", NULL, replay_cmd },
	{ "report", NULL, report_main },
};

const struct cli_subcmd *cli_subcmd_find(const char *name)
{
	for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		if (!strcmp(subcmds[i].name, name))
			return &subcmds[i];
	return NULL;
}

/* Each option belongs to one group; cli_parse asks each in turn. */
#define NOT_MINE (-1)

/* Which processes and files: -p, the filters, --file and the Files view. */
static int opt_what(int opt, struct cli *c)
{
	uint64_t v;
	int err;

	switch (opt) {
	case 'p':
		err = parse_pids(optarg, c);
		if (err)
			return err;
		break;
	case OPT_NO_CHILDREN:
		c->no_children = true;
		break;
	case OPT_FILE: {
		const char **nv = realloc(c->file_paths,
					  (c->nfile_paths + 1) * sizeof(*nv));

		if (!nv)
			return usage_error("out of memory");
		c->file_paths = nv;
		c->file_paths[c->nfile_paths++] = optarg;
		break;
	}
	case OPT_FILES:
		c->files_view = true;
		break;
	case OPT_NO_FILES:
		c->no_files = true;
		break;
	case OPT_FILES_TOP:
		if (!parse_u64(optarg, &v, 0, 1000000000))
			return usage_error("invalid --files-top '%s': expected 0 (all) to "
					   "1000000000", optarg);
		c->files_top = v;
		break;
	case 'u':
		if (filter_set_user(&c->filter, optarg))
			return 2;
		break;
	case OPT_COMM:
		if (filter_set_comm(&c->filter, optarg))
			return 2;
		break;
	case OPT_CGROUP:
		if (c->filter.cgroup)
			return usage_error("--cgroup given twice");
		if (filter_set_cgroup(&c->filter, optarg))
			return 2;
		break;
	default:
		return NOT_MINE;
	}
	return 0;
}

/* How to watch: the mode, exact mode, the refresh, and the switches for tests and tuning. */
static int opt_how(int opt, struct cli *c)
{
	uint64_t v;

	switch (opt) {
	case 'i':
		if (!parse_u64(optarg, &v, 10, 3600000))
			return usage_error("invalid interval '%s': expected milliseconds "
					   "between 10 and 3600000", optarg);
		c->interval_ms = v;
		c->interval_set = true;
		break;
	case 'n':
		if (!parse_u64(optarg, &v, 1, UINT64_MAX))
			return usage_error("invalid count '%s': expected a positive number",
					   optarg);
		c->count = v;
		break;
	case OPT_MODE:
		if (!strcmp(optarg, "trace"))
			c->mode = MODE_TRACE;
		else if (!strcmp(optarg, "sample"))
			c->mode = MODE_SAMPLE;
		else if (!strcmp(optarg, "chunk"))
			c->mode = MODE_CHUNK;
		else
			return usage_error("unknown mode '%s' (known: sample, chunk, trace)",
					   optarg);
		c->mode_set = true;
		break;
	case OPT_EXACT:
		c->exact = true;
		if (!optarg || !strcmp(optarg, "fast"))
			c->exact_variant = optarg ? EXACT_FAST : EXACT_AUTO;
		else if (!strcmp(optarg, "ordered"))
			c->exact_variant = EXACT_ORDERED;
		else
			return usage_error("unknown exact mode '%s' (known: fast, ordered)",
					   optarg);
		break;
	case OPT_ATTACH_TIMEOUT:
		if (!parse_u64(optarg, &v, 10, 600000))
			return usage_error("invalid attach timeout '%s': expected milliseconds "
					   "between 10 and 600000", optarg);
		c->attach_timeout_ms = v;
		break;
	case OPT_NO_RECONCILE:
		c->no_reconcile = true;
		break;
	case OPT_DISABLE:
		if (kfeatures_parse_disable(optarg, &c->disable))
			return 2;
		break;
	case OPT_MAX_CPU:
		if (!parse_u64(optarg, &v, 1, 100))
			return usage_error("invalid --max-cpu '%s': a percentage of one core, "
					   "1 to 100", optarg);
		c->max_cpu = v;
		break;
	case OPT_RSS_HOOK:
		c->rss_hook = true;
		break;
	case OPT_SHARING:
		c->sharing = true;
		break;
	case OPT_SHARING_BUDGET:
		if (!parse_u64(optarg, &v, 1, 1ULL << 40))
			return usage_error("invalid --sharing-budget '%s': pagemap entries a "
					   "refresh, at least 1", optarg);
		c->sharing_budget = v;
		break;
	case OPT_CHUNK_MAP:
		if (!parse_u64(optarg, &v, 1, 1 << 24))
			return usage_error("invalid chunk map size '%s'", optarg);
		c->chunk_map_entries = v;
		break;
	case OPT_RINGBUF:
		if (!parse_u64(optarg, &v, 4096, 1ULL << 32) || (v & (v - 1)))
			return usage_error("invalid ring buffer size '%s': a power of two "
					   ">= 4096", optarg);
		c->ringbuf_bytes = v;
		break;
	default:
		return NOT_MINE;
	}
	return 0;
}

/* Where the model goes: JSON, -o, the metrics endpoint, the heatmap layout. */
static int opt_out(int opt, struct cli *c)
{
	uint64_t v;

	switch (opt) {
	case 'j':
		c->json = true;
		break;
	case OPT_MAPS:
		c->maps = true;
		break;
	case OPT_METRICS_FILES:
		if (!parse_u64(optarg, &v, 0, METRICS_FILES_MAX))
			return usage_error("invalid --metrics-files '%s': expected 0 to %d",
					   optarg, METRICS_FILES_MAX);
		c->metrics.files = v;
		break;
	case OPT_LISTEN: {
		char why[WHY_LEN];

		if (listen_addr_parse(optarg, &c->listen, why, sizeof(why)))
			return usage_error("%s", why);
		c->listen_set = true;
		break;
	}
	case OPT_METRICS_TOP:
		if (!parse_u64(optarg, &v, 0, METRICS_TOP_MAX))
			return usage_error("invalid --metrics-top '%s': expected 0 to %d",
					   optarg, METRICS_TOP_MAX);
		c->metrics.top = v;
		break;
	case OPT_METRICS_PROCS:
		if (!parse_u64(optarg, &v, 1, METRICS_PROCS_MAX))
			return usage_error("invalid --metrics-procs '%s': expected 1 to %d",
					   optarg, METRICS_PROCS_MAX);
		c->metrics.procs = v;
		break;
	case 'o':
		if (c->record_cmd)
			c->record_path = optarg;
		else
			c->output_path = optarg;
		break;
	case OPT_LAYOUT:
		c->layout = maplayout_parse(optarg);
		if (c->layout == HL_INVALID)
			return usage_error("--layout takes auto, labels, compact or packed, "
					   "not '%s'", optarg);
		break;
	default:
		return NOT_MINE;
	}
	return 0;
}

/* Recordings: record's options, and run's --record. */
static int opt_record(int opt, struct cli *c)
{
	uint64_t v;

	switch (opt) {
	case OPT_RECORD:	/* `run --record FILE`: the record subcommand's -o */
		c->record = true;
		c->record_path = optarg;
		break;
	case OPT_DURATION:
		if (!parse_u64(optarg, &v, 1, UINT32_MAX))
			return usage_error("invalid duration '%s': expected seconds", optarg);
		c->duration_s = v;
		break;
	case OPT_HEAT:
		c->record_heat = true;
		break;
	case OPT_FSYNC:
		c->record_fsync = true;
		break;
	case OPT_MAX_SIZE:
		/* Two segments, each at least a few frames. */
		if (!parse_size(optarg, &v) || v < 65536)
			return usage_error("invalid --max-size '%s': expected bytes (K, M, G "
					   "suffixes), at least 64K", optarg);
		c->max_size = v;
		break;
	default:
		return NOT_MINE;
	}
	return 0;
}

/* Stack attribution: --stacks, --folded and their sampling. */
static int opt_stacks(int opt, struct cli *c)
{
	uint64_t v;

	switch (opt) {
	case OPT_STACKS:
		c->stacks = true;
		break;
	case OPT_FOLDED:
		c->stacks = c->folded = true;
		break;
	case OPT_STACK_INTERVAL:
		if (!parse_u64(optarg, &v, 1, 3600000))
			return usage_error("invalid --stack-interval '%s': expected milliseconds "
					   "between 1 and 3600000", optarg);
		c->stack_interval_ms = v;
		break;
	case OPT_STACK_PERIOD:
		if (!parse_u64(optarg, &v, 1, 1 << 30))
			return usage_error("invalid --stack-period '%s': expected a number of "
					   "page faults, 1 to 1073741824", optarg);
		c->stack_period = v;
		break;
	case OPT_STACK_DUTY:
		if (!parse_duty(optarg, &c->stack_duty_on_ms, &c->stack_duty_every_ms))
			return usage_error("invalid --stack-duty '%s': expected ON/EVERY in "
					   "milliseconds, 1 <= ON <= EVERY <= 3600000", optarg);
		break;
	default:
		return NOT_MINE;
	}
	return 0;
}

/* What to print instead of watching: --probe, --help, --version, --keys, -v. */
static int opt_info(int opt, struct cli *c)
{
	switch (opt) {
	case OPT_PROBE:
		c->probe = true;
		break;
	case 'v':
		c->verbose++;
		break;
	case 'h':
		c->help = true;
		break;
	case 'V':
		c->version = true;
		break;
	case OPT_KEYS:
		c->keys = true;
		break;
	default:
		return NOT_MINE;
	}
	return 0;
}

static int (*const option_groups[])(int opt, struct cli *c) = {
	opt_what, opt_how, opt_out, opt_record, opt_stacks, opt_info,
};

/* What the options say together: each rule a user can break, with the message for it. */
static int cli_check(int argc, char **argv, struct cli *c)
{
	if (c->run) {
		if (optind >= argc)
			return usage_error("run needs a command: mevitop run [OPTIONS] -- CMD");
		c->run_argv = argv + optind;
		if (c->npids)
			return usage_error("run starts its own process: -p does not apply");
		c->exact = true;
	} else if (optind < argc) {
		return usage_error("unexpected argument '%s'", argv[optind]);
	}
	if (c->record && !c->record_path && !c->help)
		return usage_error("record needs a file: mevitop record -o FILE");
	if (!c->record && (c->duration_s || c->max_size || c->record_heat || c->record_fsync))
		return usage_error("--duration, --max-size, --heat and --fsync apply to "
				   "mevitop record");
	if (c->output_path && !c->help && (c->probe || (!c->json && !c->folded)))
		return usage_error("-o FILE takes --json's snapshots or --folded's stacks (a "
				   "recording: mevitop record -o FILE)");
	if (c->record && c->json)
		return usage_error("record writes FILE, not JSON: replay it with "
				   "mevitop replay FILE --json");
	if (c->exact && !c->run && !c->npids && !c->help && !c->version && !c->probe &&
	    !c->keys)
		return usage_error("--exact needs processes: --exact -p PID, or mevitop run -- CMD");
	if (c->exact && exact_refused(c))
		return usage_error("%s does not apply to exact mode", exact_refused(c));
	if (c->npids && filter_active(&c->filter))
		return usage_error("-p and the filters (-u, --comm, --cgroup) do not mix");
	c->metrics.interval_ms = c->interval_ms;
	if (c->serve && c->json)
		return usage_error("serve writes no snapshots: use --json --listen ADDR:PORT");
	if (c->serve && !c->listen_set) {
		char why[WHY_LEN];

		if (listen_addr_parse(LISTEN_ADDR_DEFAULT, &c->listen, why, sizeof(why)))
			return usage_error("%s", why);
		c->listen_set = true;
	}
	/* Fast exact mode learns first touches from pagemap scans: no thread, no fault, so no
	 * stack to join them with (user/stacks/fault_stacks.h). */
	if (c->stacks && c->exact && c->exact_variant != EXACT_ORDERED)
		return usage_error("--stacks in exact mode needs --exact=ordered: fast exact mode "
				   "sees first touches in pagemap scans, not the faults that made "
				   "them");
	return 0;
}

int cli_parse(int argc, char **argv, struct cli *c)
{
	const char *env = getenv("MEVITOP_DISABLE");
	const struct cli_subcmd *sub;
	int opt;

	memset(c, 0, sizeof(*c));
	c->layout = HL_AUTO;
	c->interval_ms = 1000;
	c->mode = MODE_SAMPLE;
	c->attach_timeout_ms = 2000;
	c->metrics = (struct metrics_opts){ .top = METRICS_TOP_DEFAULT, .procs = METRICS_PROCS_DEFAULT,
					    .files = METRICS_FILES_DEFAULT };
	c->files_top = FILES_TOP_DEFAULT;
	if (argc > 1 && (sub = cli_subcmd_find(argv[1])) && sub->set) {
		sub->set(c);
		argv++;
		argc--;
	}
	/* Errors are JSON objects once --json is given, wherever it stands among the options
	 * (`mevitop -i 5 --json` included). */
	subcmd_json(argc, argv, OPTSTRING, longopts);
	if (env && *env && kfeatures_parse_disable(env, &c->disable))
		return 2;
	while ((opt = getopt_long(argc, argv, OPTSTRING, longopts, NULL)) != -1) {
		int rc = NOT_MINE;

		for (size_t i = 0; i < sizeof(option_groups) / sizeof(option_groups[0]) && rc == NOT_MINE; i++)
			rc = option_groups[i](opt, c);
		if (rc == NOT_MINE)
			return getopt_error(opt, argv);
		if (rc)
			return rc;
	}
	return cli_check(argc, argv, c);
}

/* Exact mode's engine is sample mode's plus a userfaultfd per process, for -p or run's
 * CMD: every other option applies to it (cli_engine_opts), these do not. */
static const char *exact_refused(const struct cli *c)
{
	if (c->mode_set)
		return "--mode";
	if (c->filter.uid_set)
		return "--user";
	if (c->filter.comm[0])
		return "--comm";
	if (c->filter.cgroup)
		return "--cgroup";
	/* --stacks is ordered exact mode's (each first touch has its fault's stack); the
	 * folded output is written by the snapshot loop exact mode does not run. */
	if (c->folded)
		return "--folded";
	/* the rate limit and the perf period are the fault hooks' and sample mode's */
	if (c->stack_interval_ms)
		return "--stack-interval";
	if (c->stack_period)
		return "--stack-period";
	if (c->stack_duty_every_ms)
		return "--stack-duty";
	/* Polling /proc/PID/stat is what tells exact mode which processes to rescan. */
	if (c->rss_hook)
		return "--rss-hook";
	if (c->chunk_map_entries)	/* chunk mode's map */
		return "--chunk-map-size";
	return NULL;
}

void cli_ui_opts(const struct cli *c, struct ui_opts *o)
{
	*o = (struct ui_opts){
		.interval_ms = c->interval_ms,
		.count = c->count,
		.pids = c->pids,
		.npids = c->npids,
		.layout = c->layout,
		.files_view = c->files_view,
		.file_path = c->nfile_paths ? c->file_paths[0] : NULL,
		.refuse_suspend = c->exact && c->exact_variant == EXACT_ORDERED,
	};
}

void cli_engine_opts(struct cli *c, struct engine_opts *eo)
{
	*eo = (struct engine_opts){
		.mode = c->exact ? MODE_EXACT : c->mode,
		.pids = c->pids,
		.npids = c->npids,
		.follow_children = !c->no_children,
		.reconcile = !c->no_reconcile,
		.ringbuf_bytes = c->ringbuf_bytes,
		.chunk_map_entries = c->chunk_map_entries,
		.filter = filter_active(&c->filter) ? &c->filter : NULL,
		.max_cpu_pct = c->max_cpu,
		.rss_hook = c->rss_hook,
		.sharing = c->sharing,
		.share_budget_pages = c->sharing_budget,
		.share_period_ms = c->interval_ms,
		.stacks = c->stacks,
		.stack_interval_ms = c->stack_interval_ms ? c->stack_interval_ms : 1000,
		.stack_sample_period = c->stack_period ? c->stack_period : 251,
		.stack_duty_on_ms = c->stack_duty_every_ms ? c->stack_duty_on_ms :
				    STACK_DUTY_ON_MS_DEFAULT,
		.stack_duty_every_ms = c->stack_duty_every_ms ? c->stack_duty_every_ms :
				       STACK_DUTY_EVERY_MS_DEFAULT,
		.files = !c->no_files || c->nfile_paths,
		.file_paths = c->file_paths,
		.nfile_paths = c->nfile_paths,
		/* Dirty and writeback counts (cachestat) refreshed each interval for the
		 * largest files, what JSON lists; the tracepoints keep every row's cached
		 * count current, and a row that changed is counted again anyway. */
		.files_top = !c->files_top || c->files_top > 64 ? 64 : c->files_top,
		/* Only --json's first line waits for the names: the view, serve and record
		 * may show any row at once. */
		.files_first_listed = c->json && !c->serve && !c->record && !c->folded &&
				      c->files_top <= 64 ? c->files_top : 0,
	};
}

void cli_free(struct cli *c)
{
	free(c->pids);
	free(c->file_paths);
	filter_free(&c->filter);
}

int cli_exact_setup(struct cli *c, struct engine_opts *eo, struct features *f, struct engine **e,
		    struct exact **x)
{
	struct exact_opts o = {
		.variant = c->exact_variant, .attach_timeout_ms = c->attach_timeout_ms,
		.run_argv = c->run ? c->run_argv : NULL, .pids = c->pids, .npids = c->npids,
		.no_children = c->no_children, .json = c->json, .record = c->record,
		.interval_ms = c->interval_ms,
	};
	int rc;

	if (c->run) {
		pid_t *pids = realloc(c->pids, sizeof(*pids));	/* exactly CMD's */

		if (!pids)
			return 1;
		c->pids = pids;
		c->npids = 0;
	}
	rc = exact_setup(&o, eo, f, e, x);
	if (rc)
		return rc;
	c->exact_variant = exact_variant_of(*x);
	if (c->run) {
		c->pids[0] = exact_run_pid(*x);
		c->npids = 1;
	}
	return 0;
}
