/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The page cache as the views copy it (ui_fcache.c): the machine's memory summary, every
 * cached file's numbers, and one watched file's page sets.
 *
 * This is the only file of the UI that reads the page cache model (model/fcache.h, filled
 * by the engine): the Files view and the file heatmap see these types, so a change of the
 * model's names is a change here.  Every function marked "under the lock" runs with the
 * engine lock held (ui_model_trylock); what it fills is the view's own and is read without it.
 */
#ifndef MEVITOP_UI_FCACHE_H
#define MEVITOP_UI_FCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/pageset.h"
#include "ui/ui_state.h"

/* /proc/meminfo's view of the machine, bytes. */
struct uf_mem {
	bool valid;			/* read at least once */
	uint64_t total, free, available;
	uint64_t anon;			/* anonymous pages */
	uint64_t file;			/* page cache, shmem included */
	uint64_t shmem;
	uint64_t kernel;		/* slab, page tables, stacks, vmalloc, per-cpu */
	uint64_t swap_total, swap_used;
	uint64_t accounted;		/* what mevitop attributes: anon of watched + cached files */
};

/* One cached file, copied. */
struct uf_file {
	uint64_t dev, ino;
	size_t name;			/* offset of its path (or best name) in uf_snap.names */
	const char *kind;		/* "regular", "tmpfs", "memfd", ... (static) */
	uint64_t size;			/* bytes */
	uint64_t cached, dirty, wb, evicted;	/* pages */
	double adds, evicts;		/* pages per second over the last refresh */
	size_t pid0, npids;		/* the watched processes mapping it: uf_snap.pids[pid0..] */
	bool watched;			/* its page sets are kept (--file, or a heatmap is open) */
};

struct uf_snap {
	bool have;			/* the engine watches the page cache */
	uint64_t gen;			/* the model's generation copied (0: none yet) */
	struct uf_file *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	pid_t *pids;
	size_t npids, pids_cap;
	uint64_t files_omitted;		/* rows the model left out (none today) */
};

static inline const char *uf_name(const struct uf_snap *s, const struct uf_file *f)
{
	return s->names + f->name;
}

/* Under the lock: the memory summary (valid false without an engine or before a read). */
void ui_fcache_memory(struct ui *ui, struct uf_mem *out);
/* Under the lock: copies the table when the engine changed it since s was filled; true when
 * it did (the view re-sorts then).  -ENOMEM keeps the last copy. */
bool ui_fcache_snap_update(struct ui *ui, struct uf_snap *s);
void ui_fcache_snap_free(struct uf_snap *s);

/* One file's pages, a private copy (the file heatmap's). */
struct uf_pages {
	bool found;			/* in the table at the last update */
	bool have_sets;			/* the engine filled its page sets */
	unsigned waits;			/* refreshes it was in the table without them */
	uint64_t gen;			/* the model's generation copied */
	uint64_t mono_ns;		/* when */
	uint64_t dev, ino;
	char name[4096];
	const char *kind;
	uint64_t size;			/* bytes */
	uint64_t cached, dirty, wb, evicted;
	double adds, evicts;
	struct pageset *cached_set, *dirty_set, *wb_set;	/* NULL until have_sets */
	pid_t pids[32];			/* watched processes mapping it (the first 32) */
	size_t npids;
};

/* Under the lock: asks the engine to keep (on) or drop this file's page sets; 0, -ENOENT
 * (not in the table) or -ENOTSUP (no page cache model). */
int ui_fcache_want_pages(struct ui *ui, uint64_t dev, uint64_t ino, bool on);
/* Under the lock: refreshes p (dev, ino set) when the table changed; true when it did.
 * The old sets are handed to *old_cached (the caller frees it) so it can tell adds and
 * evictions apart; old_cached may be NULL. */
bool ui_fcache_pages_update(struct ui *ui, struct uf_pages *p, struct pageset **old_cached);
void ui_fcache_pages_free(struct uf_pages *p);

#endif
