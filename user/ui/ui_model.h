/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the views draw, live or replayed: the engine's model under its lock, or the frame
 * under replay's time cursor (ui->replay; nothing to lock then).
 *
 * The UI thread takes the engine lock only to copy one frame's numbers, and waits for it
 * at most UI_LOCK_WAIT_MS a frame (engine_lock_timed): a busy engine makes frames show
 * older data, it never stops the UI reading keys and drawing.  Every wait and hold is
 * counted in struct ui for -v.
 */
#ifndef MEVITOP_UI_MODEL_H
#define MEVITOP_UI_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "model/model.h"
#include "ui/ui_state.h"

/* ui_model_lock waits for the engine lock; ui_model_trylock gives up after timeout_ms (false: the frame
 * shows the data it has). */
void ui_model_lock(struct ui *ui);
bool ui_model_trylock(struct ui *ui, int timeout_ms);
void ui_model_unlock(struct ui *ui);
/* "ENGINE BUSY" when the model could not be read for a while, else NULL. */
const char *ui_model_stale(const struct ui *ui);
/* Under ui_model_lock: processes sorted by pid, one process, the mode's name. */
struct proc **ui_model_procs(struct ui *ui, size_t *n);
struct proc *ui_model_find(struct ui *ui, pid_t pid);
const char *ui_model_mode(const struct ui *ui);

#endif
