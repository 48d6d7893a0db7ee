// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "getopt_msg.h"

void getopt_msg(char *buf, size_t len, int opt, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";

	if (opt == ':')
		snprintf(buf, len, "option '%s' requires an argument", arg);
	else if (!optopt)
		snprintf(buf, len, "unrecognized option '%s'", arg);
	else if (optopt < 256 && isprint(optopt) && strncmp(arg, "--", 2))
		snprintf(buf, len, "invalid option -- '%c'", optopt);
	else
		snprintf(buf, len, "option '%s' doesn't allow an argument", arg);
}
