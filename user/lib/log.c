// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "log.h"

int log_verbosity;
static bool libbpf_quiet;
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

void log_quiet_libbpf(bool quiet)
{
	libbpf_quiet = quiet;
}

/* libbpf's messages (verifier logs included) only with -v: mevitop says what failed in its
 * own words, and a probe that may legitimately fail must not flood the terminal. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static char text[65536];
	size_t n;

	if (libbpf_quiet)
		return 0;
	if (level == LIBBPF_DEBUG && log_verbosity < 2)
		return 0;
	if (level != LIBBPF_DEBUG && log_verbosity < 1)
		return 0;
	vsnprintf(text, sizeof(text), fmt, ap);
	n = strlen(text);
	while (n && text[n - 1] == '\n')
		text[--n] = 0;
	if (log_sink) {
		log_sink(text);
		return 0;
	}
	/* libbpf starts its lines with "libbpf: " already. */
	return fprintf(stderr, "mevitop: %s\n", text);
}

void log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
