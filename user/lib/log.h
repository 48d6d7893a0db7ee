/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One logger for mevitop's messages and libbpf's: "mevitop: ..." lines on stderr, or with
 * --json one JSON object a line, {"error": "..."}, {"warning": ...}, {"notice": ...},
 * {"info": ...} or {"debug": ...} (as bpftool's -j turns its errors into JSON).
 */
#ifndef MEVITOP_LOG_H
#define MEVITOP_LOG_H

#include <stdbool.h>

/* The one size of a "why" buffer: the reason a call gives, with the buffer's size, for its
 * caller to say (char why[WHY_LEN]; f(..., why, sizeof(why))).  A reason names a path or
 * two at most. */
#define WHY_LEN 1024

extern int log_verbosity;	/* 0 normal, 1 -v, 2 -vv */

enum log_level {
	LOG_ERROR,	/* mevitop fails: an exit code other than 0 follows */
	LOG_WARNING,	/* something works less well than it could ("warning: ...") */
	LOG_NOTICE,	/* news, always said: a watched process exited, serving on ADDR */
	LOG_INFO,	/* -v */
	LOG_DEBUG,	/* -vv */
};

void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* -v */
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* -vv */
/* A finished message, shown whatever the verbosity ("libbpf: ...": "mevitop: " is added). */
void log_msg(enum log_level level, const char *msg);

/* A usage error, said once for every command: the message, then "Try 'mevitop [CMD]
 * --help'." (without it under --json: one object, nothing else).  Returns 2, the exit
 * status of a usage error. */
int log_usage(const char *cmd, const char *msg);

/* --json: every message as a JSON object. */
void log_set_json(bool on);

/* The UI owns the terminal while it runs: messages are queued for it instead of printed. */
typedef void (*log_sink_fn)(const char *line);
void log_set_sink(log_sink_fn sink);

#endif
