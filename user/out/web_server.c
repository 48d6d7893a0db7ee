// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "lib/log.h"
#include "out/web_server.h"

int web_server_start(struct engine *e, const struct listen_addr *a, const struct metrics_opts *o,
		     const struct web_source *src, struct web_server *out, char *why,
		     size_t whylen)
{
	char token[WEB_TOKEN_LEN + 1] = "";
	bool open_to_all = !listen_addr_loopback(a);
	int err;

	memset(out, 0, sizeof(*out));
	if (src) {
		if (open_to_all && (err = web_token(token))) {
			snprintf(why, whylen, "no random token for the web view: %s", strerror(-err));
			return err;
		}
		err = web_new(src, open_to_all ? token : NULL, &out->web);
		if (err) {
			snprintf(why, whylen, "web view: %s", strerror(-err));
			return err;
		}
	}
	err = http_start(e, a, o, out->web, &out->http, why, whylen);
	if (err) {
		web_free(out->web);
		out->web = NULL;
		return err;
	}
	if (e)
		log_note("serving metrics on http://%s/metrics", a->text);
	if (src && open_to_all) {
		log_warn("%s is not loopback: whoever reaches it with the token sees process "
			 "names, paths and memory maps", a->text);
		log_note("web view on http://%s/?token=%s", a->text, token);
	} else if (src) {
		log_note("web view on http://%s/", a->text);
	}
	return 0;
}

void web_server_stop(struct web_server *s)
{
	http_stop(s->http);	/* first: no request is using the web view after it */
	web_free(s->web);
	memset(s, 0, sizeof(*s));
}
