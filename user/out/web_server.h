/* SPDX-License-Identifier: GPL-2.0 */
/* --listen: the metrics endpoint and the web view on one port, started and stopped as one. */
#ifndef MEVITOP_OUT_WEB_SERVER_H
#define MEVITOP_OUT_WEB_SERVER_H

#include "out/http.h"
#include "out/web.h"

struct web_server {
	struct web *web;
	struct metrics_http *http;
};

/*
 * Serves /metrics from e (unless NULL) and the web view from src (unless NULL) on a.  Off
 * loopback the web view needs a fresh token, printed in its URL with a warning of what it
 * exposes.  0, or -errno with why filled in.
 */
int web_server_start(struct engine *e, const struct listen_addr *a, const struct metrics_opts *o,
		     const struct web_source *src, struct web_server *out, char *why,
		     size_t whylen);
void web_server_stop(struct web_server *s);

#endif
