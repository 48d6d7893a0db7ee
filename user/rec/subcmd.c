// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "getopt_msg.h"
#include "log.h"
#include "rec/subcmd.h"

static bool json_msgs;

bool subcmd_json(int argc, char **argv, const char *optstring, const struct option *longopts)
{
	/* getopt permutes what it scans (options first): the silent pass scans a copy, so
	 * the real pass sees the arguments as given (`replay F --at` is a missing argument). */
	char **copy = calloc((size_t)argc + 1, sizeof(*copy));
	int opt;

	opterr = 0;	/* mevitop says getopt's errors itself (subcmd_getopt_error) */
	optind = 0;	/* glibc: start over, state included */
	if (copy) {
		memcpy(copy, argv, (size_t)argc * sizeof(*copy));
		while ((opt = getopt_long(argc, copy, optstring, longopts, NULL)) != -1)
			json_msgs |= opt == 'j';
		free(copy);
	}
	optind = 0;
	log_set_json(json_msgs);
	return json_msgs;
}

int subcmd_usage(const char *cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_msg(LOG_ERROR, msg);
	if (!json_msgs)		/* with --json: one object, nothing else */
		fprintf(stderr, "Try 'mevitop %s --help'.\n", cmd);
	return 2;
}

int subcmd_getopt_error(const char *cmd, int opt, char **argv)
{
	char msg[512];

	getopt_msg(msg, sizeof(msg), opt, argv);
	return subcmd_usage(cmd, "%s", msg);
}
