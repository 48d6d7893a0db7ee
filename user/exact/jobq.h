/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control thread's work: processes to seize and give a userfaultfd (execed ones,
 * forked children in fast mode).  The engine side pushes, the control thread pops; a
 * queue of its own so that neither side calls into the other's file.
 */
#ifndef MEVITOP_EXACT_JOBQ_H
#define MEVITOP_EXACT_JOBQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct jobq {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pid_t *v;		/* oldest first */
	size_t n, cap;
	bool stopped;
};

void jobq_init(struct jobq *q);
void jobq_destroy(struct jobq *q);
/* Queues pid once (already queued: 0).  0, or -ENOMEM: the process gets no userfaultfd. */
int jobq_push(struct jobq *q, pid_t pid);
/* Waits for the oldest pid; false once jobq_stop was called. */
bool jobq_pop(struct jobq *q, pid_t *pid);
/* Wakes jobq_pop for good. */
void jobq_stop(struct jobq *q);

#endif
