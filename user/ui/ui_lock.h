/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine lock with a timeout, for the UI thread.
 *
 * The engine holds its lock while it applies a batch (initial scans of new processes
 * included, which can take hundreds of milliseconds on a busy machine); a UI thread
 * blocked on it could neither draw nor read keys.  engine.h has no trylock, so a proxy
 * thread takes the lock on the UI's behalf: the UI asks and waits up to a timeout; if the
 * proxy gets the lock in time the UI reads the model while the proxy holds it, then says
 * done and the proxy releases it.  If the UI gave up, the proxy releases the lock as soon
 * as it gets it, so the engine never waits for the UI (nor for the terminal).
 */
#ifndef MEVITOP_UI_LOCK_H
#define MEVITOP_UI_LOCK_H

#include <stdbool.h>
#include "engine.h"

struct ui_lock;

struct ui_lock *ui_lock_new(struct engine *e);
/* Stops the proxy; the engine thread must be gone or running (the proxy may need the lock
 * once more to see that it must stop). */
void ui_lock_free(struct ui_lock *l);
/* true: the engine lock is held for the caller until ui_lock_release();
 * timeout_ms < 0 waits for as long as it takes. */
bool ui_lock_acquire(struct ui_lock *l, int timeout_ms);
void ui_lock_release(struct ui_lock *l);

#endif
