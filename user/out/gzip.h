/* SPDX-License-Identifier: GPL-2.0 */
/* gzip for scrape bodies: Prometheus asks for it (Accept-Encoding: gzip), and per-process
 * text compresses ~10x, which matters when a fleet is scraped. */
#ifndef MEVITOP_OUT_GZIP_H
#define MEVITOP_OUT_GZIP_H

#include <stddef.h>

/* in[0, len) as one gzip member, malloc'ed.  0 or -ENOMEM. */
int gzip_compress(const char *in, size_t len, char **out, size_t *outlen);

#endif
