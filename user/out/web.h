/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The web view on --listen (doc/web.md): `/` and its assets (out/web/, built into the
 * binary), and a read-only JSON API the page reads (pushed to it, live; polled, replaying):
 *
 *   GET /api/list                 the process list (the --json snapshot without mappings)
 *   GET /api/process?pid=N&since=G
 *                                 one process's mappings and page runs, only those that
 *                                 changed after generation G (0 or absent: all of them)
 *   GET /api/events[?pid=N]       live: the same answers pushed as server-sent events,
 *                                 one after each snapshot in which something changed
 *                                 (out/web_events.h); the list's as what changed
 *   GET /api/files, /api/file?dev=D&ino=I
 *                                 the page cache's files and one file's pages
 *                                 (out/web_files.h)
 *   GET /api/who?pid=N&page=P     --sharing: which other watched processes map the
 *                                 physical page pid's page P maps (the hover)
 *   GET /api/touch?pid=N          --stacks: who first touched pid's pages (the "who
 *                                 touched" layer and its hover: out/web_touch.h)
 *   GET /api/info                 live or replay, and a replay's time span
 *   GET /api/stats                what each kind of answer has cost: the source's hold (the
 *                                 engine lock, live) and the whole answer's time
 *   any of them with &at=T        a replay's frame current at T seconds
 *
 * Where the frames come from is a web_source: the live engine (out/web_live.c) or a
 * recording (rec/replay_web.c).  Off loopback, every request needs the token printed in the
 * URL at start-up (?token=..., or the cookie the page sets), else 403.
 */
#ifndef MEVITOP_OUT_WEB_H
#define MEVITOP_OUT_WEB_H

#include <stdbool.h>
#include <microhttpd.h>
#include "out/json.h"

struct share_who;			/* engine/engine.h */

/* A frame to serve: acquire fills f (the frame current at `at` seconds for a replay; the
 * live model, locked, for the engine), release gives it back; in between, the answer only
 * copies what it needs (out/web_snap.h).  0, -EBUSY (try again: 503) or -errno. */
struct web_source {
	void *ctx;
	bool replay;
	double span_s;			/* a replay's length: frames from 0 to span_s */
	int (*acquire)(void *ctx, double at, struct json_frame *f);
	void (*release)(void *ctx, struct json_frame *f);
	/* Has fn(arg) called after each new frame (live: after each engine tick's frame, in
	 * the driving thread; fn must not block), until called again with fn NULL.  NULL: no
	 * frame comes by itself (a replay), so nothing is streamed. */
	void (*watch)(void *ctx, void (*fn)(void *arg), void *arg);
	/* While acquired: the page cache's table (model/fcache.h), or NULL (none: --no-files,
	 * a replay, whose recordings carry no page sets of files).  NULL: always none. */
	struct fcache *(*fcache)(void *ctx);
	/* --sharing, the hover of a shared page: engine_share_who's answer (engine.h) and the
	 * page's map count as the last pass read it (share_page_count: 0 when not kept), while
	 * acquired (the reads are the engine's, under its lock, counted as the answer's hold).
	 * 0 or -ENOENT (no such process or page, or --sharing off).  NULL: never (a replay). */
	int (*share_who)(void *ctx, pid_t pid, uint64_t page, struct share_who *out,
			 uint64_t *count);
};

#define WEB_TOKEN_LEN 32		/* hex digits: 128 random bits */

struct web;

/* token: required from every client (a non-loopback bind), or NULL. */
int web_new(const struct web_source *src, const char *token, struct web **out);
void web_free(struct web *w);
/* Answers url if it is the web view's; false: not ours (the caller says 404). */
bool web_handle(struct web *w, struct MHD_Connection *c, const char *url,
		enum MHD_Result *ret);
/* Ends the open streams (each is resumed and ends at once): before the server stops, which
 * would otherwise wait for a suspended connection forever.  Later ones are refused. */
void web_quiesce(struct web *w);

/* A fresh random token (WEB_TOKEN_LEN hex digits and a NUL); 0 or -errno. */
int web_token(char out[WEB_TOKEN_LEN + 1]);

#endif
