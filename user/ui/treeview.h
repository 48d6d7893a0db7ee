/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The process list's tree view, the part that is not the list's: the guide lines drawn
 * before a name (the folded processes are a ui/pid_set.h).  No curses here.
 */
#ifndef MEVITOP_UI_TREEVIEW_H
#define MEVITOP_UI_TREEVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "model/proctree.h"
#include "ui/pid_set.h"

/*
 * The guides before row r's name, as UTF-8 (utf8) or ASCII: two columns per level,
 * "│ " where an ancestor has later siblings, then "├─" or "└─" ('+' for the second
 * character when r is folded; a folded root is just "+").  At most maxcols columns: the
 * outermost levels are left out first, so the connector stays next to the name.
 */
void treeview_guides(char *buf, size_t len, const struct ptree_row *r, bool utf8, int maxcols);

#endif
