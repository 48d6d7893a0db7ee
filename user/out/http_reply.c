// SPDX-License-Identifier: GPL-2.0
/* Answers for libmicrohttpd's connections: one place sets the headers every reply has. */
#include <stdlib.h>
#include <string.h>
#include "out/http_reply.h"

enum MHD_Result http_reply(struct MHD_Connection *c, unsigned status, const char *type,
			   char *body, size_t len, bool must_free, bool gzipped)
{
	return http_reply_header(c, status, type, body, len, must_free, gzipped, NULL, NULL);
}

/* Read-only pages of our own: no sniffing, no framing by others, no script from anywhere
 * else, nothing kept by caches between two polls. */
static void add_headers(struct MHD_Response *r, unsigned status, const char *type)
{
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (status == MHD_HTTP_OK)	/* the body depends on these request headers */
		MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
}

enum MHD_Result http_reply_header(struct MHD_Connection *c, unsigned status, const char *type,
				  char *body, size_t len, bool must_free, bool gzipped,
				  const char *name, const char *value)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, must_free ? MHD_RESPMEM_MUST_FREE
								 : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (must_free)
			free(body);
		return MHD_NO;		/* MHD closes the connection */
	}
	add_headers(r, status, type);
	if (name)
		MHD_add_response_header(r, name, value);
	if (gzipped)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result http_reply_stream(struct MHD_Connection *c, const char *type, size_t block,
				  MHD_ContentReaderCallback read, void *cls,
				  MHD_ContentReaderFreeCallback done)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, block, read, cls, done);
	if (!r) {
		done(cls);
		return MHD_NO;
	}
	add_headers(r, MHD_HTTP_OK, type);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);	/* done(cls) once the connection lets go of it */
	return ret;
}

enum MHD_Result http_reply_text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return http_reply(c, status, "text/plain; charset=utf-8", (char *)msg, strlen(msg), false,
		     false);
}

