/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the two lists (the process list, the Files view) do alike with keys (ui_listnav.c):
 * moving the selection, the filter prompt, and the F6 sort menu while it is open.
 */
#ifndef MEVITOP_UI_LISTNAV_H
#define MEVITOP_UI_LISTNAV_H

#include <stdbool.h>
#include <stddef.h>
#include "ui/ui_state.h"

/* The selection after a movement key (Up Dn PgUp PgDn Home End, the wheel) in a list of n
 * lines, visible of them on the screen; false when the key moved nothing (a mouse event
 * that is not the wheel). */
bool listnav_move(size_t *sel, size_t n, size_t visible, int key);
/* Opens the filter prompt on the list's filter text. */
void listnav_filter_open(struct ui *ui, const char *filter);
/*
 * A key while the list's sort menu (*menu) or its filter prompt is open: true when it went
 * there.  An accepted filter is copied to filter (len bytes); a sort chosen in the menu is
 * put in *chosen (else -1).
 */
bool listnav_modal_key(struct ui *ui, int key, bool *menu, int *menu_sel, int ncols, int *chosen,
		       char *filter, size_t len);

#endif
