/* SPDX-License-Identifier: GPL-2.0 */
/*
 * First-touch stacks (--stacks): the user stacks the fault hook takes (bpf/stacks.bpf.h, at
 * most one per process and 2 MiB chunk per interval) are checked, named and interned here.
 * Each sample stands for the part of its mapping inside its chunk (a "touch range"), and the
 * first sample of a range keeps it.  Pages resident now are attributed to the stack that
 * first touched their range: exact when each mapping's part of a chunk is first touched by
 * one code path, and pages of ranges no sample fell in stay unattributed.
 *
 * Data only (plus the symbolizer): the engine feeds it under its lock, the JSON writer, the
 * folded-stack writer and the UI read it under the same lock.
 */
#ifndef MEVITOP_STACKS_STACKS_H
#define MEVITOP_STACKS_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "events.h"
#include "kernel/fault_sampler.h"
#include "model/model.h"
#include "stacks/symbolize.h"

/* How a stack's caller chain was found. */
enum stack_unwind {
	UNWIND_IP,		/* the faulting instruction only (no trustworthy frame pointers) */
	UNWIND_FP,		/* the frame-pointer chain, every return address checked */
};

struct stack {
	uint64_t hash;			/* of the frame names */
	uint16_t nframes;		/* >= 1 */
	enum stack_unwind unwind;
	struct sym_frame *frames;	/* innermost first */
	uint64_t samples;		/* how many samples had this stack */
};

/* The first sampled touch of one mapping's part of a 2 MiB chunk. */
struct stack_touch {
	uint64_t from, to;		/* pages: the mapping, clipped to the chunk, when sampled */
	uint32_t stack;			/* index into the table */
	uint32_t tid;
	uint64_t ts;			/* CLOCK_MONOTONIC ns */
	uint64_t addr;			/* the faulting address */
};

/* What one stack accounts for in a range: resident pages of the chunks it first touched. */
struct stack_share {
	const struct stack *stack;
	uint64_t pages;
	uint32_t tid;			/* of its earliest touch in the range */
	uint64_t ts;
};

struct stacks_stats {
	uint64_t samples;		/* stacks received */
	uint64_t unique;		/* distinct stacks */
	uint64_t ip_only;		/* samples whose caller chain could not be trusted */
	uint64_t dropped;		/* table full, out of memory, no such process, or a first
				 * touch the model could not place */
	uint64_t interval_ms;		/* one stack per chunk this often */
	uint64_t sample_period;		/* >0: statistical, one page fault in this many */
	bool exact;			/* exact mode: every first touch, each page its own */
	uint64_t first_touches;		/* exact: first touches the userfaultfd reported */
	uint64_t joined;		/* exact: of which with their fault's stack */
	uint64_t duty_on_ms;		/* sample mode: the perf events open this long */
	uint64_t duty_every_ms;		/* of every this long (0 0 elsewhere) */
	struct fault_sampler_stats sampler;	/* sample mode: its windows so far */
};

struct stacks;

/* sample_period: 0 when every fault is seen by the hook (trace, chunk), else the perf
 * event's period (sample mode).  exact: exact mode, where the userfaultfd reports every
 * first touch (stacks_on_first_touch) and the hook a stack for every fault (joined by
 * thread and page, user/stacks/fault_stacks.h); a touch then stands for its page alone. */
int stacks_new(uint64_t interval_ms, uint64_t sample_period, bool exact, struct stacks **out);
void stacks_free(struct stacks *s);
/* A stack record of process p.  NULL, not ready, or no mapping of p's model holds the
 * address (mapped since the layout was read: sample and chunk modes re-read it at ticks):
 * the record waits for stacks_on_layout.  Exited: dropped. */
void stacks_on_event(struct stacks *s, const struct proc *p, const struct ev_stack *ev);
/* p's layout was just read (reload or re-read): its records that waited for it are applied
 * now, in order; those still outside every mapping are dropped. */
void stacks_on_layout(struct stacks *s, const struct proc *p);
/* Exact mode: tid's first touch of addr in p, read at ts_ns (after its fault). */
void stacks_on_first_touch(struct stacks *s, const struct proc *p, uint32_t tid,
			   uint64_t addr, uint64_t ts_ns);
/* Exact mode: a first touch the model could not place (its process not read yet, or a
 * stale one whose range is rescanned): counted in first_touches, and dropped. */
void stacks_first_touch_unplaced(struct stacks *s);
/* p's address space was replaced (exec) or its model freed. */
void stacks_forget(struct stacks *s, pid_t pid);

/* Shares of the stacks that first touched ranges overlapping [start, end) (pages), most
 * pages first; *out is malloc'ed (free it), *n may be 0.  0 or -ENOMEM. */
int stacks_shares(struct stacks *s, const struct proc *p, uint64_t start, uint64_t end,
		  struct stack_share **out, size_t *n);
/* The first touch of the range holding page, or NULL. */
const struct stack_touch *stacks_touch_at(struct stacks *s, pid_t pid, uint64_t page);
const struct stack *stacks_get(struct stacks *s, uint32_t idx);
/* Folded stacks ("comm;outer;...;inner PAGES" per line) weighted by resident pages. */
int stacks_write_folded(struct stacks *s, struct proc *const *procs, size_t n, FILE *out);
const struct stacks_stats *stacks_stats(struct stacks *s);
/* Sample mode: the perf events' duty cycle (stacks_stats says it), and at each tick the
 * sampler's windows so far. */
void stacks_set_duty(struct stacks *s, uint64_t on_ms, uint64_t every_ms);
void stacks_set_sampler(struct stacks *s, const struct fault_sampler_stats *fs);
/* For recordings (user/rec/): the table's size, and a process's first touches (sorted by
 * `from`; *n may be 0). */
size_t stacks_count(const struct stacks *s);
void stacks_touches(struct stacks *s, pid_t pid, const struct stack_touch **t, size_t *n);
/* ... and replay's side: a table without a symbolizer, filled from a recording.
 * stacks_append copies st (its frames too); stacks_set_touches replaces pid's (sorted by
 * `from`, each stack index below stacks_count); stacks_clear_touches drops every process's.
 * 0, -ENOMEM, or -ENOSPC (table full) / -EINVAL (a bad index). */
int stacks_new_replay(struct stacks **out);
int stacks_append(struct stacks *s, const struct stack *st);
int stacks_set_touches(struct stacks *s, pid_t pid, const struct stack_touch *t, size_t n);
void stacks_clear_touches(struct stacks *s);
#define STACKS_MAX (1u << 20)	/* distinct stacks kept; later new ones are dropped */

/* "foo+0x1c SEP bar SEP main" (innermost first) into buf; returns buf. */
char *stacks_format(const struct stack *st, const char *sep, char *buf, size_t len);

#endif
