// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "lib/utf8.h"

size_t utf8_len(const unsigned char *s)
{
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong forms, surrogates and code points past U+10FFFF. */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

size_t utf8_json_escape(char *dst, size_t len, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t out = 0;

	for (; *p; ) {
		size_t n = utf8_len(p), k;
		char esc[8];
		const char *piece = esc;

		if (*p == '"' || *p == '\\') {
			esc[0] = '\\';
			esc[1] = *p;
			k = 2;
		} else if (*p == '\n' || *p == '\t' || *p == '\r') {
			esc[0] = '\\';
			esc[1] = *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
			k = 2;
		} else if (*p < 0x20 || *p == 0x7f) {
			k = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", *p);
		} else if (!n) {
			piece = "\\ufffd";
			k = 6;
		} else {
			piece = (const char *)p;
			k = n;
		}
		p += n ? n : 1;
		if (dst && out + k < len)
			memcpy(dst + out, piece, k);
		else if (dst && out < len)
			len = out + 1;	/* full: nothing after this point is written */
		out += k;
	}
	if (dst && len)
		dst[out < len ? out : len - 1] = 0;
	return out;
}
