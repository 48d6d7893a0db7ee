/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GET /api/events?pid=N (and without pid: the list): the answers /api/process and
 * /api/list would give, pushed as server-sent events (text/event-stream) instead of
 * polled.  Each stream keeps its own `since`: after each new frame of the source (live:
 * each engine tick, told by engine_on_tick), it writes what changed since its last event
 -- an event only if something did (a mapping, the layout, a figure), with an `id` of
 * the epoch and generation, so a browser that reconnects (Last-Event-ID) is sent only
 * what it missed.  Nothing changed: nothing, and a comment line after WEB_HEARTBEAT_S of
 * silence (a vanished host is found by that write; libmicrohttpd's idle timeout does not
 * run while a stream is suspended).  A client that closed its end is found at the next
 * frame, before any copy.  The list's stream sends the whole list first, then only the
 * rows that changed and the pids gone ("listdiff", out/web_json.h's web_json_list_event;
 * doc/web.md has the format), each stream keeping the rows it last sent.
 *
 * With nothing to write, a stream's connection is suspended (libmicrohttpd's
 * MHD_suspend_connection: no polling, no busy loop) and each new frame resumes the
 * waiting ones.  At most WEB_MAX_STREAMS are open, a quarter of the server's connections,
 * so streams never take every connection from /metrics; one more is refused with 503 (the
 * page then polls).  A replay has no stream (404): its frames come when asked for.
 */
#ifndef MEVITOP_OUT_WEB_EVENTS_H
#define MEVITOP_OUT_WEB_EVENTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <microhttpd.h>
#include "out/json_buf.h"

#define WEB_MAX_STREAMS 8
#define WEB_HEARTBEAT_S 5		/* of silence, then a comment line: a vanished host is
					 * found, a proxy keeps the stream */

struct web;
struct web_stream;

struct web_events {
	pthread_mutex_t lock;		/* frames and each stream's `waiting`: the ticking
					 * thread's and libmicrohttpd's */
	uint64_t frames;		/* new frames the source told of */
	struct web_stream *open[WEB_MAX_STREAMS];
	bool closing;			/* web_quiesce: end them, take no more */
	bool watching;			/* the source calls web_events_frame */
	uint64_t busy_frame;		/* the last frame an answer found the engine busy at
					 * (+1, 0: none): the others skip it, not wait again */
	uint64_t opened, refused, sent, heartbeats;
};

int web_events_init(struct web *w);
void web_events_fini(struct web *w);
/* GET /api/events: a stream for pid (0: the list), or 404, 503. */
enum MHD_Result web_events_open(struct web *w, struct MHD_Connection *c, pid_t pid);
void web_events_quiesce(struct web *w);
/* /api/stats' "streams" member: the counts and each open stream. */
void web_events_stats(struct web *w, struct buf *b);

#endif
