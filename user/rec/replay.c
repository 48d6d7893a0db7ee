// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "out/json.h"
#include "out/json_files_read.h"
#include "lib/log.h"
#include "rec/rec_reader.h"
#include "rec/subcmd.h"
#include "rec/rec_format.h"
#include "rec/replay.h"
#include "rec/replay_web.h"
#include "stacks/stacks.h"

struct replay_opts {
	const char *path;
	bool json, maps, help, folded, listen_set;
	struct listen_addr listen;	/* --listen: the web view on the recording */
	bool at_set, from_set, to_set;
	double at, from, to;		/* seconds from the start of the recording */
};

static void usage(FILE *out)
{
	fprintf(out,
"Usage: mevitop replay FILE                the interactive view on a recording\n"
"       mevitop replay FILE --json [--at T | --from T1 --to T2] [--maps]\n"
"       mevitop replay FILE --folded [--at T]\n"
"       mevitop replay FILE --listen ADDR:PORT   the web view, with a time slider\n"
"\n"
"Reads a recording made by `mevitop record -o FILE` (and FILE.1, the older half kept by\n"
"--max-size).  The view is live mode's with a time cursor on the status line (the\n"
"timeline bar is total resident over the recording): , . a frame back/forth, { } 10 s,\n"
"T go to a time, p play/pause, 1 2 3 speed 1x 10x 100x, m mark the frame, d the diff\n"
"layer (pages whose state changed since the mark, or the first frame).  --json prints\n"
"the frames as the NDJSON snapshots live mode printed then.  Times are seconds from the\n"
"start of the recording.\n"
"\n"
"  -j, --json        NDJSON on stdout\n"
"      --at T        only the frame that was current at T (the last one at or before T)\n"
"      --from T1     frames at or after T1\n"
"      --to T2       frames at or before T2\n"
"      --maps        mappings and runs in every frame (default: as the recorder's JSON)\n"
"      --folded      the folded first-touch stacks (a recording made with --stacks) of\n"
"                    the last frame, or of the one current at --at T, as mevitop\n"
"                    --folded prints them\n"
"      --listen ADDR:PORT\n"
"                    serve the web view on the recording (doc/web.md) until Ctrl-C;\n"
"                    a bind off loopback needs the token printed in the URL\n"
"  -h, --help        this help\n");
}


static bool parse_time(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return *s && !*end && !errno && isfinite(*v) && *v >= 0 && *v < 1e9;
}

static int parse(int argc, char **argv, struct replay_opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "at", required_argument, NULL, 'a' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "maps", no_argument, NULL, 'm' },
		{ "folded", no_argument, NULL, 'F' },
		{ "listen", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	memset(o, 0, sizeof(*o));
	subcmd_json(argc, argv, ":jh", longopts);
	while ((opt = getopt_long(argc, argv, ":jh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			o->json = true;
			break;
		case 'm':
			o->maps = true;
			break;
		case 'F':
			o->folded = true;
			break;
		case 'h':
			o->help = true;
			return 0;
		case 'l': {
			char why[WHY_LEN];

			if (listen_addr_parse(optarg, &o->listen, why, sizeof(why)))
				return subcmd_usage("replay", "%s", why);
			o->listen_set = true;
			break;
		}
		case 'a':
		case 'f':
		case 't': {
			double v;

			if (!parse_time(optarg, &v))
				return subcmd_usage("replay", "invalid time '%s': expected seconds from the start "
					     "of the recording", optarg);
			if (opt == 'a') {
				o->at = v;
				o->at_set = true;
			} else if (opt == 'f') {
				o->from = v;
				o->from_set = true;
			} else {
				o->to = v;
				o->to_set = true;
			}
			break;
		}
		default:
			return subcmd_getopt_error("replay", opt, argv);
		}
	}
	if (optind >= argc)
		return subcmd_usage("replay", "%s", "replay needs a recording: mevitop replay FILE --json");
	if (optind + 1 < argc)
		return subcmd_usage("replay", "unexpected argument '%s'", argv[optind + 1]);
	o->path = argv[optind];
	if (o->at_set && (o->from_set || o->to_set))
		return subcmd_usage("replay", "%s", "--at and --from/--to do not mix");
	if (o->from_set && o->to_set && o->to < o->from)
		return subcmd_usage("replay", "%s", "--to is before --from");
	if (o->folded && (o->json || o->from_set || o->to_set || o->maps))
		return subcmd_usage("replay", "%s", "--folded takes only --at");
	if (o->listen_set && (o->json || o->folded || o->at_set || o->from_set || o->to_set))
		return subcmd_usage("replay", "%s", "--listen serves the recording to a browser: "
				    "--json, --folded and the times do not apply");
	if (!o->json && !o->folded && (o->at_set || o->from_set || o->to_set || o->maps))
		return subcmd_usage("replay", "%s", "--at, --from, --to and --maps apply to --json");
	return 0;
}

static uint64_t at_ns(const struct rec_reader *r, double t)
{
	return rec_start_ns(r) + (uint64_t)llround(t * 1e9);
}

/* Prints frames [first, last]; a damaged frame ends the output with one line on stderr. */
static int print_frames(struct rec_reader *r, const struct replay_opts *o, size_t first,
			size_t last)
{
	size_t i, printed = 0;
	char why[WHY_LEN];

	for (i = first; i <= last; i++) {
		struct json_frame f;
		uint32_t flags;
		struct json_opts jo = { 0 };
		int err = rec_load(r, i, &f, &flags, why, sizeof(why));

		if (err) {
			/* With frames before it printed, a partial result (exit 0); else a failure. */
			if (printed)
				log_warn("%s: stopping at frame %zu of %zu: %s", o->path, i,
					 rec_frames(r), why);
			else
				log_err("%s: stopping at frame %zu of %zu: %s", o->path, i,
					rec_frames(r), why);
			return printed ? 0 : 1;
		}
		jo.maps = o->maps || (flags & REC_FLAG_MAPS);
		err = json_frame_write(stdout, &f, &jo);
		if (err == -EPIPE)
			return 0;
		if (err) {
			log_err("failed to write a snapshot: %s", strerror(-err));
			return 1;
		}
		printed++;
	}
	return 0;
}

/* --folded: the stacks of frame i, as live --folded prints them at exit. */
static int print_folded(struct rec_reader *r, const struct replay_opts *o, size_t i)
{
	struct json_frame f;
	uint32_t flags;
	char why[WHY_LEN];
	int err = rec_load(r, i, &f, &flags, why, sizeof(why));

	if (err) {
		log_err("%s: frame %zu of %zu: %s", o->path, i, rec_frames(r), why);
		return 1;
	}
	if (!f.stacks) {
		log_err("%s: recorded without --stacks: no first-touch stacks to fold", o->path);
		return 1;
	}
	err = stacks_write_folded(f.stacks, f.procs, f.n, stdout);
	if (err && err != -EPIPE) {
		log_err("failed to write the folded stacks: %s", strerror(-err));
		return 1;
	}
	return 0;
}

int replay_frame_memory(const struct json_frame *f, struct mem_summary *out)
{
	struct files_brief b;

	if (json_files_brief(f->files_text, &b) || !b.have_mem)
		return -ENOENT;
	*out = b.mem;
	return 0;
}

int replay_main(int argc, char **argv, int (*interactive)(struct rec_reader *r))
{
	struct replay_opts o;
	struct rec_reader *r = NULL;
	size_t first = 0, last;
	char why[WHY_LEN];
	int rc;

	rc = parse(argc, argv, &o);
	if (rc || o.help) {
		if (o.help)
			usage(stdout);
		return rc;
	}
	if (rec_open(o.path, &r, why, sizeof(why))) {
		log_err("%s", why);
		return 1;
	}
	if (rec_warning(r))	/* a cut-off tail: the frames before it replay */
		log_warn("%s", rec_warning(r));
	if (o.listen_set) {
		rc = replay_web(r, o.path, &o.listen);
		rec_close(r);
		return rc;
	}
	if (!o.json && !o.folded) {
		rc = interactive(r);
		rec_close(r);
		return rc;
	}
	last = rec_frames(r) - 1;
	if (o.at_set) {
		first = last = rec_find(r, at_ns(r, o.at));
		if (first == SIZE_MAX) {
			log_err("%s: no frame at %.3f s: the first is at %.3f s", o.path, o.at,
				(rec_info(r, 0)->mono_ns - rec_start_ns(r)) / 1e9);
			rec_close(r);
			return 1;
		}
	}
	if (o.folded) {
		rc = print_folded(r, &o, last);
		rec_close(r);
		return rc;
	}
	if (o.from_set) {
		size_t i = rec_find(r, at_ns(r, o.from) - 1);

		first = i == SIZE_MAX ? 0 : i + 1;
	}
	if (o.to_set) {
		size_t i = rec_find(r, at_ns(r, o.to));

		if (i == SIZE_MAX) {
			rec_close(r);
			return 0;
		}
		last = i;
	}
	rc = first <= last ? print_frames(r, &o, first, last) : 0;
	rec_close(r);
	return rc;
}
