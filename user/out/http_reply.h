/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEVITOP_OUT_HTTP_REPLY_H
#define MEVITOP_OUT_HTTP_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <microhttpd.h>

/* Queues body (freed by libmicrohttpd when must_free) with its Content-Type; a 405 says
 * which methods are allowed.  MHD_NO closes the connection (no memory for a reply). */
enum MHD_Result http_reply(struct MHD_Connection *c, unsigned status, const char *type,
			   char *body, size_t len, bool must_free, bool gzipped);
/* The same with one more header (name: value). */
enum MHD_Result http_reply_header(struct MHD_Connection *c, unsigned status, const char *type,
				  char *body, size_t len, bool must_free, bool gzipped,
				  const char *name, const char *value);
/* A body of unknown length from read(cls, ...) (libmicrohttpd's content reader, asked for
 * up to block bytes at a time); done(cls) when the reply is over, or at once if it cannot
 * be made. */
enum MHD_Result http_reply_stream(struct MHD_Connection *c, const char *type, size_t block,
				  MHD_ContentReaderCallback read, void *cls,
				  MHD_ContentReaderFreeCallback done);
/* A short plain-text answer from a string that outlives the reply. */
enum MHD_Result http_reply_text(struct MHD_Connection *c, unsigned status, const char *msg);

#endif
