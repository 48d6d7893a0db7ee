// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include "stacks/fault_stacks.h"

/* Its own table, not lib/hashtab.h: fixed-size and lossy (an entry that finds no slot in
 * PROBE is dropped and counted; old ones expire), values inline for the per-record path.
 * A power of two (2 MiB): a drain of the 8 MiB ring buffer holds up to ~29,000 stack
 * records, and most of those wait here for the touches of the next drain. */
#define FAULT_SLOTS 65536
#define PROBE 16		/* slots an entry may sit in, from its hash on */
#define MAX_WAIT_NS 1000000000ULL

struct fault_stacks {
	struct fault_stack *slot;
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

static bool same_key(const struct fault_stack *s, pid_t tgid, uint32_t tid, uint64_t page)
{
	return s->ts && s->tgid == tgid && s->tid == tid && s->page == page;
}

void fault_stacks_put(struct fault_stacks *f, const struct fault_stack *fs)
{
	size_t h = slot_of(fs->tgid, fs->tid, fs->page), i, pick = h;

	for (i = 0; i < PROBE; i++) {
		struct fault_stack *s = &f->slot[(h + i) & (FAULT_SLOTS - 1)];

		if (!s->ts || same_key(s, fs->tgid, fs->tid, fs->page)) {
			pick = (h + i) & (FAULT_SLOTS - 1);
			break;
		}
		if (s->ts < f->slot[pick].ts)
			pick = (h + i) & (FAULT_SLOTS - 1);
	}
	f->slot[pick] = *fs;
}

bool fault_stacks_take(struct fault_stacks *f, pid_t tgid, uint32_t tid, uint64_t page,
		       uint64_t ts_ns, struct fault_stack *out)
{
	size_t h = slot_of(tgid, tid, page), i;

	/* Every slot of the window: a taken one is emptied, not tombstoned. */
	for (i = 0; i < PROBE; i++) {
		struct fault_stack *s = &f->slot[(h + i) & (FAULT_SLOTS - 1)];

		if (!same_key(s, tgid, tid, page))
			continue;
		if (s->ts > ts_ns || ts_ns - s->ts > MAX_WAIT_NS)
			return false;
		*out = *s;
		s->ts = 0;
		return true;
	}
	return false;
}
