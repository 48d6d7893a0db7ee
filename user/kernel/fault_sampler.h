/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sample mode's --stacks: a PERF_COUNT_SW_PAGE_FAULTS software event per CPU with a BPF
 * program on it (every `period`-th fault of the CPU runs it), open for `on_ms` of every
 * `every_ms` only.
 *
 * Why a duty cycle: the event taxes every page fault of every process while it is open,
 * whether or not it samples: perf_sw_event() walks the CPU's software-event list and, for
 * a sampling event, counts down its period with interrupts off (kernel/events/core.c,
 * perf_swevent_event).  bench/swevent_cost.c measured ~4-5% of a 1.6 us anonymous fault
 * for an event that never overflows, the same per task as per CPU, exclude_kernel or not.
 * An event that is open but disabled (PERF_EVENT_IOC_DISABLE) still costs ~1-2%: the
 * static key that guards perf_sw_event() stays on while any page-fault event exists.  So
 * between windows the events are closed, not disabled, and a fault costs nothing extra.
 */
#ifndef MEVITOP_FAULT_SAMPLER_H
#define MEVITOP_FAULT_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --stack-duty's default: measured by bench/run_bench.py --only stacks_cost (doc/overhead.md). */
#define STACK_DUTY_ON_MS_DEFAULT 200
#define STACK_DUTY_EVERY_MS_DEFAULT 1000

struct fault_sampler;

struct fault_sampler_stats {
	uint64_t windows;		/* windows opened so far (the first at start) */
	bool open;			/* a window is open now */
	uint64_t faults;		/* page faults the events counted in closed windows */
};

/* Opens the first window now (its errors are start-up errors: -errno and why); with
 * on_ms < every_ms a thread closes and reopens the events on the cycle, else they stay
 * open.  prog_fd: a BPF_PROG_TYPE_PERF_EVENT program. */
int fault_sampler_start(int prog_fd, uint64_t period, uint64_t on_ms, uint64_t every_ms,
			struct fault_sampler **out, char *why, size_t whylen);
void fault_sampler_stop(struct fault_sampler *s);	/* NULL is fine */
void fault_sampler_stats(struct fault_sampler *s, struct fault_sampler_stats *out);

#endif
