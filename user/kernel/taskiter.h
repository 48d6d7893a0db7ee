/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The task iterator (bpf/tasks.bpf.c) as seen from user space: one pass, one read() loop,
 * one struct task_rec per process with memory, sorted by tgid.  The tracer opens it (its
 * program is part of the one skeleton); the engine takes a pass per refresh.
 */
#ifndef MEVITOP_TASKITER_H
#define MEVITOP_TASKITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "kernel/procfs.h"
#include "tasks.h"

struct bpf_program;
struct taskiter;

/* Attaches prog (iter/task, whole system).  0 or -errno. */
int taskiter_open(struct bpf_program *prog, struct taskiter **out);
void taskiter_close(struct taskiter *ti);
/* Runs one pass: *recs (sorted by tgid, the iterator's order) stays valid until the next
 * pass or the close.  0 or -errno. */
int taskiter_pass(struct taskiter *ti, const struct task_rec **recs, size_t *n);
/* The record of tgid in a pass, or NULL (binary search). */
const struct task_rec *taskiter_find(const struct task_rec *recs, size_t n, pid_t tgid);
/* What /proc/PID/stat and statm say of the process (procfs_read_counters' struct); a
 * zombie main thread with live threads reads 'S' (alive, read through io_tid). */
void taskiter_counters(const struct task_rec *r, struct proc_counters *c);
/* /proc/PID/stat's state letter for a record's state bits ("RSDTtXZPI", fs/proc/array.c). */
char taskiter_state_char(uint32_t state);
/* /proc/PID/stat's start time (clock ticks since boot) of a record's start_ns. */
uint64_t taskiter_start_ticks(uint64_t start_ns);

#endif
