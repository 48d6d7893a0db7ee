// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for user/exact/jobq.c, the control thread's queue: oldest first, a pid queued
 * once, a consumer thread woken by a push and, for good, by jobq_stop.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

#include "exact/jobq.h"

static void test_order_and_once(void **state)
{
	struct jobq q;
	pid_t pid;

	(void)state;
	jobq_init(&q);
	for (pid = 100; pid < 120; pid++)
		assert_int_equal(jobq_push(&q, pid), 0);
	assert_int_equal(jobq_push(&q, 105), 0);	/* already queued: not twice */
	assert_int_equal(q.n, 20);
	for (pid_t want = 100; want < 120; want++) {
		assert_true(jobq_pop(&q, &pid));
		assert_int_equal(pid, want);
	}
	assert_int_equal(jobq_push(&q, 105), 0);	/* popped: may come again */
	assert_true(jobq_pop(&q, &pid));
	assert_int_equal(pid, 105);
	jobq_destroy(&q);
}

struct consumer {
	struct jobq *q;
	pid_t got[4];
	int n;
};

static void *consume(void *arg)
{
	struct consumer *c = arg;
	pid_t pid;

	while (jobq_pop(c->q, &pid))
		c->got[c->n++] = pid;
	return NULL;
}

static void test_wakes_and_stops(void **state)
{
	struct consumer c = { 0 };
	struct jobq q;
	pthread_t t;
	pid_t pid;

	(void)state;
	jobq_init(&q);
	c.q = &q;
	assert_int_equal(pthread_create(&t, NULL, consume, &c), 0);
	assert_int_equal(jobq_push(&q, 7), 0);
	assert_int_equal(jobq_push(&q, 8), 0);
	for (;;) {			/* the consumer takes both, then waits */
		pthread_mutex_lock(&q.lock);
		bool empty = q.n == 0;
		pthread_mutex_unlock(&q.lock);
		if (empty)
			break;
		sched_yield();
	}
	jobq_stop(&q);
	assert_int_equal(pthread_join(t, NULL), 0);	/* stop ended its wait */
	assert_int_equal(c.n, 2);
	assert_int_equal(c.got[0], 7);
	assert_int_equal(c.got[1], 8);
	assert_int_equal(jobq_push(&q, 9), 0);
	assert_false(jobq_pop(&q, &pid));		/* stopped: never waits again */
	jobq_destroy(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_once),
		cmocka_unit_test(test_wakes_and_stops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
