// SPDX-License-Identifier: GPL-2.0
/*
 * The Files view's tree of directories (ui_filetree.h).
 *
 * Rebuilt from the filtered files whenever the view's lines are (a refresh, a key): the
 * directories of every path are found or added in a hash table by path, each file's
 * numbers added to all its ancestors, chains of single directories merged, and the result
 * handed to the process tree's builder (model/proctree.h) with made-up ids, which orders
 * siblings by the view's sort and knows what is folded.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "ui/ui_filetree.h"

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	while (n--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

struct dir_key {
	const char *path;
	size_t len;
};

static uint64_t dir_hash(uint32_t item, void *ctx)
{
	const struct ftree *t = ctx;

	return hash_str(t->dnames + t->dirs[item].path, t->dirs[item].plen);
}

static bool dir_equal(uint32_t item, const void *key, void *ctx)
{
	const struct ftree *t = ctx;
	const struct dir_key *k = key;
	const struct ft_dir *d = &t->dirs[item];

	return d->plen == k->len && !memcmp(t->dnames + d->path, k->path, k->len);
}

static const struct hashtab_ops dir_ops = { dir_hash, dir_equal };

static size_t dir_get(struct ftree *t, const char *path, size_t len);

/* The parent of the directory at dnames + off: "/a/b" -> "/a", "/a" -> "/"; "/" and
 * "[kind]" have none. */
static size_t parent_of(struct ftree *t, size_t off, size_t len)
{
	const char *path = t->dnames + off;
	size_t k = len;

	if (path[0] != '/' || len <= 1)
		return SIZE_MAX;
	while (k > 1 && path[k - 1] != '/')
		k--;
	return dir_get(t, path, k > 1 ? k - 1 : 1);
}

/* The directory of that path (which may point into dnames), added with its parents if new;
 * SIZE_MAX on ENOMEM. */
static size_t dir_get(struct ftree *t, const char *path, size_t len)
{
	uintptr_t p = (uintptr_t)path, base = (uintptr_t)t->dnames;
	bool inside = t->dnames && p >= base && p < base + t->dnames_cap;
	uint64_t h = hash_str(path, len);
	struct dir_key key = { path, len };
	size_t i, parent, off = t->dnames_len;
	uint32_t found;

	if (hashtab_find(&t->index, h, &key, &found))
		return found;
	/* Growing dnames may move it: a path inside it is found again by its offset. */
	if (array_reserve_n(t->dnames, off + len + 1, t->dnames_cap, 4096))
		return SIZE_MAX;
	memmove(t->dnames + off, inside ? t->dnames + (p - base) : path, len);
	t->dnames[off + len] = 0;
	t->dnames_len += len + 1;
	parent = parent_of(t, off, len);
	if (t->dnames[off] == '/' && len > 1 && parent == SIZE_MAX)
		return SIZE_MAX;
	if (array_reserve(t->dirs, t->ndirs, t->dirs_cap, 64))
		return SIZE_MAX;
	i = t->ndirs;
	t->dirs[i] = (struct ft_dir){ .path = off, .plen = len, .parent = parent };
	if (hashtab_add(&t->index, h, i))
		return SIZE_MAX;
	t->ndirs++;
	if (parent != SIZE_MAX)
		t->dirs[parent].ndirs++;
	return i;
}

/* A file's directory: its path's, or "[kind]" for names that are not paths. */
static size_t file_dir(struct ftree *t, const struct uf_snap *s, const struct uf_file *u)
{
	const char *name = uf_name(s, u), *slash = strrchr(name, '/');
	char kind[48];

	if (name[0] == '/' && slash)
		return dir_get(t, name, slash > name ? (size_t)(slash - name) : 1);
	snprintf(kind, sizeof(kind), "[%s]", u->kind ? u->kind : "other");
	return dir_get(t, kind, strlen(kind));
}

static const char *dir_path(const struct ftree *t, const struct ft_dir *d)
{
	return t->dnames + d->path;
}

const char *filetree_name(const struct ftree *t, const struct uf_snap *s, const struct ft_line *ln)
{
	if (ln->dir) {
		const struct ft_dir *d = &t->dirs[ln->idx];
		const char *p = dir_path(t, d);

		if (d->shown_parent != SIZE_MAX) {
			size_t skip = t->dirs[d->shown_parent].plen;

			p += skip + (skip > 1 && p[skip] == '/');
			if (*p == '/')
				p++;
		}
		return p;
	} else {
		const char *name = uf_name(s, &s->v[ln->idx]);
		const char *slash = strrchr(name, '/');

		return name[0] == '/' && slash && slash[1] ? slash + 1 : name;
	}
}

void filetree_label(const struct ftree *t, const struct uf_snap *s, const struct ft_line *ln,
		    char *buf, size_t len)
{
	const char *p = filetree_name(t, s, ln);

	snprintf(buf, len, "%s%s", p, !ln->dir || p[0] == '[' || p[strlen(p) - 1] == '/' ? "" :
		 "/");
}

bool filetree_folded(const struct ftree *t, size_t dir)
{
	size_t i;

	for (i = 0; i < t->nfolds; i++)
		if (!strcmp(t->folds[i], ftree_path(t, dir)))
			return true;
	return false;
}

/* ptree's callbacks: the caller's order and the folds. */
struct build_ctx {
	struct ftree *t;
	ft_cmp cmp;
	void *ctx;
};

static int cmp_items(size_t a, size_t b, void *ctx)
{
	struct build_ctx *c = ctx;

	return c->cmp(&c->t->items[a], &c->t->items[b], c->ctx);
}

static bool item_folded(pid_t id, void *ctx)
{
	const struct build_ctx *c = ctx;
	const struct ft_line *it = &c->t->items[id - 1];

	return it->dir && filetree_folded(c->t, it->idx);
}

struct ft_vals filetree_file_vals(const struct uf_file *u)
{
	return (struct ft_vals){ .cached = u->cached, .dirty = u->dirty, .wb = u->wb,
				 .evicted = u->evicted, .size = u->size, .adds = u->adds,
				 .evicts = u->evicts, .npids = u->npids };
}

void filetree_vals_add(struct ft_vals *a, const struct ft_vals *b, bool file)
{
	a->cached += b->cached;
	a->dirty += b->dirty;
	a->wb += b->wb;
	a->evicted += b->evicted;
	a->size += b->size;
	a->adds += b->adds;
	a->evicts += b->evicts;
	a->npids += file ? 1 : b->npids;
}

int filetree_build(struct ftree *t, const struct uf_snap *s, const size_t *match, size_t n,
		   ft_cmp cmp, void *ctx, struct ft_line *lines, size_t *nlines)
{
	struct build_ctx c = { t, cmp, ctx };
	struct ptree_in in = { .cmp = cmp_items, .folded = item_folded, .ctx = &c };
	size_t i, k, nkept = 0, d;

	*nlines = 0;
	t->ndirs = t->dnames_len = 0;
	if (!t->index.ops)
		hashtab_init(&t->index, &dir_ops, t);
	hashtab_clear(&t->index);
	for (i = 0; i < n; i++) {
		const struct uf_file *u = &s->v[match[i]];
		struct ft_vals v = filetree_file_vals(u);

		d = file_dir(t, s, u);
		if (d == SIZE_MAX)
			return -ENOMEM;
		t->dirs[d].nfiles++;
		for (; d != SIZE_MAX; d = t->dirs[d].parent)
			filetree_vals_add(&t->dirs[d].v, &v, true);
	}
	/* A directory holding only one directory is part of that one's row. */
	for (i = 0; i < t->ndirs; i++) {
		struct ft_dir *dd = &t->dirs[i];

		dd->kept = dd->nfiles || dd->ndirs != 1;
		nkept += dd->kept;
	}
	k = nkept + n;
	if (k > t->items_cap) {
		if (array_resize(t->items, k) | array_resize(t->tid, k) | array_resize(t->tpid, k))
			return -ENOMEM;
		t->items_cap = k;
	}
	t->nitems = 0;
	for (i = 0; i < t->ndirs; i++) {
		struct ft_dir *dd = &t->dirs[i];

		for (d = dd->parent; d != SIZE_MAX && !t->dirs[d].kept; d = t->dirs[d].parent)
			;
		dd->shown_parent = d;
		if (!dd->kept)
			continue;
		dd->id = t->nitems;
		t->items[t->nitems++] = (struct ft_line){ .dir = true, .idx = i };
	}
	for (i = 0; i < t->nitems; i++) {
		const struct ft_dir *dd = &t->dirs[t->items[i].idx];

		t->tid[i] = (pid_t)(i + 1);
		t->tpid[i] = dd->shown_parent == SIZE_MAX ? 0 :
			     (pid_t)(t->dirs[dd->shown_parent].id + 1);
	}
	for (i = 0; i < n; i++) {
		d = file_dir(t, s, &s->v[match[i]]);	/* found again: no allocation */
		t->items[t->nitems] = (struct ft_line){ .idx = match[i] };
		t->tid[t->nitems] = (pid_t)(t->nitems + 1);
		t->tpid[t->nitems] = (pid_t)(t->dirs[d].id + 1);
		t->nitems++;
	}
	in.pid = t->tid;
	in.ppid = t->tpid;
	in.n = t->nitems;
	if (proctree_build(&t->pt, &in))
		return -ENOMEM;
	for (i = 0; i < t->pt.n; i++) {
		const struct ptree_row *r = &t->pt.rows[i];

		if (r->hidden)
			continue;
		lines[*nlines] = t->items[r->item];
		lines[(*nlines)++].trow = i;
	}
	return 0;
}

void filetree_fold(struct ftree *t, const char *path, bool on)
{
	size_t i;

	for (i = 0; i < t->nfolds; i++) {
		if (!strcmp(t->folds[i], path)) {
			if (!on) {
				free(t->folds[i]);
				t->folds[i] = t->folds[--t->nfolds];
			}
			return;
		}
	}
	if (!on || array_reserve(t->folds, t->nfolds, t->folds_cap, 8))
		return;
	t->folds[t->nfolds] = strdup(path);
	t->nfolds += t->folds[t->nfolds] != NULL;
}

void filetree_unfold_all(struct ftree *t)
{
	while (t->nfolds)
		free(t->folds[--t->nfolds]);
}

size_t filetree_parent_dir(const struct ftree *t, size_t trow)
{
	uint32_t depth;
	size_t p = trow;

	if (trow >= t->pt.n || !t->pt.rows[trow].depth)
		return SIZE_MAX;
	depth = t->pt.rows[trow].depth;
	while (p > 0 && t->pt.rows[p].depth >= depth)
		p--;
	return t->items[t->pt.rows[p].item].dir ? t->items[t->pt.rows[p].item].idx : SIZE_MAX;
}

void filetree_free(struct ftree *t)
{
	filetree_unfold_all(t);
	free(t->folds);
	free(t->dirs);
	free(t->dnames);
	hashtab_free(&t->index);
	free(t->items);
	free(t->tid);
	free(t->tpid);
	proctree_free(&t->pt);
	memset(t, 0, sizeof(*t));
}
