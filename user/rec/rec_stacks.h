/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --stacks in recordings (doc/recording-format.md, sections 3 and 4): the stack table,
 * which only grows, goes into frames as the stacks added since the last frame; each
 * process's first touches (which stack first touched which mapping part of a 2 MiB chunk)
 * as a whole list, when it changed.  Replay rebuilds a struct stacks from them, so the JSON
 * writer's `first_touch` and the folded-stack writer read a recording as they read the
 * engine.
 */
#ifndef MEVITOP_REC_STACKS_H
#define MEVITOP_REC_STACKS_H

#include "rec/rec_bytes.h"
#include "stacks/stacks.h"

/* Section bodies: the stacks [first, stacks_count(s)), and pid's first touches (times
 * relative to the frame's, mono_ns). */
void rec_put_stacks(struct rbuf *b, struct stacks *s, size_t first);
void rec_put_touches(struct rbuf *b, struct stacks *s, pid_t pid, uint64_t mono_ns);

/* Appends a stacks section to *s (made when the section starts the table at 0); its first
 * index must be the table's size.  0, -EBADMSG (why says what) or -ENOMEM. */
int rec_get_stacks(struct rcur *c, struct stacks **s, char *why, size_t whylen);
/* A first-touch section into a new array (*t, *n; stack indices checked later, against
 * the table the whole frame builds). */
int rec_get_touches(struct rcur *c, uint64_t mono_ns, struct stack_touch **t, size_t *n,
		    char *why, size_t whylen);

#endif
