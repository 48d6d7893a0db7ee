/* SPDX-License-Identifier: GPL-2.0 */
/* getopt's error messages, in getopt's words, for a caller that says them itself (opterr
 * off, so that they follow --json and start with "mevitop:", not argv[0]). */
#ifndef MEVITOP_GETOPT_MSG_H
#define MEVITOP_GETOPT_MSG_H

#include <stddef.h>

/* What getopt_long's return opt ('?', or ':' with a leading ':' in the option string) means,
 * for the option at argv[optind - 1], written into buf. */
void getopt_msg(char *buf, size_t len, int opt, char **argv);

#endif
