/* SPDX-License-Identifier: GPL-2.0 */
/* What the file sub-commands (replay, report) share: their usage-error line. */
#ifndef MEVITOP_REC_SUBCMD_H
#define MEVITOP_REC_SUBCMD_H

/* Prints "mevitop: <message>" and "Try 'mevitop CMD --help'." on stderr; returns 2. */
int subcmd_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
