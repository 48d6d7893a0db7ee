/* SPDX-License-Identifier: GPL-2.0 */
/* The process list (top-like), flat or as a tree (ui_proclist.c). */
#ifndef MEVITOP_UI_PROCLIST_H
#define MEVITOP_UI_PROCLIST_H

#include <stdbool.h>
#include <sys/types.h>
#include "ui/ui_state.h"

/* tree: start in the tree view (-p) */
struct proclist *proclist_new(bool tree);
void proclist_free(struct proclist *l);
void proclist_update(struct ui *ui);			/* under the engine lock */
void proclist_draw(struct ui *ui);
/* Enter asks for a heatmap through ui->open_pid (the loop opens it). */
bool proclist_key(struct ui *ui, int key);
/* The pid after (dir 1) or before (dir -1) pid in the list's order, or 0. */
pid_t proclist_next(struct ui *ui, pid_t pid, int dir);

extern const struct ui_keymap proclist_keymap;

#endif
