/* SPDX-License-Identifier: GPL-2.0 */
/* The Files view: every file in the page cache, flat or by directory (ui_files.c). */
#ifndef MEVITOP_UI_FILES_H
#define MEVITOP_UI_FILES_H

#include <stdbool.h>
#include "ui/ui_state.h"

struct files *files_new(void);
void files_free(struct files *f);
void files_update(struct ui *ui);			/* under the engine lock */
void files_draw(struct ui *ui);
/* Enter asks for a file's heatmap through ui->open_file (the loop opens it). */
bool files_key(struct ui *ui, int key);

extern const struct ui_keymap files_keymap;

#endif
