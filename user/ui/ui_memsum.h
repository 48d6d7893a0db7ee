/* SPDX-License-Identifier: GPL-2.0 */
/* The list views' memory summary: a bar of the machine's RAM and its legend (ui_memsum.c). */
#ifndef MEVITOP_UI_MEMSUM_H
#define MEVITOP_UI_MEMSUM_H

#include "ui_fcache.h"
#include "ui_state.h"

/* Draws rows row and row + 1; returns the rows used (0 when m is not valid). */
int memsum_draw(struct ui *ui, int row, const struct uf_mem *m);

#endif
