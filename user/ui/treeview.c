// SPDX-License-Identifier: GPL-2.0
/* The tree view's fold set and guide lines (treeview.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "ui/treeview.h"

bool pid_set_has(const struct pid_set *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->n; i++)	/* a handful: folded by hand */
		if (s->v[i].pid == pid)
			return true;
	return false;
}

int pid_set_add(struct pid_set *s, pid_t pid, uint64_t serial)
{
	if (pid_set_has(s, pid))
		return 0;
	if (array_reserve(s->v, s->n, s->cap, 8))
		return -ENOMEM;
	s->v[s->n++] = (struct pid_set_entry){ .pid = pid, .serial = serial };
	return 0;
}

bool pid_set_same(uint64_t want, uint64_t serial)
{
	return !want || !serial || want == serial;
}

void pid_set_del(struct pid_set *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].pid == pid)
			s->v[i--] = s->v[--s->n];
}

void pid_set_retain(struct pid_set *s, bool (*keep)(pid_t pid, uint64_t serial, void *ctx),
		    void *ctx)
{
	size_t i, n = 0;

	for (i = 0; i < s->n; i++)
		if (keep(s->v[i].pid, s->v[i].serial, ctx))
			s->v[n++] = s->v[i];
	s->n = n;
}

void pid_set_free(struct pid_set *s)
{
	free(s->v);
	*s = (struct pid_set){ 0 };
}

static void append(char *buf, size_t len, size_t *at, const char *s)
{
	int w = snprintf(buf + *at, len - *at, "%s", s);

	if (w > 0)
		*at = *at + (size_t)w < len ? *at + (size_t)w : len - 1;
}

void tree_guides(char *buf, size_t len, const struct ptree_row *r, bool utf8, int maxcols)
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
