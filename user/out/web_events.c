// SPDX-License-Identifier: GPL-2.0
/* The web view's server-sent events (out/web_events.h says what and why). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "out/http_reply.h"
#include "out/web_int.h"

#define STREAM_BLOCK (16 * 1024)	/* asked of the reader at most at a time */
#define KEEP_BUF (1 << 20)		/* a bigger event's buffer is not kept for the next */

struct web_stream {
	struct web *w;
	struct MHD_Connection *c;
	pid_t pid;			/* 0: the list */
	uint64_t since;			/* the generation its last answer was up to */
	uint64_t shape;			/* of its last event (web_sent) */
	struct web_rows rows;		/* the list: the rows its events have sent */
	bool sent_one;
	bool gone;			/* the process went: its last event is written */
	bool waiting;			/* suspended until the next frame (ev.lock) */
	uint64_t looked;		/* ev.frames when it last asked for an answer */
	uint64_t events;		/* written to it */
	uint64_t quiet_since_ns;	/* its last write */
	struct buf out;			/* the event being written, from off */
	size_t off;
};

/* The source has a new frame: every waiting stream looks at it.  In the ticking thread. */
static void on_frame(void *arg)
{
	struct web_events *ev = &((struct web *)arg)->ev;

	pthread_mutex_lock(&ev->lock);
	ev->frames++;
	for (size_t i = 0; i < WEB_MAX_STREAMS; i++) {
		struct web_stream *s = ev->open[i];

		if (s && s->waiting) {
			s->waiting = false;
			MHD_resume_connection(s->c);	/* libmicrohttpd's thread is woken */
		}
	}
	pthread_mutex_unlock(&ev->lock);
}

int web_events_init(struct web *w)
{
	if (pthread_mutex_init(&w->ev.lock, NULL))
		return -ENOMEM;
	if (w->src.watch) {
		w->src.watch(w->src.ctx, on_frame, w);
		w->ev.watching = true;
	}
	return 0;
}

void web_events_fini(struct web *w)
{
	if (w->ev.watching)
		w->src.watch(w->src.ctx, NULL, NULL);
	pthread_mutex_destroy(&w->ev.lock);
}

void web_events_quiesce(struct web *w)
{
	struct web_events *ev = &w->ev;

	pthread_mutex_lock(&ev->lock);
	ev->closing = true;
	for (size_t i = 0; i < WEB_MAX_STREAMS; i++) {
		struct web_stream *s = ev->open[i];

		if (s && s->waiting) {
			s->waiting = false;
			MHD_resume_connection(s->c);
		}
	}
	pthread_mutex_unlock(&ev->lock);
}

/* The next event into s->out, or nothing when nothing changed (a heartbeat after a while
 * of that).  0, or -ENOMEM. */
static int next_event(struct web_stream *s)
{
	struct web *w = s->w;
	struct web_sent sent;
	struct buf *b = &s->out;
	uint64_t now;
	size_t head;
	int err;

	if (s->pid)	/* the list writes its own: "list" whole or "listdiff" */
		json_buf_put(b, "event: process\ndata: ");
	head = b->len;
	if (w->ev.busy_frame == s->looked + 1) {
		/* One wait for the lock a frame: the server's one thread answers /metrics too. */
		w->cost[WEB_EVENTS].busy++;
		err = -EBUSY;
	} else if (!s->pid) {
		err = web_answer_list_event(w, &s->rows, b);
	} else {
		err = web_answer(w, WEB_EVENTS, s->pid, s->since, 0, b, &sent);
	}
	if (err == -EBUSY)
		w->ev.busy_frame = s->looked + 1;
	now = web_mono_ns();
	if (err == -ESRCH) {		/* the page goes back to polling, which says so */
		b->len = 0;
		json_buf_put(b, "event: gone\ndata: {\"pid\": %d}\n\n", s->pid);
		s->gone = true;
	} else if (err == -EBUSY || err == -EIO) {
		b->len = 0;		/* the next frame tries again */
	} else if (err) {
		return -ENOMEM;
	} else if (!s->pid) {
		s->sent_one = true;	/* the event, if any, is written whole */
	} else if (sent.maps || sent.shape != s->shape || !s->sent_one) {
		s->since = w->deltas.gen;
		s->shape = sent.shape;
		s->sent_one = true;
		/* A browser reconnecting sends the id back: only what it missed. */
		json_buf_put(b, "\nid: %" PRIu64 "-%" PRIu64 "\n\n", w->deltas.epoch, s->since);
	} else {
		s->since = w->deltas.gen;
		b->len = 0;
	}
	if (b->len > head || s->gone) {
		s->events++;
		w->ev.sent++;
	} else if (now - s->quiet_since_ns >= WEB_HEARTBEAT_S * 1000000000ULL) {
		b->len = 0;
		json_buf_put(b, ": quiet\n\n");		/* a comment: the page sees nothing */
		w->ev.heartbeats++;
	}
	if (b->len)
		s->quiet_since_ns = now;
	return b->oom ? -ENOMEM : 0;
}

/* The client closed its end (a page that went elsewhere): libmicrohttpd does not look at a
 * connection that only writes, so the stream would keep its place until its next write. */
static bool peer_closed(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	char byte;

	return ci && recv(ci->connect_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* libmicrohttpd asks for more of the body: the rest of the event being written, else the
 * next one, else the connection waits (suspended) for the next frame. */
static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct web_stream *s = cls;
	struct web_events *ev = &s->w->ev;
	size_t n;

	(void)pos;
	while (s->off == s->out.len) {
		s->off = s->out.len = 0;
		if (s->out.cap > KEEP_BUF) {
			free(s->out.p);
			s->out = (struct buf){ 0 };
		}
		if (s->gone)
			return MHD_CONTENT_READER_END_OF_STREAM;
		pthread_mutex_lock(&ev->lock);
		if (ev->closing) {
			pthread_mutex_unlock(&ev->lock);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		if (s->looked == ev->frames) {
			/* Returning 0 unsuspended would have libmicrohttpd ask again at once. */
			s->waiting = true;
			MHD_suspend_connection(s->c);
			pthread_mutex_unlock(&ev->lock);
			return 0;
		}
		s->looked = ev->frames;
		pthread_mutex_unlock(&ev->lock);
		if (peer_closed(s->c))
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (next_event(s))
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = s->out.len - s->off < max ? s->out.len - s->off : max;
	memcpy(out, s->out.p + s->off, n);
	s->off += n;
	return (ssize_t)n;
}

static void stream_done(void *cls)
{
	struct web_stream *s = cls;
	struct web_events *ev = &s->w->ev;

	pthread_mutex_lock(&ev->lock);
	for (size_t i = 0; i < WEB_MAX_STREAMS; i++)
		if (ev->open[i] == s)
			ev->open[i] = NULL;
	pthread_mutex_unlock(&ev->lock);
	free(s->out.p);
	web_rows_free(&s->rows);
	free(s);
}

/* "E-G" from Last-Event-ID: G if E is this server's epoch, else 0 (everything). */
static uint64_t resumed_since(struct web *w, struct MHD_Connection *c)
{
	const char *id = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
	uint64_t epoch, gen;
	int end = 0;

	if (!id || sscanf(id, "%" SCNu64 "-%" SCNu64 "%n", &epoch, &gen, &end) != 2 ||
	    id[end] || epoch != w->deltas.epoch || gen > w->deltas.gen)
		return 0;
	return gen;
}

enum MHD_Result web_events_open(struct web *w, struct MHD_Connection *c, pid_t pid)
{
	struct web_events *ev = &w->ev;
	struct web_stream *s;
	size_t slot = WEB_MAX_STREAMS;

	if (!ev->watching)
		return http_reply_text(c, MHD_HTTP_NOT_FOUND,
				       "no stream in a replay: ask /api/process?at=T\n");
	if (!(s = calloc(1, sizeof(*s))))
		return MHD_NO;
	pthread_mutex_lock(&ev->lock);
	for (size_t i = 0; i < WEB_MAX_STREAMS && !ev->closing; i++)
		if (!ev->open[i]) {
			slot = i;
			break;
		}
	if (slot < WEB_MAX_STREAMS) {
		ev->open[slot] = s;
		ev->opened++;
		s->looked = ev->frames - 1;	/* its first event at once */
	} else {
		ev->refused++;
	}
	pthread_mutex_unlock(&ev->lock);
	if (slot == WEB_MAX_STREAMS) {
		free(s);
		return http_reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				       "too many streams open: poll /api/process instead\n");
	}
	s->w = w;
	s->c = c;
	s->pid = pid;
	s->since = pid ? resumed_since(w, c) : 0;
	s->quiet_since_ns = web_mono_ns();
	return http_reply_stream(c, "text/event-stream", STREAM_BLOCK, stream_read, s,
				 stream_done);
}

void web_events_stats(struct web *w, struct buf *b)
{
	struct web_events *ev = &w->ev;
	bool first = true;

	pthread_mutex_lock(&ev->lock);
	json_buf_put(b, "\"streams\": {\"frames\": %" PRIu64 ", \"opened\": %" PRIu64
		     ", \"refused\": %" PRIu64 ", \"events\": %" PRIu64 ", \"heartbeats\": %"
		     PRIu64 ", \"open\": [", ev->frames, ev->opened, ev->refused, ev->sent,
		     ev->heartbeats);
	for (size_t i = 0; i < WEB_MAX_STREAMS; i++) {
		const struct web_stream *s = ev->open[i];

		if (!s)
			continue;
		json_buf_put(b, "%s{\"pid\": %d, \"looked\": %" PRIu64 ", \"events\": %" PRIu64
			     ", \"unsent\": %zu, \"waiting\": %s}", first ? "" : ", ", s->pid,
			     s->looked, s->events, s->out.len - s->off,
			     s->waiting ? "true" : "false");
		first = false;
	}
	json_buf_put(b, "]}");
	pthread_mutex_unlock(&ev->lock);
}
