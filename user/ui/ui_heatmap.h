/* SPDX-License-Identifier: GPL-2.0 */
/* The heatmap view: frame building under the lock and keys (ui_heatmap.c), drawing
 * (ui_heatmap_draw.c). */
#ifndef MEVITOP_UI_HEATMAP_H
#define MEVITOP_UI_HEATMAP_H

#include <stdbool.h>
#include <sys/types.h>
#include "ui/ui_state.h"

struct heatmap *heatmap_new(void);
void heatmap_free(struct heatmap *m);
void heatmap_show(struct ui *ui, pid_t pid);
/* --layout: a style (kept for every process, as if its key was pressed) or HL_AUTO. */
void heatmap_set_layout(struct heatmap *m, int layout);
/* Builds the frame; locked: the caller holds the engine lock (without it only a frozen
 * picture can be rebuilt, otherwise the last frame stays). */
void heatmap_update(struct ui *ui, bool locked);
void heatmap_draw(struct ui *ui);
bool heatmap_key(struct ui *ui, int key);
/* The pause key: keep a private copy of the process (or drop it). */
void heatmap_pause(struct ui *ui, bool paused);

extern const struct ui_keymap heatmap_keymap;

#endif
