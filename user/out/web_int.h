/* SPDX-License-Identifier: GPL-2.0 */
/* What the web view's files share (out/web.c, out/web_answer.c, out/web_events.c): not for
 * the rest. */
#ifndef MEVITOP_OUT_WEB_INT_H
#define MEVITOP_OUT_WEB_INT_H

#include <stdint.h>
#include "out/web.h"
#include "out/web_events.h"
#include "out/web_files.h"
#include "out/web_json.h"
#include "out/web_touch.h"

/* What answering has cost, per kind of answer (/api/stats shows it): how long the source
 * (the engine's lock, live) was held, and the whole answer's time. */
struct web_cost {
	uint64_t n, busy;		/* answered; refused with 503 (or skipped: a stream) */
	uint64_t held_ns, held_max_ns;	/* the source held: the engine stalled for as long */
	uint64_t total_ns, total_max_ns;	/* from acquiring to the body built */
	uint64_t bytes;
	uint64_t copies;		/* answers that copied the frame; the others of the
					 * same frame shared that copy (out/web_snap.h) */
	uint64_t unchanged;		/* answers of a later frame that found the process as
					 * its last copy left it: no copy (out/web_snap.h) */
};

enum web_kind { WEB_LIST, WEB_PROCESS, WEB_EVENTS, WEB_FILES, WEB_FILE, WEB_TOUCH, WEB_WHO,
		WEB_KINDS };

struct web {
	struct web_source src;
	char token[WEB_TOKEN_LEN + 1];	/* empty: none needed (loopback) */
	/* libmicrohttpd runs every answer, polled or streamed, on its one thread (out/http.c:
	 * MHD_USE_INTERNAL_POLLING_THREAD, no thread per connection), so what the answers
	 * keep between them needs no lock: */
	struct web_deltas deltas;	/* each viewed process's last copy (its base) */
	struct web_snap list;		/* the last list answer's rows, shared by the other
					 * answers of its frame (list.key) */
	struct web_cost cost[WEB_KINDS];
	struct web_events ev;		/* the open streams */
	struct web_files files;		/* the page cache's copy, shared by the viewers */
};

/* The answer for pid (0: the list) after generation since, at `at` (a replay), written to
 * b, its cost counted as kind's.  0, -EBUSY (the engine held its lock), -ESRCH (no such
 * process), -ENOMEM or -EIO (no frame). */
int web_answer(struct web *w, enum web_kind kind, pid_t pid, uint64_t since, double at,
	       struct buf *b, struct web_sent *sent);
/* A list stream's next event, written whole to b (out/web_json.h's web_json_list_event),
 * or nothing.  0, -EBUSY, -EIO or -ENOMEM. */
int web_answer_list_event(struct web *w, struct web_rows *was, struct buf *b);
/* /api/files and /api/file (out/web_files.h): the same, for the page cache.  0, -EBUSY,
 * -EIO (no frame) or -ENOMEM. */
int web_answer_files(struct web *w, const char *sort, bool desc, const char *filter,
		     size_t limit, double at, struct buf *b);
int web_answer_file(struct web *w, uint64_t dev, uint64_t ino, double at, struct buf *b);
/* /api/touch (out/web_touch.h): pid's first-touch stacks.  0, -EBUSY, -EIO, -ENOENT (no
 * --stacks), -ESRCH or -ENOMEM. */
int web_answer_touch(struct web *w, pid_t pid, double at, struct buf *b);
/* /api/who (out/web.h): who else maps pid's page.  0, -EBUSY, -EIO, -ENOENT (no such page
 * or process, or no --sharing: the source's share_who) or -ENOMEM. */
int web_answer_who(struct web *w, pid_t pid, uint64_t page, struct buf *b);
uint64_t web_mono_ns(void);

#endif
