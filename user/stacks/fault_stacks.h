/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exact mode's --stacks: the fault hooks send a stack for every fault of a watched process
 * (cfg_stacks_only), and the userfaultfd says which faults were first touches.  The two
 * meet here, by (process, thread, page): the thread that raised a userfaultfd message is
 * blocked on that page's fault, whose tracepoint ran before the message was even written,
 * so the stack normally waits here for its first touch.
 *
 * The engine drains the ring buffer before it applies the first touches read by then, so a
 * fault loop leaves thousands of stacks waiting at once: each waits as its (interned) stack
 * index, in a table probed over a few slots.  Faults that were not first touches (file
 * pages, copy-on-write) leave entries nobody asks for: a full probe window gives the oldest
 * slot to the newcomer.
 */
#ifndef MEVITOP_STACKS_FAULT_STACKS_H
#define MEVITOP_STACKS_FAULT_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct fault_stacks;

struct fault_stack {
	pid_t tgid;
	uint32_t tid;
	uint64_t page;
	uint64_t ts;		/* of the fault (CLOCK_MONOTONIC ns); 0: empty slot */
	uint64_t addr;		/* the faulting address */
	uint32_t stack;		/* index in the stack table */
};

int fault_stacks_new(struct fault_stacks **out);
void fault_stacks_free(struct fault_stacks *f);
void fault_stacks_put(struct fault_stacks *f, const struct fault_stack *fs);
/* Takes the stack of tid's fault on page in tgid, if it came no later than ts_ns and no
 * earlier than a second before (an older one belongs to an earlier fault): true and *out
 * filled, the slot emptied. */
bool fault_stacks_take(struct fault_stacks *f, pid_t tgid, uint32_t tid, uint64_t page,
		       uint64_t ts_ns, struct fault_stack *out);

#endif
