// SPDX-License-Identifier: GPL-2.0
/* The web view's requests (out/web.h): the token, the assets, the API. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "out/http_reply.h"
#include "out/json_buf.h"
#include "out/web_assets.h"
#include "out/web_int.h"

int web_token(char out[WEB_TOKEN_LEN + 1])
{
	unsigned char raw[WEB_TOKEN_LEN / 2];

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return -errno;
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

int web_new(const struct web_source *src, const char *token, struct web **out)
{
	struct web *w = calloc(1, sizeof(*w));
	struct timespec ts;

	if (!w)
		return -ENOMEM;
	w->src = *src;
	if (token)
		snprintf(w->token, sizeof(w->token), "%s", token);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	w->deltas.epoch = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	if (web_events_init(w)) {
		free(w);
		return -ENOMEM;
	}
	*out = w;
	return 0;
}

void web_quiesce(struct web *w)
{
	if (w)
		web_events_quiesce(w);
}

void web_free(struct web *w)
{
	if (!w)
		return;
	web_events_fini(w);
	web_deltas_free(&w->deltas);
	web_snap_free(&w->list);
	web_files_free(&w->files);
	free(w);
}

/* In time independent of where the first difference is: the token is a password. */
static bool same_token(const char *given, const char *want)
{
	unsigned char diff = 0;

	if (!given || strlen(given) != WEB_TOKEN_LEN)
		return false;
	for (size_t i = 0; i < WEB_TOKEN_LEN; i++)
		diff |= (unsigned char)(given[i] ^ want[i]);
	return !diff;
}

static bool allowed(const struct web *w, struct MHD_Connection *c)
{
	if (!w->token[0])
		return true;
	return same_token(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token"),
			  w->token) ||
	       same_token(MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "mevitop_token"),
			  w->token);
}

/* A query argument as a number: absent gives def; junk is an error (false). */
static bool arg_u64(struct MHD_Connection *c, const char *name, uint64_t def, uint64_t max,
		    uint64_t *v)
{
	const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
	char *end;

	*v = def;
	if (!s)
		return true;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end && *v <= max;
}

static bool arg_seconds(struct MHD_Connection *c, double *at)
{
	const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "at");
	char *end;

	*at = 0;
	if (!s)
		return true;
	errno = 0;
	*at = strtod(s, &end);
	return s != end && !*end && !errno && *at >= 0 && *at <= 1e9;
}

static enum MHD_Result json_reply(struct MHD_Connection *c, struct buf *b)
{
	if (b->oom) {
		free(b->p);
		return http_reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	return http_reply(c, MHD_HTTP_OK, "application/json", b->p, b->len, true, false);
}

static enum MHD_Result api_info(struct web *w, struct MHD_Connection *c)
{
	struct buf b = { 0 };

	json_buf_put(&b, "{\"replay\": %s, \"span\": %.6f, \"token\": %s}",
	       w->src.replay ? "true" : "false", w->src.span_s, w->token[0] ? "true" : "false");
	return json_reply(c, &b);
}

static void put_cost(struct buf *b, const char *name, const struct web_cost *c)
{
	json_buf_put(b, "\"%s\": {\"answered\": %" PRIu64 ", \"busy\": %" PRIu64
		     ", \"held_ns\": %" PRIu64 ", \"held_max_ns\": %" PRIu64 ", \"total_ns\": %"
		     PRIu64 ", \"total_max_ns\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"copies\": %"
		     PRIu64 ", \"unchanged\": %" PRIu64 "}", name, c->n, c->busy, c->held_ns,
		     c->held_max_ns, c->total_ns, c->total_max_ns, c->bytes, c->copies,
		     c->unchanged);
}

static enum MHD_Result api_stats(struct web *w, struct MHD_Connection *c)
{
	static const char *const names[WEB_KINDS] = { "list", "process", "events", "files",
							"file", "touch", "who" };
	struct buf b = { 0 };

	json_buf_put(&b, "{");
	for (int k = 0; k < WEB_KINDS; k++) {
		put_cost(&b, names[k], &w->cost[k]);
		json_buf_put(&b, ", ");
	}
	web_events_stats(w, &b);
	json_buf_put(&b, "}");
	return json_reply(c, &b);
}

static enum MHD_Result api_frame(struct web *w, struct MHD_Connection *c, bool process)
{
	uint64_t pid = 0, since;
	struct web_sent sent;
	struct buf b = { 0 };
	double at;
	int err;

	if (!arg_seconds(c, &at) || !arg_u64(c, "since", 0, UINT64_MAX, &since) ||
	    (process && (!arg_u64(c, "pid", 0, INT32_MAX, &pid) || !pid)))
		return http_reply_text(c, MHD_HTTP_BAD_REQUEST,
				       "bad query: pid=N (a positive number), since=G, at=SECONDS\n");
	err = web_answer(w, process ? WEB_PROCESS : WEB_LIST, (pid_t)pid, since, at, &b, &sent);
	if (err == -EBUSY || err == -EIO || err == -ESRCH)
		free(b.p);
	if (err == -EBUSY)
		return http_reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "engine busy, try again\n");
	if (err == -EIO)
		return http_reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "no frame to serve\n");
	if (err == -ESRCH)
		return http_reply_text(c, MHD_HTTP_NOT_FOUND, "no such process in the model\n");
	if (err)
		b.oom = true;
	return json_reply(c, &b);
}

/* An answer's error as its reply: 503 busy, 500 no frame or no memory. */
static enum MHD_Result answer_reply(struct MHD_Connection *c, int err, struct buf *b)
{
	if (err == -EBUSY || err == -EIO)
		free(b->p);
	if (err == -EBUSY)
		return http_reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "engine busy, try again\n");
	if (err == -EIO)
		return http_reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "no frame to serve\n");
	if (err)
		b->oom = true;
	return json_reply(c, b);
}

static enum MHD_Result api_files(struct web *w, struct MHD_Connection *c)
{
	const char *sort = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "sort");
	const char *filter = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "filter");
	uint64_t desc, limit;
	struct buf b = { 0 };
	double at;

	if (!arg_seconds(c, &at) || !arg_u64(c, "desc", 1, 1, &desc) ||
	    !arg_u64(c, "limit", WEB_FILES_LIMIT, 1000000, &limit) ||
	    (filter && strlen(filter) > 4096))
		return http_reply_text(c, MHD_HTTP_BAD_REQUEST, "bad query: sort=KEY, desc=0|1, "
				       "filter=TEXT, limit=N, at=SECONDS\n");
	return answer_reply(c, web_answer_files(w, sort, desc, filter, limit, at, &b), &b);
}

static enum MHD_Result api_file(struct web *w, struct MHD_Connection *c)
{
	uint64_t dev, ino;
	struct buf b = { 0 };
	double at;

	if (!arg_seconds(c, &at) || !arg_u64(c, "dev", UINT64_MAX, UINT64_MAX - 1, &dev) ||
	    !arg_u64(c, "ino", UINT64_MAX, UINT64_MAX - 1, &ino) || dev == UINT64_MAX ||
	    ino == UINT64_MAX)
		return http_reply_text(c, MHD_HTTP_BAD_REQUEST,
				       "bad query: dev=N&ino=N (as stat(2) gives them)\n");
	return answer_reply(c, web_answer_file(w, dev, ino, at, &b), &b);
}

static enum MHD_Result api_who(struct web *w, struct MHD_Connection *c)
{
	uint64_t pid, page;
	struct buf b = { 0 };
	int err;

	if (!arg_u64(c, "pid", 0, INT32_MAX, &pid) || !pid ||
	    !arg_u64(c, "page", UINT64_MAX, UINT64_MAX >> 12, &page) || page == UINT64_MAX)
		return http_reply_text(c, MHD_HTTP_BAD_REQUEST,
				       "bad query: pid=N&page=P (a page number)\n");
	err = web_answer_who(w, (pid_t)pid, page, &b);
	if (err == -ENOENT) {
		free(b.p);
		return http_reply_text(c, MHD_HTTP_NOT_FOUND,
				       "no such page of a watched process, or no --sharing\n");
	}
	return answer_reply(c, err, &b);
}

static enum MHD_Result api_touch(struct web *w, struct MHD_Connection *c)
{
	struct buf b = { 0 };
	uint64_t pid;
	double at;
	int err;

	if (!arg_seconds(c, &at) || !arg_u64(c, "pid", 0, INT32_MAX, &pid) || !pid)
		return http_reply_text(c, MHD_HTTP_BAD_REQUEST,
				       "bad query: pid=N (a positive number), at=SECONDS\n");
	err = web_answer_touch(w, (pid_t)pid, at, &b);
	if (err == -ENOENT || err == -ESRCH) {
		free(b.p);
		return http_reply_text(c, MHD_HTTP_NOT_FOUND, err == -ENOENT ?
				       "no first-touch stacks: start mevitop with --stacks\n" :
				       "no such process in the model\n");
	}
	return answer_reply(c, err, &b);
}

static enum MHD_Result api_events(struct web *w, struct MHD_Connection *c)
{
	uint64_t pid;

	if (!arg_u64(c, "pid", 0, INT32_MAX, &pid))
		return http_reply_text(c, MHD_HTTP_BAD_REQUEST,
				       "bad query: pid=N (a positive number) or none (the list)\n");
	return web_events_open(w, c, (pid_t)pid);
}

bool web_handle(struct web *w, struct MHD_Connection *c, const char *url,
		enum MHD_Result *ret)
{
	const struct web_asset *a = web_asset_find(url);
	bool api = !strncmp(url, "/api/", 5);

	if (!a && !api)
		return false;
	if (!allowed(w, c)) {
		*ret = http_reply_text(c, MHD_HTTP_FORBIDDEN,
				       "forbidden: open the URL mevitop printed, with its token\n");
		return true;
	}
	if (a && w->token[0] && !strcmp(url, "/")) {
		/* The page's own requests (app.js, app.css, the API) then carry the token. */
		char cookie[WEB_TOKEN_LEN + 64];

		snprintf(cookie, sizeof(cookie), "mevitop_token=%s; Path=/; HttpOnly; SameSite=Strict",
			 w->token);
		*ret = http_reply_header(c, MHD_HTTP_OK, a->type, (char *)a->data, a->len, false,
					 false, MHD_HTTP_HEADER_SET_COOKIE, cookie);
	} else if (a) {
		*ret = http_reply(c, MHD_HTTP_OK, a->type, (char *)a->data, a->len, false, false);
	}
	else if (!strcmp(url, "/api/info"))
		*ret = api_info(w, c);
	else if (!strcmp(url, "/api/stats"))
		*ret = api_stats(w, c);
	else if (!strcmp(url, "/api/list"))
		*ret = api_frame(w, c, false);
	else if (!strcmp(url, "/api/process"))
		*ret = api_frame(w, c, true);
	else if (!strcmp(url, "/api/files"))
		*ret = api_files(w, c);
	else if (!strcmp(url, "/api/file"))
		*ret = api_file(w, c);
	else if (!strcmp(url, "/api/who"))
		*ret = api_who(w, c);
	else if (!strcmp(url, "/api/touch"))
		*ret = api_touch(w, c);
	else if (!strcmp(url, "/api/events"))
		*ret = api_events(w, c);
	else
		*ret = http_reply_text(c, MHD_HTTP_NOT_FOUND, "not found\n");
	return true;
}
