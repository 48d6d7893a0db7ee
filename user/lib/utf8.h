/* SPDX-License-Identifier: GPL-2.0 */
/* Text mevitop did not write (a comm, a path, an argument) is bytes, not UTF-8. */
#ifndef MEVITOP_UTF8_H
#define MEVITOP_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1-4; 1 for NUL), or 0 for an invalid byte. */
size_t utf8_len(const unsigned char *s);

/*
 * s as the body of a JSON string (no quotes): '"' and '\\' escaped, control characters as
 * \n, \t, \r or \u00XX, DEL as \u007f, each byte that is not valid UTF-8 as \ufffd (JSON
 * text is Unicode; a comm cut at 15 bytes may end inside a character).  Writes at most
 * len - 1 bytes and a NUL, never half an escape; returns the length the whole text needs,
 * as snprintf does.
 */
size_t utf8_json_escape(char *dst, size_t len, const char *s);

#endif
