/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --sharing in recordings (doc/recording-format.md, section 7): a process's last sharing
 * pass (model/share.h) -- its spans and the runs of pages of each shared class -- written
 * when it changed, so replay's JSON, list columns and sharing layer read a recording as
 * they read the engine.
 */
#ifndef MEVITOP_REC_SHARE_H
#define MEVITOP_REC_SHARE_H

#include <stdbool.h>
#include "model/share.h"
#include "rec/rec_bytes.h"

/* The section body for s (NULL: the process has none any more). */
void rec_put_share(struct rbuf *b, const struct share *s);
/* A section into *out (a new struct share, or NULL for "none"; the old one is the
 * caller's).  0, -EBADMSG (why says what) or -ENOMEM. */
int rec_get_share(struct rcur *c, struct share **out, char *why, size_t whylen);

/* Section 8, s's huge pages (thp) and the exact map counts of its pages mapped by 3 or
 * more (written after its section 7: 7's pass has them); rec_put_share_counts writes
 * nothing (returns false) when s has neither. */
bool rec_put_share_counts(struct rbuf *b, const struct share *s);
/* Into s (the pass the same process's section 7 gave; NULL: refused).  Each page must be
 * in the class its count names, ascending.  0, -EBADMSG or -ENOMEM. */
int rec_get_share_counts(struct rcur *c, struct share *s, char *why, size_t whylen);

#endif
