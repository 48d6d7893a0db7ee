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

void files_set_cached(struct files *fs, struct fc_file *f, uint64_t pages)
{
	fs->cached_total += pages - f->pages.cached;	/* modulo 2^64: a decrease too */
	f->pages.cached = pages;
	files_touch(fs, f);
}

struct fc_file *files_row(struct files *fs, uint64_t dev, uint64_t ino)
{
	struct fc_file *f = fcache_get(fs->fc, dev, ino);

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

