/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interactive view: a top-like process list and a live heatmap of one address space.
 *
 * ui_check_terminal() runs before anything is loaded or any thread starts, so `mevitop`
 * without a terminal fails early with a clear message; ui_run() takes the terminal, runs
 * the engine in its own thread and returns the exit code once the user quits (q, F10,
 * Ctrl-C, SIGTERM, SIGHUP).
 */
#ifndef MEVITOP_UI_H
#define MEVITOP_UI_H

#include <stdio.h>
#include "cli.h"
#include "engine/engine.h"

/* 0 if stdin/stdout are a terminal curses can drive; otherwise logs why and returns -1. */
int ui_check_terminal(void);
int ui_run(struct engine *e, const struct cli *c);
/* replay_main's `interactive` (rec/replay.h): checks the terminal, then the view on the
 * recording r; returns the exit code. */
struct rec_reader;
int ui_replay_main(struct rec_reader *r);
/* Every key of the interactive view, one "VIEW<TAB>KEYS<TAB>WHAT" line each (--keys). */
void ui_print_keys(FILE *f);

#endif
