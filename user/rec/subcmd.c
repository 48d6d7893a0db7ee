// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include "lib/getopt_msg.h"
#include "lib/log.h"
#include "rec/subcmd.h"


bool subcmd_json(int argc, char **argv, const char *optstring, const struct option *longopts)
{
	bool on = getopt_msg_finds(argc, argv, optstring, longopts, 'j');

	log_set_json(on);
	return on;
}

int subcmd_usage(const char *cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return log_usage(cmd, msg);
}

int subcmd_getopt_error(const char *cmd, int opt, char **argv)
{
	char msg[512];

	getopt_msg(msg, sizeof(msg), opt, argv);
	return subcmd_usage(cmd, "%s", msg);
}
