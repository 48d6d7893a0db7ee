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

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "engine/engine.h"

/* What the view is asked to show: its own options, built from the command line by the top
 * (cli_ui_opts), so the view knows nothing of struct cli. */
struct ui_opts {
	uint64_t interval_ms;		/* the engine's refresh (-d) */
	uint64_t count;			/* -n: refreshes before quitting; 0: forever */
	const pid_t *pids;		/* -p (or run's CMD): the first one's heatmap opens */
	size_t npids;			/* 0: the whole system */
	int layout;			/* --layout: enum hm_style, HL_AUTO by default */
	bool files_view;		/* --files: open on the Files view */
	const char *file_path;		/* --file PATH: that file's heatmap opens; or NULL */
	bool refuse_suspend;		/* --exact=ordered: the target's first touches wait for
					 * us, so Ctrl-Z is refused */
};

/* 0 if stdin/stdout are a terminal curses can drive; otherwise logs why and returns -1. */
int ui_check_terminal(void);
int ui_run(struct engine *e, const struct ui_opts *o);
/* replay_main's `interactive` (rec/replay.h): checks the terminal, then the view on the
 * recording r; returns the exit code. */
struct rec_reader;
int ui_replay_main(struct rec_reader *r);
/* Every key of the interactive view, one "VIEW<TAB>KEYS<TAB>WHAT" line each (--keys). */
void ui_print_keys(FILE *f);

#endif
