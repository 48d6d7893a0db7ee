/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one loop that keeps an engine current: drain the ring buffer on the engine's timer
 * (engine_poll_ms), tick once per interval (stretched by --max-cpu's engine_interval_scale),
 * report the watched processes that exited, and hand each tick to the caller (a JSON line,
 * a recording's frame, the view's tick counter).  --json, record, serve and the view's
 * engine thread all run it.
 *
 * It stops on one flag, the engine's quitting flag (engine_set_quitting): the signals
 * installed by drive_signals_install() set it, and so does the view when the user quits.
 */
#ifndef MEVITOP_DRIVE_H
#define MEVITOP_DRIVE_H

#include <stdbool.h>
#include <stdint.h>
#include "engine/engine.h"

struct drive_opts {
	uint64_t interval_ms;
	uint64_t count;			/* stop after this many frames (0: no limit) */
	uint64_t duration_ms;		/* stop once this long has passed (0: no limit) */
	bool first_frame;		/* a frame at once, before the first interval */
	bool report_exits;		/* say so when a watched process exits (-p) */
	bool until_none_left;		/* stop once no watched process is alive (-p) */
	/* Each tick's frame, engine lock held; mono_ns is CLOCK_MONOTONIC before the tick.
	 * Non-zero stops the loop and is what engine_drive() returns. */
	int (*frame)(void *ctx, struct engine *e, uint64_t mono_ns);
	/* Stopped by a signal or a quit: one more tick, then this (NULL: none). */
	int (*last_frame)(void *ctx, struct engine *e, uint64_t mono_ns);
	void *ctx;
};

/* Runs until a stop; returns 0 or what a frame callback returned. */
int engine_drive(struct engine *e, const struct drive_opts *o);

/*
 * SIGINT, SIGTERM and SIGHUP set the engine's quitting flag (and remember the signal);
 * SIGPIPE is ignored (a write to a closed pipe says EPIPE); DRIVE_WAKE_SIGNAL does nothing,
 * so delivering it to a thread ends the wait it is in.  None has SA_RESTART: a stop
 * interrupts a blocking wait (a key, epoll) at once.  Idempotent.
 */
void drive_signals_install(void);
#define DRIVE_WAKE_SIGNAL SIGURG	/* ignored by default: a stray one harms nothing */
/* The stop signal received, or 0. */
int drive_stop_signal(void);

#endif
