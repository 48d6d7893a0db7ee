// SPDX-License-Identifier: GPL-2.0
/* The engine's small public calls over its table (engine.h): the clock, the readers' lock,
 * the quit flag, the pid lookup.  The table itself is table.c, which calls these. */
#include <stdatomic.h>
#include <time.h>
#include "engine/engine_int.h"

uint64_t engine_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Readers (engine.h).  `waiting` counts them while they wait, so table_yield() lets them in. */
void engine_lock(struct engine *e)
{
	atomic_fetch_add(&e->waiting, 1);
	pthread_mutex_lock(&e->lock);
	atomic_fetch_sub(&e->waiting, 1);
}

/* CLOCK_MONOTONIC, as every time in the engine: a wall-clock step must neither cut the wait
 * short nor stretch it. */
int engine_lock_timed(struct engine *e, int timeout_ms)
{
	struct timespec dl;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	atomic_fetch_add(&e->waiting, 1);
	err = pthread_mutex_clocklock(&e->lock, CLOCK_MONOTONIC, &dl);
	atomic_fetch_sub(&e->waiting, 1);
	return -err;
}

void engine_unlock(struct engine *e)
{
	pthread_mutex_unlock(&e->lock);
}

static atomic_bool quitting;

void engine_set_quitting(bool on)
{
	atomic_store(&quitting, on);
}

bool engine_quitting(void)
{
	return atomic_load_explicit(&quitting, memory_order_relaxed);
}

struct proc *engine_find(struct engine *e, pid_t pid)
{
	struct proc *p;

	for (p = *table_bucket(e, pid); p; p = p->hnext)
		if (p->pid == pid)
			return p;
	return NULL;
}
