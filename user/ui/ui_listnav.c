// SPDX-License-Identifier: GPL-2.0
/* The lists' shared key handling (ui_listnav.h). */
#include <curses.h>
#include <stdio.h>
#include <string.h>
#include "ui/ui_draw.h"
#include "ui/ui_listnav.h"

bool listnav_move(size_t *sel, size_t n, size_t visible, int key)
{
	size_t last = n ? n - 1 : 0, s = *sel;

	switch (key) {
	case KEY_UP:
		s = s ? s - 1 : 0;
		break;
	case KEY_DOWN:
		s = s < last ? s + 1 : last;
		break;
	case KEY_PPAGE:
		s = s > visible ? s - visible : 0;
		break;
	case KEY_NPAGE:
		s = s + visible < last ? s + visible : last;
		break;
	case KEY_HOME:
		s = 0;
		break;
	case KEY_END:
		s = last;
		break;
	case KEY_MOUSE: {
		MEVENT ev;

		if (getmouse(&ev) != OK)
			return false;
		if (ev.bstate & BUTTON4_PRESSED)
			s = s > 3 ? s - 3 : 0;
#ifdef BUTTON5_PRESSED
		else if (ev.bstate & BUTTON5_PRESSED)
			s = s + 3 < last ? s + 3 : last;
#endif
		break;
	}
	}
	*sel = s;
	return true;
}

void listnav_filter_open(struct ui *ui, const char *filter)
{
	ui->prompt.kind = PROMPT_FILTER;
	snprintf(ui->prompt.text, sizeof(ui->prompt.text), "%s", filter);
	ui->prompt.len = strlen(ui->prompt.text);
}

bool listnav_modal_key(struct ui *ui, int key, bool *menu, int *menu_sel, int ncols, int *chosen,
		       char *filter, size_t len)
{
	int r;

	*chosen = -1;
	if (*menu) {
		r = draw_menu_key(menu_sel, ncols, key);
		if (r > 0)
			*chosen = *menu_sel;
		if (r)
			*menu = false;
		return true;
	}
	if (ui->prompt.kind != PROMPT_FILTER)
		return false;
	r = draw_prompt_key(&ui->prompt, key);
	if (r > 0)
		snprintf(filter, len, "%s", ui->prompt.text);
	if (r)
		ui->prompt.kind = PROMPT_NONE;
	return true;
}
