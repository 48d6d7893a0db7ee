/* SPDX-License-Identifier: GPL-2.0 */
/* One file's heatmap: its pages cached, dirty, in writeback or not (ui_fileheat.c). */
#ifndef MEVITOP_UI_FILEHEAT_H
#define MEVITOP_UI_FILEHEAT_H

#include <stdbool.h>
#include <stdint.h>
#include "ui/ui_state.h"

struct fileheat *fileheat_new(void);
void fileheat_free(struct fileheat *m);
/* Shows the file (dev, ino); Esc goes back to view back. */
void fileheat_show(struct ui *ui, uint64_t dev, uint64_t ino, enum ui_view back);
/* Shows the file at path (--file PATH): 0, or -errno when it cannot be stat'ed. */
int fileheat_show_path(struct ui *ui, const char *path, enum ui_view back);
/* Under the engine lock: the file's numbers and page sets when they changed, and who maps
 * the cursor's page. */
void fileheat_update(struct ui *ui);
void fileheat_draw(struct ui *ui);
bool fileheat_key(struct ui *ui, int key);

extern const struct ui_keymap fileheat_keymap;

#endif
