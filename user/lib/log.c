// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/log.h"
#include "lib/utf8.h"

int log_verbosity;
static log_sink_fn log_sink;
static bool log_json;

void log_set_sink(log_sink_fn sink)
{
	log_sink = sink;
}

void log_set_json(bool on)
{
	log_json = on;
}

/* The word before a text line's message and the key of its JSON object, per level. */
static const struct {
	const char *prefix;
	const char *key;
} levels[] = {
	[LOG_ERROR]	= { "", "error" },
	[LOG_WARNING]	= { "warning: ", "warning" },
	[LOG_NOTICE]	= { "", "notice" },
	[LOG_INFO]	= { "", "info" },
	[LOG_DEBUG]	= { "", "debug" },
};

/* {"KEY": "MSG"}: one object a line, written with one call so that lines of several
 * threads never interleave. */
static void put_json(enum log_level level, const char *msg)
{
	char small[8192], *buf = small;
	const char *key = levels[level].key;
	size_t size = strlen(key) + utf8_json_escape(NULL, 0, msg) + 10, n;

	if (size > sizeof(small) && !(buf = malloc(size))) {
		buf = small;	/* a long verifier log and no memory: its first part */
		size = sizeof(small);
	}
	n = (size_t)snprintf(buf, size, "{\"%s\": \"", key);
	utf8_json_escape(buf + n, size - n - 3, msg);	/* room left for "}\n */
	n += strlen(buf + n);
	memcpy(buf + n, "\"}\n", 4);
	fputs(buf, stderr);
	if (buf != small)
		free(buf);
}

void log_msg(enum log_level level, const char *msg)
{
	char line[4096];

	if (log_sink) {
		snprintf(line, sizeof(line), "mevitop: %s%s", levels[level].prefix, msg);
		log_sink(line);
	} else if (log_json) {
		put_json(level, msg);
	} else {
		fprintf(stderr, "mevitop: %s%s\n", levels[level].prefix, msg);
	}
}

static void vlog(enum log_level level, const char *fmt, va_list ap)
{
	char msg[4096];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_msg(level, msg);
}

#define DEFINE_LOG(name, level, cond)			\
void name(const char *fmt, ...)				\
{							\
	va_list ap;					\
	if (!(cond))					\
		return;					\
	va_start(ap, fmt);				\
	vlog(level, fmt, ap);				\
	va_end(ap);					\
}

DEFINE_LOG(log_err, LOG_ERROR, 1)
DEFINE_LOG(log_warn, LOG_WARNING, 1)
DEFINE_LOG(log_note, LOG_NOTICE, 1)
DEFINE_LOG(log_info, LOG_INFO, log_verbosity >= 1)
DEFINE_LOG(log_debug, LOG_DEBUG, log_verbosity >= 2)

int log_usage(const char *cmd, const char *msg)
{
	log_msg(LOG_ERROR, msg);
	if (!log_json)		/* with --json: one object, nothing else */
		fprintf(stderr, "Try 'mevitop%s%s --help'.\n", cmd ? " " : "", cmd ? cmd : "");
	return 2;
}
