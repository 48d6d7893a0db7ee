/* SPDX-License-Identifier: GPL-2.0 */
/* Helper threads (the UI's engine thread, the metrics server's) take no stop or terminal
 * signal: those interrupt the main thread's wait, so its loop can leave normally. */
#ifndef MEVITOP_THREAD_SIGNALS_H
#define MEVITOP_THREAD_SIGNALS_H

#include <signal.h>

/* Blocks them in the calling thread (threads created now inherit it); old gets the mask
 * to restore with pthread_sigmask(SIG_SETMASK, old, NULL). */
void thread_signals_block(sigset_t *old);

#endif
