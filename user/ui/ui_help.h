/* SPDX-License-Identifier: GPL-2.0 */
/* The help screen and legend, drawn from the key tables (ui_help.c). */
#ifndef MEVITOP_UI_HELP_H
#define MEVITOP_UI_HELP_H

#include "ui/ui_state.h"

void help_draw(struct ui *ui);

#endif
