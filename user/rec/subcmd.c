// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include "lib/getopt_msg.h"
#include "lib/log.h"
#include "rec/subcmd.h"

static bool json_msgs;

bool subcmd_json(int argc, char **argv, const char *optstring, const struct option *longopts)
{
	json_msgs = getopt_finds(argc, argv, optstring, longopts, 'j');
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
