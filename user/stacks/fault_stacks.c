// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include "model.h"
#include "stacks/fault_stacks.h"

/* A power of two.  Stacks wait here about one drain (~1 ms): ordered exact mode serves a
 * first touch in ~10-80 us, so a thread leaves at most a few dozen between two drains. */
#define FAULT_SLOTS 8192
#define MAX_WAIT_NS 1000000000ULL

struct fault_stacks {
	struct ev_stack *slot;		/* kind 0: empty */
};

int fault_stacks_new(struct fault_stacks **out)
{
	struct fault_stacks *f = calloc(1, sizeof(*f));

	if (f)
		f->slot = calloc(FAULT_SLOTS, sizeof(*f->slot));
	if (!f || !f->slot) {
		free(f);
		return -ENOMEM;
	}
	*out = f;
	return 0;
}

void fault_stacks_free(struct fault_stacks *f)
{
	if (!f)
		return;
	free(f->slot);
	free(f);
}

static size_t slot_of(pid_t tgid, uint32_t tid, uint64_t page)
{
	uint64_t h = ((uint64_t)(uint32_t)tgid << 32 | tid) * 0x9e3779b97f4a7c15ULL;

	h ^= page * 0xc2b2ae3d27d4eb4fULL;
	return (h ^ (h >> 29)) & (FAULT_SLOTS - 1);
}

void fault_stacks_put(struct fault_stacks *f, const struct ev_stack *ev)
{
	f->slot[slot_of(ev->tgid, ev->tid, ev->addr >> PAGE_SHIFT_4K)] = *ev;
}

bool fault_stacks_take(struct fault_stacks *f, pid_t tgid, uint32_t tid, uint64_t page,
		       uint64_t ts_ns, struct ev_stack *ev)
{
	struct ev_stack *s = &f->slot[slot_of(tgid, tid, page)];

	if (!s->kind || s->tgid != (uint32_t)tgid || s->tid != tid ||
	    s->addr >> PAGE_SHIFT_4K != page || s->ts > ts_ns || ts_ns - s->ts > MAX_WAIT_NS)
		return false;
	*ev = *s;
	s->kind = 0;
	return true;
}
