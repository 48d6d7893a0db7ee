// SPDX-License-Identifier: GPL-2.0
#include <signal.h>
#include "engine/drive.h"
#include "engine/engine_int.h"
#include "lib/log.h"

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
	engine_set_quitting(true);	/* an atomic store: async-signal-safe */
}

/* Its delivery to a thread ends the wait it is in (epoll_wait returns EINTR whatever
 * SA_RESTART says), so quitting does not wait out a 100 ms drain period. */
static void on_wake(int sig)
{
	(void)sig;
}

void drive_signals_install(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_wake;
	sigaction(DRIVE_WAKE_SIGNAL, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int drive_stop_signal(void)
{
	return stop_signal;
}

static void report_exit(void *ctx, const struct proc *p)
{
	const struct drive_opts *o = ctx;

	if (o->report_exits)
		log_note("process %d (%s) exited", p->pid, p->comm);
}

/* One tick: rates, reconciliation, exits, then the caller's frame, then engine_on_tick's
 * reader (after the frame: a --json line of a big process holds the lock a while). */
static int tick(struct engine *e, const struct drive_opts *o,
		int (*frame)(void *, struct engine *, uint64_t))
{
	uint64_t mono = engine_now_ns();
	int err = 0;

	engine_tick(e);
	engine_lock(e);
	engine_take_exits(e, report_exit, (void *)o);
	if (frame)
		err = frame(o->ctx, e, mono);
	engine_unlock(e);
	if (e->on_tick)
		e->on_tick(e->on_tick_arg);
	return err;
}

int engine_drive(struct engine *e, const struct drive_opts *o)
{
	uint64_t interval_ns = o->interval_ms * 1000000ULL, frames = 0, now;
	uint64_t start = engine_now_ns(), next = start + interval_ns;
	uint64_t end = o->duration_ms ? start + o->duration_ms * 1000000ULL : UINT64_MAX;
	int err;

	if (o->first_frame) {
		engine_lock(e);
		err = o->frame ? o->frame(o->ctx, e, start) : 0;
		engine_unlock(e);
		if (err)
			return err;
		frames++;
	}
	while (!engine_quitting() && (!o->count || frames < o->count) && next <= end) {
		now = engine_now_ns();
		if (now < next) {
			/* Rounded up: rounded down, the last millisecond before the tick was
			 * spent in engine_step(e, 0) calls back to back. */
			uint64_t left_ms = (next - now + 999999ULL) / 1000000ULL;
			/* Drain often whatever the interval: records carry no wake-up (see
			 * bpf/common.bpf.h), so the ring buffer is emptied on this timer. */
			int poll = engine_poll_ms(e);

			engine_step(e, left_ms < (uint64_t)poll ? (int)left_ms : poll);
			continue;
		}
		err = tick(e, o, o->frame);
		if (err)
			return err;
		frames++;
		/* --max-cpu may stretch the interval. */
		next += interval_ns * engine_interval_scale(e);
		if (next < now)
			next = now + interval_ns * engine_interval_scale(e);
		if (o->until_none_left && !engine_alive_targets(e)) {
			log_note("no watched process is left");
			return 0;
		}
	}
	/* Stopped (q, a signal, run's CMD ending): whatever happened since the last tick
	 * (first touches still on their way among them) gets one last frame. */
	if (engine_quitting() && o->last_frame)
		return tick(e, o, o->last_frame);
	return 0;
}
