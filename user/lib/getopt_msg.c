// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/getopt_msg.h"

bool getopt_msg_finds(int argc, char **argv, const char *optstring, const struct option *longopts,
		      int want)
{
	char **copy = calloc((size_t)argc + 1, sizeof(*copy));
	bool found = false;
	int opt;

	opterr = 0;
	optind = 0;	/* glibc: start over, state included */
	if (copy) {
		memcpy(copy, argv, (size_t)argc * sizeof(*copy));
		while ((opt = getopt_long(argc, copy, optstring, longopts, NULL)) != -1)
			found |= opt == want;
		free(copy);
	}
	optind = 0;
	return found;
}

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
