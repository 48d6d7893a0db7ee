// SPDX-License-Identifier: GPL-2.0
/*
 * The page cache model as the views copy it (ui_fcache.h): the only UI file that knows
 * model/fcache.h's names.
 *
 * The table changes once per refresh (its generation says when), so the Files view copies
 * it only then, not every frame: with 100,000 cached files a copy is a few megabytes and a
 * few milliseconds under the lock, once per interval; the frames in between draw from the
 * copy.  Replay has no engine, and recordings do not carry the table: nothing to copy (the
 * memory summary comes from the frame, ui_replay.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array.h"
#include "engine/engine.h"
#include "model/fcache.h"
#include "ui/ui_fcache.h"
#include "ui/ui_replay.h"

static struct fcache *table(struct ui *ui)
{
	return ui->e ? engine_fcache(ui->e) : NULL;
}

void ui_fcache_memory(struct ui *ui, struct uf_mem *out)
{
	const struct mem_summary *m;

	memset(out, 0, sizeof(*out));
	/* Replay: the summary the frame under the cursor carries (whole-system recordings). */
	m = ui->e ? engine_memory(ui->e) : ui->replay ? ui_replay_memory(ui->replay) : NULL;
	if (!m || (ui->e && !m->ts_ns))
		return;
	*out = (struct uf_mem){
		.valid = true, .total = m->total, .free = m->free, .available = m->available,
		.anon = m->anon, .file = m->file, .shmem = m->shmem, .kernel = m->kernel,
		.swap_total = m->swap_total, .swap_used = m->swap_used, .accounted = m->accounted,
	};
}

static int add_pids(struct uf_snap *s, const pid_t *pids, size_t n)
{
	if (!n)
		return 0;
	if (array_reserve_n(s->pids, s->npids + n, s->pids_cap, 256))
		return -ENOMEM;
	memcpy(s->pids + s->npids, pids, n * sizeof(*pids));
	s->npids += n;
	return 0;
}

/* One row into the copy (fcache_each's callback); non-zero stops: no memory. */
static int copy_row(struct fc_file *f, void *arg)
{
	struct uf_snap *s = arg;
	struct uf_file *u;

	if (s->n == s->cap && array_reserve(s->v, s->n, s->cap, 1024))
		return -ENOMEM;
	u = &s->v[s->n];
	*u = (struct uf_file){
		.dev = f->dev, .ino = f->ino, .kind = fcache_kind_name(f->kind),
		.size = f->size, .cached = f->pages.cached, .dirty = f->pages.dirty,
		.wb = f->pages.writeback, .evicted = f->pages.evicted,
		.adds = f->adds_per_sec, .evicts = f->evictions_per_sec,
		.pid0 = s->npids, .npids = f->nmapped_by, .watched = f->watched,
	};
	if (array_add_str(&s->names, &s->names_len, &s->names_cap, f->name, &u->name) ||
	    add_pids(s, f->mapped_by, f->nmapped_by))
		return -ENOMEM;
	s->n++;
	return 0;
}

bool ui_fcache_snap_update(struct ui *ui, struct uf_snap *s)
{
	struct fcache *t = table(ui);

	s->have = t != NULL;
	if (!t) {
		s->n = 0;
		return false;
	}
	if (s->gen && fcache_generation(t) == s->gen)
		return false;
	/* In the table's order: the view sorts its copy without the lock (the table's own
	 * sorted array would sort under it). */
	s->n = s->names_len = s->npids = 0;
	fcache_each(t, copy_row, s);	/* no memory: the rows copied so far */
	s->gen = fcache_generation(t);
	return true;
}

void ui_fcache_snap_free(struct uf_snap *s)
{
	free(s->v);
	free(s->names);
	free(s->pids);
	memset(s, 0, sizeof(*s));
}

int ui_fcache_want_pages(struct ui *ui, uint64_t dev, uint64_t ino, bool on)
{
	struct fcache *t = table(ui);

	return t ? fcache_want_pages(t, dev, ino, on) : -ENOTSUP;
}

/* dst becomes a copy of src (NULL: empty); false on ENOMEM. */
static bool copy_set(struct pageset **dst, const struct pageset *src)
{
	struct pageset *c = src ? pageset_clone(src) : pageset_new();

	if (!c)
		return false;
	pageset_free(*dst);
	*dst = c;
	return true;
}

bool ui_fcache_pages_update(struct ui *ui, struct uf_pages *p, struct pageset **old_cached)
{
	struct fcache *t = table(ui);
	const struct fc_file *f = t ? fcache_find(t, p->dev, p->ino) : NULL;
	struct pageset *prev;
	size_t n;

	if (old_cached)
		*old_cached = NULL;
	p->found = f != NULL;
	if (!f) {
		/* Not (or no longer) cached: said once the table has been read. */
		p->gen = t ? fcache_generation(t) : 0;
		p->cached = p->dirty = p->wb = 0;
		return false;
	}
	if (fcache_generation(t) == p->gen)
		return false;
	p->gen = fcache_generation(t);
	snprintf(p->name, sizeof(p->name), "%s", f->name);
	p->kind = fcache_kind_name(f->kind);
	p->size = f->size;
	p->cached = f->pages.cached;
	p->dirty = f->pages.dirty;
	p->wb = f->pages.writeback;
	p->evicted = f->pages.evicted;
	p->adds = f->adds_per_sec;
	p->evicts = f->evictions_per_sec;
	n = f->nmapped_by < 32 ? f->nmapped_by : 32;
	if (n)
		memcpy(p->pids, f->mapped_by, n * sizeof(*p->pids));
	p->npids = n;
	p->have_sets = f->watched && f->cached_set;
	if (!p->have_sets) {
		p->waits++;
		return true;
	}
	prev = p->cached_set;
	p->cached_set = NULL;
	if (!copy_set(&p->cached_set, f->cached_set) || !copy_set(&p->dirty_set, f->dirty_set) ||
	    !copy_set(&p->wb_set, f->writeback_set)) {
		pageset_free(p->cached_set);
		p->cached_set = prev;		/* keep the last picture */
		return true;
	}
	if (old_cached)
		*old_cached = prev;
	else
		pageset_free(prev);
	return true;
}

void ui_fcache_pages_free(struct uf_pages *p)
{
	pageset_free(p->cached_set);
	pageset_free(p->dirty_set);
	pageset_free(p->wb_set);
	p->cached_set = p->dirty_set = p->wb_set = NULL;
	p->have_sets = false;
}
