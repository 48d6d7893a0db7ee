// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "ui_lock.h"

enum proxy_state {
	PX_IDLE,		/* nobody wants the lock */
	PX_WANT,		/* the UI waits for it */
	PX_HELD,		/* the proxy holds it for the UI */
	PX_DONE,		/* the UI is done: release */
	PX_CANCEL,		/* the UI gave up: release as soon as it is taken */
	PX_QUIT,
};

struct ui_lock {
	struct engine *e;
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* CLOCK_MONOTONIC */
	enum proxy_state st;
};

static void *proxy_main(void *arg)
{
	struct ui_lock *l = arg;

	pthread_mutex_lock(&l->mu);
	for (;;) {
		while (l->st != PX_WANT && l->st != PX_QUIT)
			pthread_cond_wait(&l->cv, &l->mu);
		if (l->st == PX_QUIT)
			break;
		pthread_mutex_unlock(&l->mu);
		engine_lock(l->e);
		pthread_mutex_lock(&l->mu);
		if (l->st == PX_WANT) {
			l->st = PX_HELD;
			pthread_cond_broadcast(&l->cv);
			while (l->st == PX_HELD)
				pthread_cond_wait(&l->cv, &l->mu);
		}
		/* DONE, CANCEL, QUIT, or WANT again after a cancel: release first. */
		pthread_mutex_unlock(&l->mu);
		engine_unlock(l->e);
		pthread_mutex_lock(&l->mu);
		if (l->st == PX_DONE || l->st == PX_CANCEL) {
			l->st = PX_IDLE;
			pthread_cond_broadcast(&l->cv);
		}
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

struct ui_lock *ui_lock_new(struct engine *e)
{
	struct ui_lock *l = calloc(1, sizeof(*l));
	pthread_condattr_t ca;

	if (!l)
		return NULL;
	l->e = e;
	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&l->tid, NULL, proxy_main, l)) {
		pthread_cond_destroy(&l->cv);
		pthread_mutex_destroy(&l->mu);
		free(l);
		return NULL;
	}
	return l;
}

void ui_lock_free(struct ui_lock *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->st = PX_QUIT;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->tid, NULL);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

bool ui_lock_acquire(struct ui_lock *l, int timeout_ms)
{
	struct timespec dl;
	bool held;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&l->mu);
	for (;;) {
		/* Idle, or a cancelled request still pending in the proxy: want it (again). */
		if (l->st == PX_IDLE || l->st == PX_CANCEL) {
			l->st = PX_WANT;
			pthread_cond_broadcast(&l->cv);
		}
		if (l->st == PX_HELD)
			break;
		if (timeout_ms < 0)
			pthread_cond_wait(&l->cv, &l->mu);
		else if (pthread_cond_timedwait(&l->cv, &l->mu, &dl) == ETIMEDOUT)
			break;
	}
	held = l->st == PX_HELD;
	if (l->st == PX_WANT)
		l->st = PX_CANCEL;
	pthread_mutex_unlock(&l->mu);
	return held;
}

void ui_lock_release(struct ui_lock *l)
{
	pthread_mutex_lock(&l->mu);
	l->st = PX_DONE;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
}
