/* SPDX-License-Identifier: GPL-2.0 */
/* The list views' memory summary: a bar of the machine's RAM and its legend (ui_memsum.c). */
#ifndef MEVITOP_UI_MEMSUM_H
#define MEVITOP_UI_MEMSUM_H

#include "ui/ui_fcache.h"
#include "ui/ui_state.h"

/* From this width on, the bar and its legend share one row. */
#define MEMSUM_ONE_ROW 160

/* The rows the summary takes at this width: 0 (m not valid), 1 or 2. */
int memsum_rows(const struct ui *ui, const struct uf_mem *m);
/* Draws it from row on; returns the rows used. */
int memsum_draw(struct ui *ui, int row, const struct uf_mem *m);

#endif
