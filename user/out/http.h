/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The metrics endpoint: GET (or HEAD) /metrics over HTTP, served by libmicrohttpd's own
 * thread.  Everything else is refused: other paths 404, other methods 405.  Requests are
 * bounded (HTTP_MEMORY_LIMIT per connection: a larger header is refused), so are
 * connections (HTTP_MAX_CONNECTIONS; more are closed at once) and idleness
 * (HTTP_IDLE_TIMEOUT_S: a client that connects and never sends is dropped).  The body is
 * gzip'ed when Accept-Encoding takes it.
 *
 * A scrape never makes the engine wait for it: it waits for the engine lock at most
 * HTTP_LOCK_WAIT_MS (engine_lock_timed); with the lock it only copies numbers
 * (out/metrics.h); the text is built and written after the lock is released.  If the
 * engine stays busy past the wait, the previous copy is served again, its age in
 * mevitop_snapshot_age_seconds.
 */
#ifndef MEVITOP_OUT_HTTP_H
#define MEVITOP_OUT_HTTP_H

#include "engine/engine.h"
#include "out/listen_addr.h"
#include "out/metrics.h"
#include "out/web.h"

#define HTTP_MAX_CONNECTIONS 32
#define HTTP_IDLE_TIMEOUT_S 10
#define HTTP_MEMORY_LIMIT (32 * 1024)	/* per connection: request line and headers */
#define HTTP_LOCK_WAIT_MS 500

struct metrics_http;

/* Binds addr and starts serving /metrics (from e, unless NULL) and the web view (web, the
 * caller's, unless NULL).  0, or -errno with why filled in. */
int http_start(struct engine *e, const struct listen_addr *addr,
		       const struct metrics_opts *o, struct web *web, struct metrics_http **out,
		       char *why, size_t whylen);
/* Stops the server (in-flight scrapes finish first); NULL is fine. */
void http_stop(struct metrics_http *h);

#endif
