/* SPDX-License-Identifier: GPL-2.0 */
/* getopt for callers that say its errors themselves (opterr off, so that they follow --json
 * and start with "mevitop:", not argv[0]): a silent pass for one option, and the messages
 * in getopt's words. */
#ifndef MEVITOP_GETOPT_MSG_H
#define MEVITOP_GETOPT_MSG_H

#include <stdbool.h>
#include <stddef.h>

struct option;

/*
 * Whether option `want` is among argv's options, wherever it stands, found by a silent
 * getopt_long pass (opterr is left off: the caller says getopt's errors with getopt_msg).
 * The pass scans a copy, since getopt permutes what it scans: the real pass then sees the
 * arguments as given.  optind is reset for that pass.
 */
bool getopt_msg_finds(int argc, char **argv, const char *optstring, const struct option *longopts,
		      int want);

/* What getopt_long's return opt ('?', or ':' with a leading ':' in the option string) means,
 * for the option at argv[optind - 1], written into buf. */
void getopt_msg(char *buf, size_t len, int opt, char **argv);

#endif
