/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw stacks already named: a fault loop sends the same frames again and again (exact mode:
 * one record per fault), and naming them (libdwfl lookups, reads of the target's code) costs
 * microseconds a frame.  A direct-mapped cache from (process, raw frames, the layout they
 * fall in) to the stack table's index: a miss only costs the naming again, so a collision
 * simply replaces the slot.
 *
 * The layout signature is part of the key: the same addresses in a process whose code was
 * unmapped and something else mapped there (dlclose, dlopen) are a different stack, never
 * the old names.
 */
#ifndef MEVITOP_STACKS_RAW_CACHE_H
#define MEVITOP_STACKS_RAW_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include "events.h"
#include "model/model.h"

struct raw_cache;

int raw_cache_new(struct raw_cache **out);
void raw_cache_free(struct raw_cache *c);
/* The index stored for ev's frames in p, or -1. */
int64_t raw_cache_get(struct raw_cache *c, const struct proc *p, const struct ev_stack *ev);
void raw_cache_put(struct raw_cache *c, const struct proc *p, const struct ev_stack *ev,
		   uint32_t idx);
/* Drops pid's entries (exec, exit). */
void raw_cache_forget(struct raw_cache *c, pid_t pid);

#endif
