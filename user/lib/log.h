/* SPDX-License-Identifier: GPL-2.0 */
/* One logger for mevitop's messages and libbpf's: "mevitop: ..." on stderr. */
#ifndef MEVITOP_LOG_H
#define MEVITOP_LOG_H

#include <stdbool.h>

extern int log_verbosity;	/* 0 normal, 1 -v, 2 -vv */

/* While a probe may legitimately fail, libbpf's complaints are swallowed. */
/* libbpf's messages through this logger (user/kernel/libbpf_log.c): only with -v, and
 * none while quiet (a probe that may legitimately fail). */
void log_quiet_libbpf(bool quiet);
void log_setup_libbpf(void);

void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* -v */
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* -vv */

/* The UI owns the terminal while it runs: messages are queued for it instead of printed. */
/* A line that already has its words ("libbpf: ..."): "mevitop: " is added. */
void log_line(const char *text);

typedef void (*log_sink_fn)(const char *line);
void log_set_sink(log_sink_fn sink);

#endif
