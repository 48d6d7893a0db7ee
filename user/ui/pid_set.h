/* SPDX-License-Identifier: GPL-2.0 */
/* A small set of processes: the tree view's folded ones. */
#ifndef MEVITOP_UI_PID_SET_H
#define MEVITOP_UI_PID_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Processes, each its pid and the serial its struct proc has (0 unknown: the pid alone). */
struct pid_set {
	struct pid_set_entry {
		pid_t pid;
		uint64_t serial;
	} *v;
	size_t n, cap;
};

bool pid_set_has(const struct pid_set *s, pid_t pid);
/* 0 or -ENOMEM */
int pid_set_add(struct pid_set *s, pid_t pid, uint64_t serial);
void pid_set_del(struct pid_set *s, pid_t pid);
/* Is a process listed as (@pid, @serial) the one remembered as (pid, want)? */
bool pid_set_same(uint64_t want, uint64_t serial);
/* Keeps only the processes keep() says yes to (the fold set: the processes still running,
 * not a new one given the pid of one that exited unseen). */
void pid_set_retain(struct pid_set *s, bool (*keep)(pid_t pid, uint64_t serial, void *ctx),
		    void *ctx);
void pid_set_free(struct pid_set *s);

#endif
