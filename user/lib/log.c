// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "log.h"

int log_verbosity;
static log_sink_fn log_sink;

void log_set_sink(log_sink_fn sink)
{
	log_sink = sink;
}

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	char line[4096];
	int n;

	n = snprintf(line, sizeof(line), "mevitop: %s", prefix);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (log_sink) {
		log_sink(line);
		return;
	}
	fprintf(stderr, "%s\n", line);
}

#define DEFINE_LOG(name, prefix, cond)			\
void name(const char *fmt, ...)				\
{							\
	va_list ap;					\
	if (!(cond))					\
		return;					\
	va_start(ap, fmt);				\
	vlog(prefix, fmt, ap);				\
	va_end(ap);					\
}

DEFINE_LOG(log_err, "", 1)
DEFINE_LOG(log_warn, "warning: ", 1)
DEFINE_LOG(log_info, "", log_verbosity >= 1)
DEFINE_LOG(log_debug, "", log_verbosity >= 2)

/* A finished line from another logger (libbpf's: user/kernel/libbpf_log.c). */
void log_line(const char *text)
{
	if (log_sink) {
		log_sink(text);
		return;
	}
	fprintf(stderr, "mevitop: %s\n", text);
}
