// SPDX-License-Identifier: GPL-2.0
/* The fold set (pid_set.h). */
#include <errno.h>
#include <stdlib.h>
#include "lib/array.h"
#include "ui/pid_set.h"

bool pid_set_has(const struct pid_set *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->n; i++)	/* a handful: folded by hand */
		if (s->v[i].pid == pid)
			return true;
	return false;
}

int pid_set_add(struct pid_set *s, pid_t pid, uint64_t serial)
{
	if (pid_set_has(s, pid))
		return 0;
	if (array_reserve(s->v, s->n, s->cap, 8))
		return -ENOMEM;
	s->v[s->n++] = (struct pid_set_entry){ .pid = pid, .serial = serial };
	return 0;
}

bool pid_set_same(uint64_t want, uint64_t serial)
{
	return !want || !serial || want == serial;
}

void pid_set_del(struct pid_set *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].pid == pid)
			s->v[i--] = s->v[--s->n];
}

void pid_set_retain(struct pid_set *s, bool (*keep)(pid_t pid, uint64_t serial, void *ctx),
		    void *ctx)
{
	size_t i, n = 0;

	for (i = 0; i < s->n; i++)
		if (keep(s->v[i].pid, s->v[i].serial, ctx))
			s->v[n++] = s->v[i];
	s->n = n;
}

void pid_set_free(struct pid_set *s)
{
	free(s->v);
	*s = (struct pid_set){ 0 };
}
