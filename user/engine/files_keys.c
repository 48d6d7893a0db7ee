// SPDX-License-Identifier: GPL-2.0
/* The file table's bookkeeping lists and the row helpers both halves use (files.h). */
#include <stdlib.h>
#include "lib/array.h"
#include "engine/files.h"

int files_keys_add(struct fkeys *k, const struct fc_file *f)
{
	if (array_reserve(k->v, k->n, k->cap, 64))
		return -ENOMEM;
	k->v[k->n].dev = f->dev;
	k->v[k->n++].ino = f->ino;
	return 0;
}

void files_keys_free(struct fkeys *k)
{
	free(k->v);
	k->v = NULL;
	k->n = k->cap = 0;
}

void files_touch(struct files *fs, struct fc_file *f)
{
	if (f->flags & FF_CHANGED)
		return;
	f->flags |= FF_CHANGED;
	files_keys_add(&fs->touched, f);
}

/* A row's share of the totals, out (sign -1) before a change and back in (+1) after it:
 * each setter is a remove, a change and an add, so the totals never drift from a recount. */
static void count(struct files *fs, const struct fc_file *f, int sign)
{
	struct fc_totals *t = &fs->tot;
	uint64_t s = (uint64_t)(int64_t)sign;	/* modulo 2^64: -1 subtracts */

	t->pages.cached += s * f->pages.cached;
	t->pages.dirty += s * f->pages.dirty;
	t->pages.writeback += s * f->pages.writeback;
	t->pages.evicted += s * f->pages.evicted;
	t->pages.recently_evicted += s * f->pages.recently_evicted;
	if (f->kind < FC_KIND_COUNT)
		t->by_kind[f->kind] += s * f->pages.cached;
}

void files_set_cached(struct files *fs, struct fc_file *f, uint64_t pages)
{
	if (f->pages.cached != pages) {
		count(fs, f, -1);
		f->pages.cached = pages;
		count(fs, f, 1);
		files_top_consider(fs, f);
	}
	files_touch(fs, f);
}

void files_set_counts(struct files *fs, struct fc_file *f, const struct fc_pages *p)
{
	count(fs, f, -1);
	f->pages.dirty = p->dirty;
	f->pages.writeback = p->writeback;
	f->pages.evicted = p->evicted;
	f->pages.recently_evicted = p->recently_evicted;
	count(fs, f, 1);
}

void files_set_kind(struct files *fs, struct fc_file *f, enum fc_kind kind)
{
	count(fs, f, -1);
	f->kind = kind;
	count(fs, f, 1);
}

void files_remove(struct files *fs, struct fc_file *f)
{
	count(fs, f, -1);
	fs->tot.files--;
	files_top_drop(fs, f);
	fcache_remove(fs->fc, f);
}

struct fc_file *files_row(struct files *fs, uint64_t dev, uint64_t ino)
{
	size_t had = fcache_count(fs->fc);
	struct fc_file *f = fcache_get(fs->fc, dev, ino);

	if (f && fcache_count(fs->fc) > had) {
		fs->tot.files++;	/* new, with no pages: nothing else to count */
		fs->map_inputs++;
		files_top_consider(fs, f);
	}
	/* Queued once, when new (a reused number is reset to new by on_rec). */
	if (f && !f->seen_gen && !(f->flags & FF_QUEUED) && f->name_src == FC_NAME_NONE &&
	    !f->name_tries) {
		f->flags |= FF_QUEUED | FF_KINFO;
		files_keys_add(&fs->unnamed, f);
		files_keys_add(&fs->kinfo, f);
		fs->kinfo_added = true;
		fcache_file_set_name(f, NULL, FC_NAME_NONE, "not named yet (the largest files are "
				 "named first, the rest over the next refreshes)");
	}
	return f;
}
