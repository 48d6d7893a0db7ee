/* SPDX-License-Identifier: GPL-2.0 */
/* The web view's JSON bodies (out/web_json.c says what each holds). */
#ifndef MEVITOP_OUT_WEB_JSON_H
#define MEVITOP_OUT_WEB_JSON_H

#include <stdint.h>
#include "out/json.h"
#include "out/json_buf.h"

#define WEB_SEEN_PROCS 8		/* processes whose mappings' last texts are kept */
#define WEB_HEAT_LEVELS 4		/* heat colours; a block below the first is not sent */
#define WEB_RECHECK 16			/* every mapping's text is written once in so many polls */

struct web_mark {
	uint64_t start;			/* the mapping's first page */
	uint64_t hash;			/* of the text it was last sent as */
	uint64_t gen;			/* when that text first appeared */
	uint64_t fp;			/* its fingerprint then (web_json.c) */
};

struct web_seen {
	pid_t pid;
	uint64_t serial;
	uint64_t used;			/* gen of the last request; 0: free */
	struct web_mark *m;		/* by start */
	size_t n;
};

/* What each recently viewed process's mappings looked like, for "only what changed". */
struct web_deltas {
	uint64_t epoch;			/* tells the page a restarted server from this one */
	uint64_t gen;			/* one more per process request */
	struct web_seen procs[WEB_SEEN_PROCS];
};

int web_json_list(const struct json_frame *f, struct buf *b);
/* -ESRCH: no ready process pid in f. */
int web_json_process(struct web_deltas *d, const struct json_frame *f, pid_t pid,
		     uint64_t since, struct buf *b);
void web_deltas_free(struct web_deltas *d);

#endif
