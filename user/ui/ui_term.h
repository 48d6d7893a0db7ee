/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one module that owns the terminal.  term_open() saves the terminal's modes, starts
 * curses on the alternate screen and arms a crash path; term_close() gives it all back.
 * The crash path (SIGSEGV, SIGBUS, SIGFPE, SIGABRT, in any thread) writes the saved
 * "leave curses" sequences and terminal modes with async-signal-safe calls only, then lets
 * the signal continue to whoever handled it before (the default action, or the sanitizer's
 * report), so a crash still dumps core or reports, and the shell is usable afterwards.
 */
#ifndef MEVITOP_UI_TERM_H
#define MEVITOP_UI_TERM_H

#include "ui/ui_theme.h"

/* stdin and stdout are a terminal that terminfo knows; otherwise why (and -1). */
int term_check(char *why, size_t len);
/* Curses on, theme chosen for this terminal; -1 (terminal untouched) on failure. */
int term_open(struct ui_theme *theme);
/* Curses off: the terminal is as it was before term_open.  Safe to call twice. */
void term_close(void);
/* A key, or ERR after timeout_ms (0: do not wait). */
int term_getch(int timeout_ms);

#endif
