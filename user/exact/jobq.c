// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "lib/array.h"
#include "exact/jobq.h"

void jobq_init(struct jobq *q)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
}

void jobq_destroy(struct jobq *q)
{
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	free(q->v);
	q->v = NULL;
	q->n = q->cap = 0;
}

int jobq_push(struct jobq *q, pid_t pid)
{
	int err = 0;
	size_t i;

	pthread_mutex_lock(&q->lock);
	for (i = 0; i < q->n; i++)
		if (q->v[i] == pid)
			goto out;
	err = array_reserve(q->v, q->n, q->cap, 8);
	if (err)
		goto out;
	q->v[q->n++] = pid;
	pthread_cond_broadcast(&q->cond);
out:
	pthread_mutex_unlock(&q->lock);
	return err;
}

bool jobq_pop(struct jobq *q, pid_t *pid)
{
	bool got = false;

	pthread_mutex_lock(&q->lock);
	while (!q->stopped && !q->n)
		pthread_cond_wait(&q->cond, &q->lock);
	if (!q->stopped) {
		*pid = q->v[0];
		memmove(q->v, q->v + 1, --q->n * sizeof(*q->v));
		got = true;
	}
	pthread_mutex_unlock(&q->lock);
	return got;
}

void jobq_stop(struct jobq *q)
{
	pthread_mutex_lock(&q->lock);
	q->stopped = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}
