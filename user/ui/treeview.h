/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The process list's tree view, the parts that are not the list's: which processes the user
 * folded (a set of pids), and the guide lines drawn before a name.  No curses here.
 */
#ifndef MEVITOP_UI_TREEVIEW_H
#define MEVITOP_UI_TREEVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "model/proctree.h"

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

/*
 * The guides before row r's name, as UTF-8 (utf8) or ASCII: two columns per level,
 * "│ " where an ancestor has later siblings, then "├─" or "└─" ('+' for the second
 * character when r is folded; a folded root is just "+").  At most maxcols columns: the
 * outermost levels are left out first, so the connector stays next to the name.
 */
void tree_guides(char *buf, size_t len, const struct ptree_row *r, bool utf8, int maxcols);

#endif
