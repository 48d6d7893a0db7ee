/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stacks that arrive before the layout that holds their address was read: a process that
 * joins a filter (--comm, -u) or appears in a system-wide watch is modelled from /proc a
 * batch or a tick after its first faults, and sample and chunk modes re-read a layout that
 * changed (a new mapping) at the next tick.  The fault hook takes one stack per chunk per
 * interval, so a process that maps and faults a region at once would have its only stack
 * dropped.  They wait here, oldest first, until the layout is read (stacks_on_layout), and
 * are dropped when the process exits before that or when the queue is full (the oldest
 * goes first).
 */
#ifndef MEVITOP_STACKS_EARLY_STACKS_H
#define MEVITOP_STACKS_EARLY_STACKS_H

#include <stddef.h>
#include <sys/types.h>
#include "events.h"

struct early_stacks;

int early_stacks_new(struct early_stacks **out);
void early_stacks_free(struct early_stacks *q);
/* Queues ev; returns how many older records it pushed out (0 or 1). */
size_t early_stacks_put(struct early_stacks *q, const struct ev_stack *ev);
/* Calls fn for each of tgid's records, oldest first, and removes them. */
void early_stacks_take(struct early_stacks *q, pid_t tgid,
		       void (*fn)(void *ctx, const struct ev_stack *ev), void *ctx);
/* Removes tgid's records; returns how many. */
size_t early_stacks_drop(struct early_stacks *q, pid_t tgid);

#endif
