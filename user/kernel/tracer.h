/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF side as seen from user space: open the skeleton, configure it, enable the programs
 * the feature probe chose, load, attach; then drain the ring buffer and read the maps.
 */
#ifndef MEVITOP_TRACER_H
#define MEVITOP_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "events.h"
#include "kernel/fault_sampler.h"
#include "kernel/kfeatures.h"

struct tracer;

struct tracer_opts {
	bool filter;			/* only processes in the target map */
	bool sample;			/* aggregate faults in the kernel (sample mode) */
	size_t ringbuf_bytes;		/* power of two, >= page size */
	uint64_t wakeup_bytes;		/* wake the consumer past this backlog */
	pid_t self;
	bool follow_children;		/* children of targets become targets (in BPF) */
	bool all_proc_events;		/* fork/exec/exit of every process (filters) */
	size_t chunk_map_entries;	/* 0: the default bound */
	bool stacks;			/* --stacks: user stacks at faults (bpf/stacks.bpf.h) */
	uint64_t stack_interval_ns;	/* one per (process, chunk) this often */
	bool stacks_only;		/* exact mode: the fault hooks send a stack at every
					 * fault and no fault records */
	uint64_t stack_sample_period;	/* >0: sample one page fault in this many through a
					 * perf software event (sample mode's --stacks) */
	uint64_t stack_duty_on_ms;	/* ... with the events open this long */
	uint64_t stack_duty_every_ms;	/* of every this long (user/kernel/fault_sampler.h) */
	bool task_iter;			/* load the task iterator (tracer_tasks) */
	bool fault_rings;		/* trace mode: user-mode faults in per-CPU rings
					 * (kernel/fring.h), where the fault hook allows */
};

/* Called for every record, in ring-buffer order. */
typedef int (*tracer_event_fn)(void *ctx, const void *data, size_t size);

int tracer_open(const struct features *f, const struct tracer_opts *o, tracer_event_fn fn,
		void *ctx, struct tracer **out, char *why, size_t whylen);
void tracer_close(struct tracer *t);
/* Trace mode's faults come through the per-CPU rings (kernel/fring.h). */
bool tracer_fault_rings(const struct tracer *t);
/* The task iterator (kernel/taskiter.h), or NULL when not loaded. */
struct taskiter *tracer_tasks(struct tracer *t);

int tracer_add_target(struct tracer *t, pid_t tgid);
int tracer_del_target(struct tracer *t, pid_t tgid);
bool tracer_is_target(struct tracer *t, pid_t tgid);

/* Waits up to timeout_ms for a wake-up; consumes nothing.  Returns >0 if woken. */
int tracer_wait(struct tracer *t, int timeout_ms);
/* Consumes what is available without waiting. */
int tracer_consume(struct tracer *t);

/* Failed reservations so far: total and per event kind (summed over CPUs). */
uint64_t tracer_lost(struct tracer *t, uint64_t per_kind[EV_KIND_MAX]);
/* Map bounds hit so far (chunk map, syscall stash, rss map, target map). */
uint64_t tracer_overflows(struct tracer *t);

/* Calls fn for each process that lost events since the last call, and forgets them. */
typedef void (*tracer_tgid_fn)(void *ctx, pid_t tgid, uint64_t count);
void tracer_drain_lost_tgids(struct tracer *t, tracer_tgid_fn fn, void *ctx);

/* Layout hook (tp_btf/mmap_lock_released): calls fn for each process whose mmap_lock was
 * released for writing since the last call, and clears its mark.  Returns how many. */
int tracer_drain_layout(struct tracer *t, tracer_tgid_fn fn, void *ctx);
/* Write releases the BPF program could not attribute to a process (no mm->owner). */
uint64_t tracer_layout_unowned(struct tracer *t);

/* The rss slot of tgid; -ENOENT if another process wrote it last (or none). */
int tracer_read_rss(struct tracer *t, pid_t tgid, struct rss_val *v);

/* Sample mode: hands each (process, chunk) fault aggregate to fn and removes it. */
typedef void (*tracer_chunk_fn)(void *ctx, const struct chunk_key *k, const struct chunk_val *v);
int tracer_drain_chunks(struct tracer *t, tracer_chunk_fn fn, void *ctx);
/* ... and each CPU's current chunk, reporting only the faults added since the last call. */
int tracer_read_chunk_slots(struct tracer *t, tracer_chunk_fn fn, void *ctx);

/* Sample mode's --stacks: its duty cycle so far; false without one. */
bool tracer_sampler_stats(struct tracer *t, struct fault_sampler_stats *out);

#endif
