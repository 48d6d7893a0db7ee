/* SPDX-License-Identifier: GPL-2.0 */
/* The web view's JSON bodies (out/web_json.c says what each holds). */
#ifndef MEVITOP_OUT_WEB_JSON_H
#define MEVITOP_OUT_WEB_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include "out/json_buf.h"
#include "out/web_snap.h"

#define WEB_SEEN_PROCS 8		/* processes whose last answers' copies are kept */
#define WEB_HEAT_LEVELS 4		/* heat colours; a block below the first is not sent */

struct web_mark {
	uint64_t start;			/* the mapping's first page */
	uint64_t gen;			/* when it last changed */
	uint64_t fp;			/* its fingerprint then (web_json.c) */
};

struct web_seen {
	pid_t pid;
	uint64_t serial;
	uint64_t used;			/* gen of the last request; 0: free */
	struct web_mark *m;		/* by start */
	size_t n;
	struct proc *base;		/* the copy the marks are of: the next answer's xor */
	uint64_t key;			/* the frame base was copied from (web_snap_key), */
	double wall;			/* and its times: the answers of that frame share */
	uint64_t mono_ns;		/* base instead of copying again (out/web_snap.h) */
	char mode[24];
	struct proc_shown shown;	/* what the process showed when base was copied */
};

/* What each recently viewed process's mappings looked like, for "only what changed". */
struct web_deltas {
	uint64_t epoch;			/* tells the page a restarted server from this one */
	uint64_t gen;			/* one more per process request */
	struct web_seen procs[WEB_SEEN_PROCS];
};

/* What an answer held, for a stream to tell "nothing new" (out/web_events.c). */
struct web_sent {
	size_t maps;			/* mappings written (a process) */
	uint64_t shape;			/* a hash of the rest but the time and the generation:
					 * equal shapes and no mapping, nothing changed */
};

/* A list stream's rows as its last event left the page's (out/web_events.c): what the
 * next event's diff is from. */
struct web_rows {
	struct web_row *r;		/* in pid order, as web_snap_list's */
	size_t n, cap;
	uint64_t seq;			/* the event that sent them; 0: none yet */
};

/* Which heat colour (0: none, 1..WEB_HEAT_LEVELS) a block's decayed value is: the page's
 * legend, a process's faults and a file's adds or evictions alike. */
int web_json_heat_level(float v);

int web_json_list(const struct web_snap *s, struct buf *b, struct web_sent *out);
/* A list stream's next event (doc/web.md): nothing when no row differs from was's; the
 * whole list ("event: list") when was has none yet or more than half the rows differ;
 * else "event: listdiff": the rows new (or whose share flag changed) whole, of the others
 * the fields whose text changed, and the pids gone.  was then holds s's rows.  0 or
 * -ENOMEM (was is forgotten: the next event is the whole list). */
int web_json_list_event(const struct web_snap *s, struct web_rows *was, struct buf *b);
void web_rows_free(struct web_rows *r);
/* s from web_snap_process; its copy is kept (s->p becomes NULL) as what the next answer
 * for that process compares with.  0 or -ENOMEM. */
int web_json_process(struct web_deltas *d, struct web_snap *s, uint64_t since,
		     struct buf *b, struct web_sent *out);
/* The answers of one frame share a copy: if p's base was copied from frame key, s becomes
 * that copy (shared, not s's to free) and true; else false and s is untouched. */
bool web_deltas_share(struct web_deltas *d, const struct proc *p, uint64_t key,
		      struct web_snap *s);
/* Live, a later frame: if p's base was copied when p showed what now says (model_shown),
 * s becomes that copy as of the frame head is of (its key, times and mode, which the
 * frame's other answers then share) and true; else false and s is untouched. */
bool web_deltas_unchanged(struct web_deltas *d, const struct proc *p,
			  const struct proc_shown *now, const struct web_snap *head,
			  struct web_snap *s);
void web_deltas_free(struct web_deltas *d);

#endif
