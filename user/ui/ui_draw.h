/* SPDX-License-Identifier: GPL-2.0 */
/* Pieces both views draw: title bar, header fields, footer, status line, prompt; numbers. */
#ifndef MEVITOP_UI_DRAW_H
#define MEVITOP_UI_DRAW_H

#include <stddef.h>
#include <stdint.h>
#include "ui/ui_state.h"

void draw_fmt_pages(char *buf, size_t len, uint64_t pages);	/* "1.5G", "12K", "0" */
void draw_fmt_rate(char *buf, size_t len, double per_sec);	/* "0", "12", "1.2k" */
/* Title bar: "mevitop VERSION │ what │ mode │ interval │ fps"; warn (may be NULL) in red. */
void draw_title(struct ui *ui, const char *what, const char *warn);
/* "events/s N  lost N  drift N" with non-zero losses highlighted; returns the next column. */
int draw_engine_stats(struct ui *ui, int row, int col);
/* The footer: the hints of the view's key table, between ui->global_keys' first (help) and
 * the rest of it. */
void draw_footer(struct ui *ui, const struct ui_keymap *view);
/* The prompt if one is open, else the newest status message. */
void draw_status_line(struct ui *ui, int row);
void draw_too_small(struct ui *ui);
/* Line editing for the prompt: returns 1 accepted (Enter), -1 cancelled (Esc), 0 editing. */
int draw_prompt_key(struct ui_prompt *p, int key);
/* The sort menu (F6) of a list: "Sort by", then n entries (name(i)), sel highlighted, cur
 * marked '*'; at row top. */
void draw_menu(struct ui *ui, int top, int n, const char *(*name)(int i), int sel, int cur);
/* A key while that menu is open: moves *sel (Up, Down); 1 chosen (Enter), -1 closed (Esc,
 * F6), 0 otherwise. */
int draw_menu_key(int *sel, int n, int key);
/* Text of a labelled field at (row, col), returns the next column: "label value  ". */
int draw_field(struct ui *ui, int row, int col, const char *label, const char *value,
	       enum ui_style value_style);

#endif
