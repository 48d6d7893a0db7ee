// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <zlib.h>
#include "out/gzip.h"

/* 16 + 15: a gzip header and trailer around a 32 KiB-window deflate stream.  Level 1: the
 * text is repetitive enough that faster levels lose little, and it runs per scrape. */
#define GZIP_WINDOW_BITS (16 + 15)
#define GZIP_LEVEL 1

int gzip_compress(const char *in, size_t len, char **out, size_t *outlen)
{
	z_stream z = { 0 };
	uLong cap;
	char *buf;
	int rc;

	*out = NULL;
	*outlen = 0;
	if (deflateInit2(&z, GZIP_LEVEL, Z_DEFLATED, GZIP_WINDOW_BITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, len);
	buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = len;
	z.next_out = (Bytef *)buf;
	z.avail_out = cap;
	/* deflateBound() leaves room for the whole stream: one call finishes it. */
	rc = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	*outlen = z.total_out;
	return 0;
}
