/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The status line's messages: log.h lines from any thread (the engine thread's included),
 * kept for STATUS_SHOW_NS, the newest replacing the one before.
 */
#ifndef MEVITOP_UI_STATUS_H
#define MEVITOP_UI_STATUS_H

#include <stdbool.h>
#include <stddef.h>

/* log_set_sink()'s sink while the interactive view owns the terminal. */
void ui_status_sink(const char *line);
/* The newest message if it is recent: true with it in buf; is_error for warnings/failures. */
bool ui_status(char *buf, size_t len, bool *is_error);

#endif
