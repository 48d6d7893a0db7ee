/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interactive view's key bindings, one table per view (in the spirit of htop's
 * Action.c): each entry is written once and is at the same time what a key press
 * dispatches to, a line of the help screen, and (when it has a hint) a footer item.
 * `mevitop --keys` prints the tables, and a test holds the help screen, doc/view.md and the man
 * page to them.
 */
#ifndef MEVITOP_UI_KEYS_H
#define MEVITOP_UI_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct ui;

#define UI_KEY_CODES 6

struct ui_key {
	int codes[UI_KEY_CODES];	/* the curses key codes it answers, 0 ends the list */
	const char *keys;		/* as help writes them: "[ ] n N" */
	const char *help;		/* what it does, for the help screen (23 columns fit
					 * its half of an 80-column screen) */
	const char *hint_key, *hint;	/* the footer's item ("F1", "Help"), or NULL */
	/* Handles the key (one of codes); false if it meant nothing now. */
	bool (*fn)(struct ui *ui, int key);
};

struct ui_keymap {
	const char *title;		/* the help screen's heading: "Heatmap" */
	const struct ui_key *keys;
	size_t n;
};

#define UI_KEYMAP(title, table) { title, table, sizeof(table) / sizeof((table)[0]) }

/* Runs the entry answering key; false when there is none or it did nothing. */
bool keys_dispatch(const struct ui_keymap *km, struct ui *ui, int key);
/* "TITLE<TAB>KEYS<TAB>HELP" per entry, for --keys. */
void keys_print(FILE *f, const struct ui_keymap *km);

#endif
