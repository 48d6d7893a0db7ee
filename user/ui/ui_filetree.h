/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Files view's tree (ui_filetree.c): the listed files as a forest of directories, as
 * du and ncdu show a disk.  A directory's row sums the files under it; folding it hides
 * them.  A chain of directories holding nothing but one directory each is one row
 * (/usr/lib/x86_64-linux-gnu/), so the tree is as deep as the files make it, not as the
 * paths are.  Files without a path (memfd, SysV segments, "dev:ino") sit under a root
 * named after their kind: [memfd].  No curses here.
 */
#ifndef MEVITOP_UI_FILETREE_H
#define MEVITOP_UI_FILETREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/hashtab.h"
#include "model/proctree.h"
#include "ui/ui_fcache.h"

/* What a row shows: a file's numbers, or a directory's sums. */
struct ft_vals {
	uint64_t cached, dirty, wb, evicted;	/* pages */
	uint64_t size;				/* bytes */
	double adds, evicts;			/* pages per second */
	size_t npids;			/* a file: processes mapping it; a directory: files */
};

struct ft_dir {
	size_t path, plen;		/* in dnames */
	size_t parent;			/* SIZE_MAX: a root */
	size_t shown_parent;		/* the nearest kept ancestor, SIZE_MAX: none */
	uint32_t nfiles, ndirs;		/* direct children */
	bool kept;			/* a row of its own (not part of a chain) */
	size_t id;			/* its tree item, when kept */
	struct ft_vals v;		/* the sums of the files under it */
};

/* One line of the view: a file (index in the snapshot) or a directory (index in dirs). */
struct ft_line {
	bool dir;
	size_t idx;
	size_t trow;			/* the tree: its row in pt */
};

struct ftree {
	struct ft_dir *dirs;
	size_t ndirs, dirs_cap;
	char *dnames;
	size_t dnames_len, dnames_cap;
	struct hashtab index;		/* dirs by path */
	struct ft_line *items;		/* ptree item k is items[k] */
	pid_t *tid, *tpid;
	size_t nitems, items_cap;
	struct ptree pt;
	char **folds;			/* folded directories, by path */
	size_t nfolds, folds_cap;
};

/* Sibling order, like qsort's. */
typedef int (*ft_cmp)(const struct ft_line *a, const struct ft_line *b, void *ctx);

struct ft_vals filetree_file_vals(const struct uf_file *u);
/* a += b (file: b is one file, counted in a directory's npids). */
void filetree_vals_add(struct ft_vals *a, const struct ft_vals *b, bool file);

/* The tree of the snapshot's files match[0..n): lines (room for 3 n) in tree order, those
 * inside a folded directory left out.  0, or -ENOMEM. */
int filetree_build(struct ftree *t, const struct uf_snap *s, const size_t *match, size_t n,
		   ft_cmp cmp, void *ctx, struct ft_line *lines, size_t *nlines);
static inline const char *ftree_path(const struct ftree *t, size_t dir)
{
	return t->dnames + t->dirs[dir].path;
}
/* A line's name in the tree (a pointer into the tree or the snapshot): a directory relative
 * to the one above it, a file by its base name. */
const char *filetree_name(const struct ftree *t, const struct uf_snap *s, const struct ft_line *ln);
/* filetree_name with a slash after a directory's: what the tree view draws. */
void filetree_label(const struct ftree *t, const struct uf_snap *s, const struct ft_line *ln,
		    char *buf, size_t len);
bool filetree_folded(const struct ftree *t, size_t dir);
void filetree_fold(struct ftree *t, const char *path, bool on);
void filetree_unfold_all(struct ftree *t);
/* The directory (index in dirs) of the tree row above trow: a file's own; SIZE_MAX if none. */
size_t filetree_parent_dir(const struct ftree *t, size_t trow);
void filetree_free(struct ftree *t);

#endif
