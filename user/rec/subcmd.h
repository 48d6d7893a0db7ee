/* SPDX-License-Identifier: GPL-2.0 */
/* What every command shares (the main one, whose cmd is NULL, and replay, report): --json's
 * messages, usage errors. */
#ifndef MEVITOP_REC_SUBCMD_H
#define MEVITOP_REC_SUBCMD_H

#include <getopt.h>
#include <stdbool.h>

/*
 * Whether --json is among the options (wherever it stands: a silent getopt pass); if so,
 * every message from here on is a JSON object (log_set_json), usage errors included.
 * optstring starts with ':' so that a missing argument can be told from an unknown option.
 */
bool subcmd_json(int argc, char **argv, const char *optstring, const struct option *longopts);

/* Prints "mevitop: <message>" and "Try 'mevitop [CMD] --help'." on stderr, or with --json the
 * one object {"error": "<message>"}; returns 2. */
int subcmd_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* getopt_long's '?' or ':' said in getopt's words, through subcmd_usage; returns 2. */
int subcmd_getopt_error(const char *cmd, int opt, char **argv);

#endif
