// SPDX-License-Identifier: GPL-2.0
/* The tree view's guide lines (treeview.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "ui/treeview.h"

static void append(char *buf, size_t len, size_t *at, const char *s)
{
	int w = snprintf(buf + *at, len - *at, "%s", s);

	if (w > 0)
		*at = *at + (size_t)w < len ? *at + (size_t)w : len - 1;
}

void treeview_guides(char *buf, size_t len, const struct ptree_row *r, bool utf8, int maxcols)
{
	const char *vline = utf8 ? "\u2502 " : "| ", *tee = utf8 ? "\u251c" : "|",
		   *corner = utf8 ? "\u2514" : "`", *dash = utf8 ? "\u2500" : "-";
	uint32_t levels = r->depth ? r->depth - 1 : 0, first = 0, k;
	size_t at = 0;

	if (!len)
		return;
	buf[0] = 0;
	if (!r->depth) {
		if (r->folded && maxcols >= 1)
			append(buf, len, &at, "+");
		return;
	}
	if (maxcols < 2)
		return;
	if (2 * levels > (uint32_t)maxcols - 2)
		first = levels - ((uint32_t)maxcols - 2) / 2;
	for (k = first; k < levels; k++)
		append(buf, len, &at, k < PTREE_MAX_GUIDES && (r->more >> k & 1) ? vline : "  ");
	append(buf, len, &at, r->last ? corner : tee);
	append(buf, len, &at, r->folded ? "+" : dash);
}
