/* SPDX-License-Identifier: GPL-2.0 */
/* libbpf's messages through mevitop's logger (lib/log.h): only with -v, and none while quiet
 * (a probe that may legitimately fail). */
#ifndef MEVITOP_LIBBPF_LOG_H
#define MEVITOP_LIBBPF_LOG_H

#include <stdbool.h>

void libbpf_log_quiet(bool quiet);
void libbpf_log_setup(void);

#endif
