/* SPDX-License-Identifier: GPL-2.0 */
/* inject_seize.h - seizing a process, and the /proc reads that decide it (the injection's
 * own; the API is inject.h). */
#ifndef MEVITOP_INJECT_SEIZE_H
#define MEVITOP_INJECT_SEIZE_H

#include "exact/inject_int.h"

void inj_copy_why(char *why, size_t whylen, const char *src);
/* The strictest seccomp mode of the target's threads (filters are per thread). */
void inj_read_seccomp(struct inj *in);
/* Sets PTRACE_O_SUSPEND_SECCOMP on a parked thread if suspension is on and allowed. */
void inj_suspend_parked(struct inj *in, int idx);
/* Opens /proc/PID/mem for the scratch page's writes. */
int inj_open_mem(struct inj *in);
/* Detaches every thread held (the release's last step, or a failed seize's). */
int inj_detach_all(struct inj *in);
/* Seizes and parks every thread of in->pid. */
int inj_seize_threads(struct inj *in);

#endif
