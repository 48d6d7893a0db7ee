/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exact mode's --stacks: the fault hooks send a stack for every fault of a watched process
 * (cfg_stacks_only), and the userfaultfd says which faults were first touches.  The two
 * meet here, by (process, thread, page): the thread that raised a userfaultfd message is
 * blocked on that page's fault, whose tracepoint ran before the message was even written,
 * so the stack normally waits here for its first touch.  Faults that were not first touches
 * (file pages, copy-on-write) leave stacks that are never asked for: the table is
 * direct-mapped, a newer stack takes an older one's slot.
 */
#ifndef MEVITOP_STACKS_FAULT_STACKS_H
#define MEVITOP_STACKS_FAULT_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "events.h"

struct fault_stacks;

int fault_stacks_new(struct fault_stacks **out);
void fault_stacks_free(struct fault_stacks *f);
void fault_stacks_put(struct fault_stacks *f, const struct ev_stack *ev);
/* Takes the stack of tid's fault on page (pages) in tgid, if it came no later than ts_ns
 * and no earlier than a second before (an older one belongs to an earlier fault): true and
 * *ev filled, the slot emptied. */
bool fault_stacks_take(struct fault_stacks *f, pid_t tgid, uint32_t tid, uint64_t page,
		       uint64_t ts_ns, struct ev_stack *ev);

#endif
