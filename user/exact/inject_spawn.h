/* SPDX-License-Identifier: GPL-2.0 */
/* inject_spawn.h - run's CMD, spawned and followed (the injection's own; the API is
 * inject.h). */
#ifndef MEVITOP_INJECT_SPAWN_H
#define MEVITOP_INJECT_SPAWN_H

#include "exact/inject_int.h"

/* Forks and execs in->spawn_argv seized; parks it at its new entry point with its
 * scratch page ready.  0, or -errno with in->why set (the child is then dead). */
int inj_spawn_threads(struct inj *in);
/* Follows the spawned child across execs until it exits (*status) or timeout_ms. */
int inj_follow_threads(struct inj *in, unsigned timeout_ms, int *status);

#endif
