/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The web view's page cache (doc/web.md): the files list and one file's heatmap, as the
 * terminal's Files view and file heatmap show them (ui/ui_files.c, ui/ui_fileheat.c).
 *
 *   GET /api/files?sort=KEY&desc=0|1&filter=TEXT&limit=N
 *                       the cached files, sorted by KEY (cached, dirty, writeback, evicted,
 *                       adds, evicts, size, name, kind, mapped), the first N (default
 *                       WEB_FILES_LIMIT) of those whose name contains TEXT
 *   GET /api/file?dev=D&ino=I
 *                       one file: its figures, who maps it, and its pages as runs
 *                       [gap, length, state] (1 cached, 2 dirty, 3 writeback) and heat
 *                       [block offset, adds level, evictions level]
 *
 * The table is copied under the engine's lock once per generation of it (a refresh), and
 * that copy serves every viewer until the next: with 100,000 cached files the copy is a few
 * megabytes, not to be made per request.  A file's page sets are the engine's once asked
 * for (fcache_want_pages, as the terminal's file heatmap asks: kept from the next refresh
 * on); the heat is the adds and evictions between the sets of successive generations,
 * kept here per viewed file in the process heat's tables (16-page blocks, 2 s half-life).
 */
#ifndef MEVITOP_OUT_WEB_FILES_H
#define MEVITOP_OUT_WEB_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "engine/frame.h"
#include "lib/pageset.h"
#include "model/model.h"
#include "out/json_buf.h"

#define WEB_FILES_LIMIT 1000		/* rows sent when the page does not say */
#define WEB_FILES_SEEN 4		/* files whose heat is kept (FC_WANTED_MAX's asks) */
#define WEB_FILE_PIDS 32		/* mappers named, as the terminal's cursor line */

struct fcache;

struct web_frow {
	uint64_t dev, ino;
	size_t name;			/* offset in web_flist.names */
	const char *kind;		/* static */
	uint64_t size;			/* bytes */
	uint64_t cached, dirty, wb, evicted;	/* pages */
	double adds, evicts;		/* pages a second */
	size_t mapped;			/* watched processes mapping it */
};

/* The table's copy, one per generation. */
struct web_flist {
	uint64_t gen;			/* 0: none yet */
	struct web_frow *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	uint64_t copies;		/* of the table made (the tests count them) */
};

/* One viewed file's heat: the cached set the last answer saw, adds and evictions since. */
struct web_fseen {
	uint64_t dev, ino, gen, used;	/* used 0: free */
	struct pageset *prev;
	struct heat adds, evicts;
};

struct web_files {
	struct web_flist list;
	struct web_fseen seen[WEB_FILES_SEEN];
	uint64_t uses;
};

/* A file as one answer shows it: copied under the lock. */
struct web_fsnap {
	bool found, have_sets;
	uint64_t gen, mono_ns;
	struct web_frow row;
	char *name;
	struct pageset *cached, *dirty, *wb;
	pid_t pids[WEB_FILE_PIDS];
	char comms[WEB_FILE_PIDS][16];
	size_t npids;
};

/* Under the source: t the engine's table (NULL: none).  Refreshes fs->list when t changed;
 * 0 or -ENOMEM (the last copy stays). */
int web_files_list_update(struct web_files *fs, struct fcache *t);
/* Without the lock: the list's JSON; sort one of the keys above ("" or NULL: cached). */
void web_files_list_json(const struct web_files *fs, bool have, const char *sort, bool desc,
			 const char *filter, size_t limit, struct buf *b);
/* Under the source: file (dev, ino) of t copied into out, its page sets asked for; f the
 * frame (its processes name the mappers).  0 or -ENOMEM. */
int web_files_snap(struct fcache *t, const struct json_frame *f, uint64_t dev, uint64_t ino,
		   struct web_fsnap *out);
/* Without the lock: the file's JSON, its heat updated from out's sets. */
void web_files_file_json(struct web_files *fs, struct web_fsnap *s, struct buf *b);
void web_files_snap_free(struct web_fsnap *s);
void web_files_free(struct web_files *fs);

#endif
