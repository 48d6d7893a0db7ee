// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "stacks/early_stacks.h"

/* 1.2 MiB at most: one stack per 2 MiB chunk per interval is a few per starting process. */
#define EARLY_MAX 4096

struct early_stacks {
	struct ev_stack *v;	/* a ring, allocated on first use */
	size_t head, n;		/* the oldest record, and how many */
};

static struct ev_stack *at(struct early_stacks *q, size_t i)
{
	return &q->v[(q->head + i) % EARLY_MAX];
}

int early_stacks_new(struct early_stacks **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void early_stacks_free(struct early_stacks *q)
{
	if (!q)
		return;
	free(q->v);
	free(q);
}

size_t early_stacks_put(struct early_stacks *q, const struct ev_stack *ev)
{
	size_t out = 0;

	if (!q->v && !(q->v = malloc(EARLY_MAX * sizeof(*q->v))))
		return 1;	/* no room: this one is the dropped one */
	if (q->n == EARLY_MAX) {
		q->head = (q->head + 1) % EARLY_MAX;
		q->n--;
		out = 1;
	}
	*at(q, q->n++) = *ev;
	return out;
}

/* Keeps the records not of tgid, in order; calls fn (if any) on the others. */
static size_t filter_out(struct early_stacks *q, pid_t tgid,
			 void (*fn)(void *ctx, const struct ev_stack *ev), void *ctx)
{
	size_t i, k = 0, gone = 0;

	for (i = 0; i < q->n; i++) {
		if (at(q, i)->tgid != (uint32_t)tgid) {
			*at(q, k++) = *at(q, i);
			continue;
		}
		gone++;
		if (fn)
			fn(ctx, at(q, i));
	}
	q->n = k;
	return gone;
}

void early_stacks_take(struct early_stacks *q, pid_t tgid,
		       void (*fn)(void *ctx, const struct ev_stack *ev), void *ctx)
{
	filter_out(q, tgid, fn, ctx);
}

size_t early_stacks_drop(struct early_stacks *q, pid_t tgid)
{
	return filter_out(q, tgid, NULL, NULL);
}
