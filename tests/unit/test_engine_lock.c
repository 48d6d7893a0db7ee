// SPDX-License-Identifier: GPL-2.0
/*
 * engine_lock_timed (user/engine/engine_core.c): the lock readers take when they must not stop
 * while the engine applies a long batch (the UI's frames, a metrics scrape).
 *
 * A second thread plays the engine thread: it holds the lock with table_lock() as the engine
 * does.  Every wait here is synchronised on state (the reader counted in `waiting`), not
 * on sleeps; the only timed thing is the timeout itself, and only its lower bound (the
 * wait lasted at least timeout_ms on CLOCK_MONOTONIC) is checked.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "engine/engine_int.h"

static struct engine *E;

struct holder {
	pthread_t tid;
	atomic_int release;		/* 1: let go now; 2: let go once a reader waits */
	atomic_bool held;
	bool saw_waiter;
};

static void *hold_main(void *arg)
{
	struct holder *h = arg;

	table_lock(E);
	atomic_store(&h->held, true);
	for (;;) {
		int r = atomic_load(&h->release);

		if (r == 1)
			break;
		if (r == 2 && atomic_load(&E->waiting) > 0) {
			h->saw_waiter = true;
			break;
		}
		sched_yield();
	}
	table_unlock(E);
	return NULL;
}

static void hold(struct holder *h, int release)
{
	memset(h, 0, sizeof(*h));
	atomic_init(&h->release, release);
	atomic_init(&h->held, false);
	assert_int_equal(pthread_create(&h->tid, NULL, hold_main, h), 0);
	while (!atomic_load(&h->held))
		sched_yield();
}

static uint64_t ms_since(uint64_t t0)
{
	return (engine_now_ns() - t0) / 1000000ULL;
}

static int setup(void **state)
{
	struct engine_opts o = { .mode = MODE_SAMPLE };
	struct features f = { 0 };

	(void)state;
	E = calloc(1, sizeof(*E));
	assert_non_null(E);
	return table_init(E, &o, &f, NULL, NULL);
}

static int teardown(void **state)
{
	(void)state;
	table_fini(E);
	free(E);
	return 0;
}

static void test_free_lock_is_taken_at_once(void **state)
{
	(void)state;
	assert_int_equal(engine_lock_timed(E, 0), 0);
	assert_int_equal(pthread_mutex_trylock(&E->lock), EBUSY);	/* we hold it */
	engine_unlock(E);
	assert_int_equal(engine_lock_timed(E, 1000), 0);
	engine_unlock(E);
	assert_int_equal(atomic_load(&E->waiting), 0);
}

/* The engine holds the lock: the reader gives up after its timeout, not before, holds
 * nothing, and is no longer counted as waiting (table_yield would hand over for nobody). */
static void test_busy_engine_times_out(void **state)
{
	struct holder h;
	uint64_t t0;

	(void)state;
	hold(&h, 0);
	t0 = engine_now_ns();
	assert_int_equal(engine_lock_timed(E, 30), -ETIMEDOUT);
	assert_true(ms_since(t0) >= 30);
	assert_int_equal(atomic_load(&E->waiting), 0);
	assert_int_equal(engine_lock_timed(E, 0), -ETIMEDOUT);
	atomic_store(&h.release, 1);
	pthread_join(h.tid, NULL);
	/* The lock is free again, so the timed-out waits took nothing. */
	assert_int_equal(engine_lock_timed(E, 0), 0);
	engine_unlock(E);
}

/* A reader waiting with time left gets the lock as soon as the engine lets go; while it
 * waits it is counted, which is what makes table_yield() hand the lock over mid-batch. */
static void test_waiter_gets_the_lock_when_released(void **state)
{
	struct holder h;

	(void)state;
	hold(&h, 2);
	assert_int_equal(engine_lock_timed(E, 20000), 0);
	assert_true(h.saw_waiter);
	assert_int_equal(atomic_load(&E->waiting), 0);
	engine_unlock(E);
	pthread_join(h.tid, NULL);
}

/* A deadline past the second boundary (tv_nsec carried into tv_sec) still waits. */
static void test_timeout_over_a_second_boundary(void **state)
{
	struct holder h;
	uint64_t t0;

	(void)state;
	hold(&h, 0);
	t0 = engine_now_ns();
	assert_int_equal(engine_lock_timed(E, 1999), -ETIMEDOUT);
	assert_true(ms_since(t0) >= 1999);
	atomic_store(&h.release, 1);
	pthread_join(h.tid, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_free_lock_is_taken_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy_engine_times_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waiter_gets_the_lock_when_released, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_timeout_over_a_second_boundary, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
