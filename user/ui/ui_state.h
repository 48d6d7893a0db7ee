/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The UI's state, shared by its modules.  Only the UI thread touches it (the engine thread
 * only runs the engine and queues status messages through ui.c's log sink).
 *
 *   ui.c            loop, frame pacing, engine thread, signals, global keys, status line
 *   ui_lock.c       the engine lock with a timeout (a proxy thread takes it for the UI)
 *   ui_term.c       owns the terminal: curses set-up, restore on every exit, crash path
 *   ui_canvas.c     off-screen frame, flushed row by row when changed
 *   ui_theme.c      colours and glyphs for this terminal
 *   ui_draw.c       header, footer, prompt, number formatting shared by the views
 *   ui_proclist.c   the process list (top-like), flat or as a tree
 *   ui/treeview.c   the tree view's fold set and guide lines (the forest: model/proctree.c)
 *   ui_heatmap.c    the heatmap view: frame building under the lock, drawing, keys
 *   ui_maplayout.c  mappings → lines and cells (no curses; the part that must be fast)
 *   ui/blockname.c  packed blocks' short names, which mappings make one object
 *   ui_help.c       help screen and legend, drawn from the key tables
 *   ui/keys.c       key tables: dispatch, and what help and footer say of each key
 */
#ifndef MEVITOP_UI_STATE_H
#define MEVITOP_UI_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cli.h"
#include "engine.h"
#include "ui_canvas.h"
#include "ui_theme.h"
#include "ui/keys.h"

#define UI_FRAME_MS 80		/* 12.5 frames per second */
#define UI_MIN_COLS 80
#define UI_MIN_ROWS 24
#define UI_HEADER_ROWS 3	/* title bar + two lines of numbers */
#define UI_LOCK_WAIT_MS 25	/* a frame waits this long for the engine lock at most */

enum ui_view {
	VIEW_LIST,
	VIEW_MAP,
};

/* A one-line editor at the bottom (filter, go to address). */
enum prompt_kind {
	PROMPT_NONE,
	PROMPT_FILTER,
	PROMPT_GOTO,
	PROMPT_TIME,		/* replay: go to a time */
	PROMPT_SEARCH,			/* heatmap: a mapping by name or address */
};

struct ui_prompt {
	enum prompt_kind kind;
	char text[64];
	size_t len;
};

struct proclist;
struct heatmap;

struct ui_replay;

struct ui {
	struct engine *e;		/* the live engine, or NULL when replaying */
	struct ui_replay *replay;	/* the recording's cursor (ui_replay.h), or NULL */
	const struct cli *cli;
	struct ui_theme theme;
	struct ui_canvas canvas;
	int rows, cols;
	bool too_small;
	enum ui_view view;
	bool help;			/* help screen shown over the view */
	bool paused;			/* space: the picture is frozen (the engine runs on) */
	bool quit;			/* q: leave after this key */
	struct ui_prompt prompt;
	struct engine_stats stats;	/* copied under the lock each frame */
	size_t engine_bytes;
	double fps;
	uint64_t now_ns;		/* CLOCK_MONOTONIC of this frame's data */
	struct proclist *list;
	struct heatmap *map;
	struct ui_lock *lock;		/* the engine lock, with a timeout */
	uint64_t data_ns;		/* when the frame data was last read from the model */
	/* How long the UI waits for and holds the engine lock (reported with -v). */
	uint64_t locks, lock_misses, lock_t0;
	uint64_t lock_wait_ns, lock_wait_max_ns, lock_hold_ns, lock_hold_max_ns;
};

/* ui.c */
/* The engine lock for the UI thread (ui_lock.h): ui_lock waits for it, ui_trylock gives up
 * after timeout_ms (the frame then shows the data it has). */
void ui_lock(struct ui *ui);
bool ui_trylock(struct ui *ui, int timeout_ms);
void ui_unlock(struct ui *ui);
/* "ENGINE BUSY" when the model could not be read for a while, else NULL. */
const char *ui_stale(const struct ui *ui);
/* The newest status message if it is recent (and not yet superseded). */
bool ui_status(char *buf, size_t len, bool *is_error);
void ui_open_map(struct ui *ui, pid_t pid);
/* The model the views draw, live or replayed (under ui_lock): processes sorted by pid, one
 * process, the mode's name. */
struct proc **ui_procs(struct ui *ui, size_t *n);
struct proc *ui_find(struct ui *ui, pid_t pid);
const char *ui_mode(const struct ui *ui);

/* ui_draw.c */
void fmt_pages(char *buf, size_t len, uint64_t pages);	/* "1.5G", "12K", "0" */
void fmt_rate(char *buf, size_t len, double per_sec);	/* "0", "12", "1.2k" */
/* Title bar: "mevitop VERSION │ what │ mode │ interval │ fps"; warn (may be NULL) in red. */
void draw_title(struct ui *ui, const char *what, const char *warn);
/* "events/s N  lost N  drift N" with non-zero losses highlighted; returns the next column. */
int draw_engine_stats(struct ui *ui, int row, int col);
/* The footer: the hints of the view's key table, between global_keymap's first (help) and
 * the rest of it. */
void draw_footer(struct ui *ui, const struct ui_keymap *view);
/* The prompt if one is open, else the newest status message. */
void draw_status_line(struct ui *ui, int row);
void draw_too_small(struct ui *ui);
/* Line editing for the prompt: returns 1 accepted (Enter), -1 cancelled (Esc), 0 editing. */
int prompt_key(struct ui_prompt *p, int key);
/* Text of a labelled field at (row, col), returns the next column: "label value  ". */
int draw_field(struct ui *ui, int row, int col, const char *label, const char *value,
	       enum ui_style value_style);

/* ui_proclist.c */
/* tree: start in the tree view (-p) */
struct proclist *proclist_new(bool tree);
void proclist_free(struct proclist *l);
void proclist_update(struct ui *ui);			/* under the engine lock */
void proclist_draw(struct ui *ui);
bool proclist_key(struct ui *ui, int key);
/* The pid after (dir 1) or before (dir -1) pid in the list's order, or 0. */
pid_t proclist_next(struct ui *ui, pid_t pid, int dir);

/* ui_heatmap.c */
struct heatmap *heatmap_new(void);
void heatmap_free(struct heatmap *m);
void heatmap_show(struct ui *ui, pid_t pid);
pid_t heatmap_pid(const struct heatmap *m);
/* Builds the frame; locked: the caller holds the engine lock (without it only a frozen
 * picture can be rebuilt, otherwise the last frame stays). */
void heatmap_update(struct ui *ui, bool locked);
void heatmap_draw(struct ui *ui);
bool heatmap_key(struct ui *ui, int key);
/* The pause key: keep a private copy of the process (or drop it). */
void heatmap_pause(struct ui *ui, bool paused);

/* The key tables (ui/keys.h): anywhere (ui.c), one per view, replay (ui_replay.c). */
extern const struct ui_keymap global_keymap, proclist_keymap, heatmap_keymap, replay_keymap;

/* ui_help.c */
void help_draw(struct ui *ui);

#endif
