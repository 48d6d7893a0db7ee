/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The UI's state, shared by its modules (data only: each module's functions are in its own
 * header).  Only the UI thread touches it (the engine thread only runs the engine and
 * queues status messages through ui_status.c).
 *
 *   ui.c            loop, frame pacing, engine thread, signals, global keys
 *   ui_model.c      what the views draw (live engine or replayed frame), the timed engine lock
 *   ui_status.c     the status line's messages, from any thread
 *   ui_term.c       owns the terminal: curses set-up, restore on every exit, crash path
 *   ui_canvas.c     off-screen frame, flushed row by row when changed
 *   ui_theme.c      colours and glyphs for this terminal
 *   ui_draw.c       header, footer, prompt, number formatting shared by the views
 *   ui_proclist.c   the process list (top-like), flat or as a tree
 *   ui/treeview.c   the tree view's fold set and guide lines (the forest: model/proctree.c)
 *   ui_heatmap.c    the heatmap view: frame building under the lock, keys
 *   ui_heatmap_draw.c  its drawing, from the frame (ui_heatmap_int.h: the state both share)
 *   ui_maplayout.c  mappings → lines and cells (no curses; the part that must be fast)
 *   ui_paint.c      each cell's look: residency, heat, sharing, difference (no curses)
 *   ui/blockname.c  packed blocks' short names, which mappings make one object
 *   ui_help.c       help screen and legend, drawn from the key tables
 *   ui_replay.c     the time cursor over a recording, its keys and timeline bar
 *   ui/keys.c       key tables: dispatch, and what help and footer say of each key
 *   ui_files.c      the Files view: every file in the page cache, flat or by directory
 *   ui_fileheat.c   one file's heatmap: cached / dirty / writeback pages, adds/evictions
 *   ui_cells.c      a line of heatmap cells and the zoom readout, for both heatmaps
 *   ui_memsum.c     the list views' memory summary (where every GiB of the machine is)
 *   ui_fcache.c     the page cache model (model/fcache.h) as the views copy it: the one
 *                   file that reads it, so the views do not depend on its names
 *
 * Calls go one way: ui.c → views (proclist, heatmap, help, replay) → ui_draw, ui_model →
 * ui_status, ui_replay.  A view that needs the loop asks through a field (open_pid) and
 * reads what ui.c owns through one (global_keys); tests/integration/test_layers.py holds
 * every file to "no file calls back into its caller".
 */
#ifndef MEVITOP_UI_STATE_H
#define MEVITOP_UI_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "engine/engine.h"
#include "ui/ui.h"
#include "ui/ui_canvas.h"
#include "ui/ui_theme.h"
#include "ui/keys.h"

#define UI_FRAME_MS 80		/* 12.5 frames per second */
#define UI_MIN_COLS 80
#define UI_MIN_ROWS 24
#define UI_HEADER_ROWS 3	/* title bar + two lines of numbers */
#define UI_LOCK_WAIT_MS 25	/* a frame waits this long for the engine lock at most */

enum ui_view {
	VIEW_LIST,
	VIEW_MAP,
	VIEW_FILES,			/* the page cache, file by file */
	VIEW_FMAP,			/* one file's heatmap */
};

/* A one-line editor at the bottom (filter, go to address). */
enum prompt_kind {
	PROMPT_NONE,
	PROMPT_FILTER,
	PROMPT_GOTO,
	PROMPT_TIME,		/* replay: go to a time */
	PROMPT_SEARCH,			/* heatmap: a mapping by name or address */
	PROMPT_PAGE,			/* file heatmap: a page index */
};

struct ui_prompt {
	enum prompt_kind kind;
	char text[64];
	size_t len;
};

struct proclist;
struct heatmap;
struct files;
struct fileheat;

/* A view asks for a file's heatmap (ui.c opens it): the list's Enter, a file mapping's. */
struct ui_open_file {
	bool set;
	uint64_t dev, ino;		/* as stat(2)'s st_dev, st_ino */
	enum ui_view back;		/* where Esc returns */
};

struct ui_replay;

struct ui {
	struct engine *e;		/* the live engine, or NULL when replaying */
	struct ui_replay *replay;	/* the recording's cursor (ui_replay.h), or NULL */
	const struct ui_opts *o;		/* what the view was asked to show */
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
	const struct ui_keymap *global_keys;	/* ui.c's keys that work anywhere (footer, help) */
	pid_t open_pid;			/* a view asks for this process's heatmap; ui.c opens it */
	struct files *files;
	struct fileheat *fmap;
	struct ui_open_file open_file;
	uint64_t data_ns;		/* when the frame data was last read from the model */
	/* How long the UI waits for and holds the engine lock (reported with -v). */
	uint64_t locks, lock_misses, lock_t0;
	uint64_t lock_wait_ns, lock_wait_max_ns, lock_hold_ns, lock_hold_max_ns;
};

#endif
