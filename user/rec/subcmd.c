// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include "rec/subcmd.h"

int subcmd_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mevitop: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'mevitop %s --help'.\n", cmd);
	return 2;
}
