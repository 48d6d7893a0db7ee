// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>
#include "lib/log.h"
#include "out/gzip.h"
#include "out/http.h"
#include "out/http_reply.h"
#include "kernel/thread_signals.h"

struct metrics_http {
	struct MHD_Daemon *d;
	struct engine *e;		/* NULL: no metrics (a replay's web view) */
	struct web *web;		/* NULL: metrics only */
	struct metrics_opts opts;
	struct metrics_snap last;	/* the copy served when the engine is busy */
	bool have_last;
	struct metrics_memo *memo;	/* the last scrape's lines (NULL: none kept) */
};

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	log_info("metrics endpoint: %s", line);
}

/* A fresh copy of the model if the engine lets go of its lock in time, else the last one. */
static int refresh(struct metrics_http *h)
{
	struct metrics_snap fresh;
	uint64_t t0;
	int err;

	if (engine_lock_timed(h->e, HTTP_LOCK_WAIT_MS))
		return h->have_last ? 0 : -EBUSY;
	t0 = engine_now_ns();
	err = metrics_collect(h->e, &h->opts, &fresh);
	fresh.lock_hold_seconds = (engine_now_ns() - t0) / 1e9;
	engine_unlock(h->e);
	if (err) {
		metrics_snap_free(&fresh);
		return h->have_last ? 0 : err;
	}
	metrics_finish(&fresh, &h->opts);
	metrics_snap_free(&h->last);
	h->last = fresh;
	h->have_last = true;
	return 0;
}

static enum MHD_Result scrape(struct metrics_http *h, struct MHD_Connection *c)
{
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_ACCEPT);
	enum metrics_format fmt = metrics_negotiate(accept);
	bool gz = metrics_accepts_gzip(MHD_lookup_connection_value(
		c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING));
	size_t len, zlen;
	char *text, *ztext;
	int err;

	/* libmicrohttpd runs every request on its one thread: scrapes never overlap. */
	err = refresh(h);
	if (err == -EBUSY)
		return http_reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "engine busy, try again\n");
	if (err)
		return http_reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	h->last.age_seconds = (engine_now_ns() - h->last.taken_ns) / 1e9;
	if (metrics_format(&h->last, fmt, h->memo, &text, &len))
		return http_reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	if (gz) {
		err = gzip_compress(text, len, &ztext, &zlen);
		free(text);
		if (err)
			return http_reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
		text = ztext;
		len = zlen;
	}
	return http_reply(c, MHD_HTTP_OK, metrics_content_type(fmt), text, len, true, gz);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_size, void **req)
{
	struct metrics_http *h = cls;
	enum MHD_Result ret;

	/* Answered at the first call, before any body is read: nothing here takes one. */
	if (*req) {
		*upload_size = 0;
		return MHD_YES;
	}
	*req = h;
	/* Nothing here changes anything: every path is read-only. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return http_reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	/* libmicrohttpd leaves the body out of a HEAD reply itself. */
	if (h->e && !strcmp(url, "/metrics"))
		return scrape(h, c);
	if (h->web && web_handle(h->web, c, url, &ret))
		return ret;
	return http_reply_text(c, MHD_HTTP_NOT_FOUND, h->web ? "not found: mevitop serves / and /metrics\n"
							      : "not found: mevitop serves /metrics\n");
}

static int bind_socket(const struct listen_addr *a, int *out)
{
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(a->port) };
	struct sockaddr_in in4 = { .sin_family = AF_INET, .sin_port = htons(a->port) };
	bool v6 = a->family == AF_INET6;
	int fd, one = 1, err;

	memcpy(&in6.sin6_addr, a->addr, sizeof(in6.sin6_addr));
	memcpy(&in4.sin_addr, a->addr, sizeof(in4.sin_addr));
	fd = socket(a->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Restarting mevitop must not wait for the last run's TIME_WAIT sockets. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* [::]:PORT means IPv6 only, whatever net.ipv6.bindv6only says. */
	if (v6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if ((v6 ? bind(fd, (struct sockaddr *)&in6, sizeof(in6))
		: bind(fd, (struct sockaddr *)&in4, sizeof(in4))) ||
	    listen(fd, HTTP_MAX_CONNECTIONS * 2)) {
		err = -errno;
		close(fd);
		return err;
	}
	*out = fd;
	return 0;
}

int http_start(struct engine *e, const struct listen_addr *addr,
		       const struct metrics_opts *o, struct web *web, struct metrics_http **out,
		       char *why, size_t whylen)
{
	struct metrics_http *h = calloc(1, sizeof(*h));
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG |
			 MHD_ALLOW_SUSPEND_RESUME;	/* the web view's streams wait */
	sigset_t old;
	int fd = -1, err;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	h->e = e;
	h->web = web;
	h->memo = metrics_memo_new();	/* without it, every line is written each scrape */
	if (o)
		h->opts = *o;
	err = bind_socket(addr, &fd);
	if (err) {
		snprintf(why, whylen, "failed to listen on %s: %s", addr->text, strerror(-err));
		metrics_memo_free(h->memo);
		free(h);
		return err;
	}
	if (addr->family == AF_INET6)
		flags |= MHD_USE_IPv6;
	thread_signals_block(&old);
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEMORY_LIMIT,
				MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!h->d) {
		snprintf(why, whylen, "failed to start the metrics endpoint on %s", addr->text);
		close(fd);
		metrics_memo_free(h->memo);
		free(h);
		return -EIO;
	}
	*out = h;
	return 0;
}

void http_stop(struct metrics_http *h)
{
	if (!h)
		return;
	web_quiesce(h->web);		/* else the stop waits for a suspended stream */
	MHD_stop_daemon(h->d);		/* joins its thread and closes the socket */
	metrics_snap_free(&h->last);
	metrics_memo_free(h->memo);
	free(h);
}
