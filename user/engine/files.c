// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's page cache side (doc/pagecache.md): the memory summary and the file table
 * (model/fcache.h), refreshed at each tick under the engine lock.
 *
 *   start: one BPF walk of every superblock's inodes (kernel/fcache_bpf.h) → a row per
 *          inode with cached pages, complete; names and exact counts for the largest
 *   tick:  the filemap tracepoints' per-inode counts (which files changed, and by how
 *          much) + a re-walk of the shmem superblocks only (shmem adds fire no event)
 *          → rows updated, emptied rows dropped; cachestat for the rows that changed
 *          and the top files_top; names for new rows within a time budget
 *
 * Without the walk (--disable fcache_bpf, or it does not load) the rows are the files
 * processes hold open or map (/proc/PID/fd, the process model's mappings) and --file's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/array.h"
#include "kernel/cachestat.h"
#include "kernel/cgroup_ids.h"
#include "engine/engine_int.h"
#include "kernel/fcache_bpf.h"
#include "kernel/fcache_name.h"
#include "kernel/fcache_proc.h"
#include "engine/files.h"
#include "engine/mem_anon.h"
#include "engine/start_ahead.h"
#include "lib/log.h"
#include "kernel/meminfo.h"

#define TMPFS_MAGIC_	0x01021994
#define BDEVFS_MAGIC_	0x62646576
/* xa_flags bits that are the xarray's own (lock type, TRACK_FREE, ZERO_BUSY, ALLOC_WRAPPED,
 * ACCOUNT); the marks sit above every gfp bit (XA_FLAGS_MARK: 1 << __GFP_BITS_SHIFT << mark),
 * so any bit above these is a mark.  Taking every higher bit for one errs only towards a
 * cachestat too many, never a dirty count missed. */
#define XA_OWN_FLAGS	0x3fu

const struct mem_summary *engine_memory(struct engine *e)
{
	return &e->mem;
}

struct fcache *engine_fcache(struct engine *e)
{
	return e->files ? e->fc : NULL;
}

const struct files_stats *engine_files_stats(struct engine *e)
{
	return e->files ? &e->files->st : NULL;
}

static void summary_from(struct mem_summary *s, const struct meminfo *mi)
{
	s->total = mi->mem_total;
	s->free = mi->mem_free;
	s->available = mi->mem_available;
	s->anon = mi->anon_pages;
	s->cached = mi->cached;
	s->buffers = mi->buffers;
	s->file = mi->cached + mi->buffers;
	s->shmem = mi->shmem;
	s->kernel = mi->slab + mi->kernel_stack + mi->page_tables + mi->sec_page_tables +
		    mi->percpu + mi->vmalloc_used;
	s->swap_total = mi->swap_total;
	s->swap_used = mi->swap_total > mi->swap_free ? mi->swap_total - mi->swap_free : 0;
}

static void summary_refresh(struct engine *e)
{
	struct meminfo mi;

	if (meminfo_read(&mi) == 0) {
		summary_from(&e->mem, &mi);
		e->mem.ts_ns = engine_now_ns();
	}
	/* accounted = accounted_anon + accounted_files: each anonymous page once (Pss_Anon,
	 * not the per-process resident counts, which count a page shared since fork once per
	 * process) and each cached page once (the rows are distinct inodes; shmem pages are
	 * the rows' and never anon).  So accounted <= anon + file <= total - free, up to what
	 * moved between the reads. */
	e->mem.accounted_anon = mem_anon_refresh(e, e->mem.anon, &e->mem.anon_pending,
						  &e->mem.anon_unreadable);
	e->mem.anon_meminfo = e->anon_meminfo;
	e->mem.accounted_files = (e->files ? e->files->tot.pages.cached : 0) * PAGE_SIZE_4K;
	e->mem.accounted = e->mem.accounted_anon + e->mem.accounted_files;
}

/* --- rows from the kernel --- */

static enum fc_kind kind_of(struct files *fs, const struct fc_file *f)
{
	if (f->sb_magic == BDEVFS_MAGIC_)
		return FC_BLOCK;
	if (f->dev == fs->shm_dev && fs->shm_dev)
		return f->kind == FC_MEMFD || f->kind == FC_SYSV || f->kind == FC_ANON_SHMEM ?
		       f->kind : FC_OTHER;
	if (f->flags & FF_DELETED)
		return FC_DELETED;
	if (f->sb_magic == TMPFS_MAGIC_)
		return FC_TMPFS;
	if (f->sb_magic && !S_ISREG(f->mode))
		return FC_OTHER;
	return FC_REGULAR;
}

/* Did the last walk cut dev's superblock short? */
static bool was_cut(const struct files *fs, uint64_t dev)
{
	if (fs->cut_all)
		return true;
	for (size_t i = 0; i < fs->ncut; i++)
		if (fs->cut_devs[i] == dev)
			return true;
	return false;
}

static int on_rec(void *ctx, const struct fc_rec *r)
{
	struct files *fs = ctx;
	uint64_t dev = fcache_bpf_dev(r->dev);
	struct fc_file *f;

	if (r->kind == FCR_SB) {
		fs->cur_magic = r->ino;
		return 0;
	}
	if (r->kind == FCR_CUT) {
		fs->st.walk_cuts++;
		if (!was_cut(fs, dev) && fs->ncut < FILES_CUT_DEVS)
			fs->cut_devs[fs->ncut++] = dev;
		else if (!was_cut(fs, dev))
			fs->cut_all = true;
		return 0;
	}
	f = files_row(fs, dev, r->ino);
	if (!f)
		return -ENOMEM;
	if (f->kaddr && f->kaddr != r->inode) {
		/* The same (dev, ino) now names another inode (the number was reused). */
		f->name_tries = 0;
		f->flags &= ~(FF_DELETED | FF_STAT | FF_NO_HANDLE | FF_NAMED_AT_GEN | FF_BY_PATH |
			      FF_TREE_TRIED);
		fcache_file_set_name(f, NULL, FC_NAME_NONE, NULL);
		f->seen_gen = 0;
		f = files_row(fs, dev, r->ino);		/* queued for its name again */
	}
	if (fs->walk_shmem_only || fs->cur_magic == TMPFS_MAGIC_) {
		files_keys_add(&fs->shm_now, f);
		if (f->seen_gen && f->pages.cached != r->nrpages) {
			/* shmem changes are seen only as differences between two walks. */
			if (r->nrpages > f->pages.cached)
				f->win_adds += r->nrpages - f->pages.cached;
			else
				f->win_dels += f->pages.cached - r->nrpages;
		}
	}
	if (r->xa_flags & ~XA_OWN_FLAGS)
		files_keys_add(&fs->tagged, f);	/* dirty or writeback pages: counted now */
	f->kaddr = r->inode;
	f->sb_magic = fs->cur_magic;
	f->generation = r->gen;
	f->mode = r->mode;
	f->size = r->size;
	if (f->pages.cached != r->nrpages || !f->seen_gen)
		files_set_cached(fs, f, r->nrpages);
	if (!r->nlink && f->sb_magic != BDEVFS_MAGIC_ && dev != fs->shm_dev &&
	    !(f->flags & FF_DELETED)) {
		f->flags |= FF_DELETED;
		fs->map_inputs++;	/* a mapping may name it now */
	}
	files_set_kind(fs, f, kind_of(fs, f));
	if (f->kind == FC_BLOCK && f->name_src == FC_NAME_NONE)
		fcache_file_set_name(f, NULL, FC_NAME_NONE, "a block device's own cache: "
				 "/proc/meminfo Buffers (metadata, raw device reads)");
	f->seen_gen = fs->gen;
	return 0;
}

static void on_delta(void *ctx, const struct fc_key *k, const struct fc_delta *d)
{
	struct files *fs = ctx;
	struct fc_file *f = files_row(fs, fcache_bpf_dev(k->dev), k->ino);

	fs->taken_pages += d->adds + d->dels + d->dirtied;
	if (!f)
		return;
	f->win_adds += d->adds;
	f->win_dels += d->dels;
	files_set_cached(fs, f, d->nrpages);
	f->size = d->size;
	f->generation = d->gen;
	f->mode = d->mode;
	if (d->inode)
		f->kaddr = d->inode;
	f->seen_gen = fs->gen;
	if (!f->sb_magic)
		files_set_kind(fs, f, S_ISREG(d->mode) ? FC_REGULAR : FC_OTHER);
}

/* Rows of shmem superblocks the last re-walk saw and this one did not have no pages left
 * (or no inode); then this walk's rows are the next one's to compare with. */
static void drop_unseen_shmem(struct files *fs)
{
	struct fkeys tmp;
	size_t i;

	for (i = 0; i < fs->shm_prev.n; i++) {
		struct fc_file *f = fcache_find(fs->fc, fs->shm_prev.v[i].dev, fs->shm_prev.v[i].ino);

		if (!f || f->sb_magic != TMPFS_MAGIC_ || f->seen_gen == fs->gen || !f->pages.cached)
			continue;
		if (was_cut(fs, f->dev)) {
			files_keys_add(&fs->shm_now, f);	/* unseen, not gone: next walk */
			continue;
		}
		f->win_dels += f->pages.cached;
		files_set_cached(fs, f, 0);
	}
	tmp = fs->shm_prev;
	fs->shm_prev = fs->shm_now;
	fs->shm_now = tmp;
	fs->shm_now.n = 0;
}

/* --- the end of a refresh: rates, emptied rows, only for rows that changed --- */

static bool rate(struct fc_file *f, double dt)
{
	f->adds += f->win_adds;
	f->evictions += f->win_dels;
	f->adds_per_sec = dt > 0 ? f->win_adds / dt : 0;
	f->evictions_per_sec = dt > 0 ? f->win_dels / dt : 0;
	f->win_adds = f->win_dels = 0;
	return f->adds_per_sec > 0 || f->evictions_per_sec > 0;
}

static void finish(struct files *fs, double dt)
{
	struct fkeys rated = { 0 };
	size_t i;

	/* Last tick's moving rows that did not change this time: their rates fall to 0. */
	for (i = 0; i < fs->rated.n; i++) {
		struct fc_file *f = fcache_find(fs->fc, fs->rated.v[i].dev, fs->rated.v[i].ino);

		if (f && !(f->flags & FF_CHANGED))
			rate(f, dt);
	}
	for (i = 0; i < fs->touched.n; i++) {
		struct fc_file *f = fcache_find(fs->fc, fs->touched.v[i].dev, fs->touched.v[i].ino);

		if (!f || !(f->flags & FF_CHANGED))
			continue;	/* gone, or a key listed twice */
		f->flags &= ~FF_CHANGED;
		if (rate(f, dt))
			files_keys_add(&rated, f);
		if (!f->pages.cached && !f->watched)
			files_remove(fs, f);
	}
	fs->touched.n = 0;
	files_keys_free(&fs->rated);
	fs->rated = rated;
	fcache_bump(fs->fc);
}

static int empty_unseen(struct fc_file *f, void *arg)
{
	struct files *fs = arg;

	if (f->seen_gen != fs->gen && f->pages.cached && !f->watched && !was_cut(fs, f->dev)) {
		f->win_dels += f->pages.cached;
		files_set_cached(fs, f, 0);
	}
	return 0;
}

static int walk(struct engine *e, int mode)
{
	struct files *fs = e->files;
	struct fcbpf_walk_stats ws;
	int err;

	fs->walk_shmem_only = mode == FC_WALK_SHMEM;
	fs->cur_magic = 0;
	fs->ncut = 0;
	fs->cut_all = false;
	err = fcache_bpf_walk(fs->bpf, mode, on_rec, fs, &ws);
	fs->st.walk_ns = ws.ns;
	fs->st.walk_steps = ws.steps;
	if (mode == FC_WALK_ALL) {
		fs->st.full_walks++;
		fs->st.full_walk_ns = ws.ns;
		fs->st.full_walk_steps = ws.steps;
		/* A file cached before the start (or whose counts the delta table dropped) and
		 * not touched since is found only by a walk: walk again while they are cut. */
		if (fs->ncut || fs->cut_all)
			fs->rewalks_due = fs->rewalks_due ? fs->rewalks_due - 1 : FILES_REWALKS;
		else
			fs->rewalks_due = 0;
	}
	return err;
}

void engine_files_refresh(struct engine *e)
{
	struct files *fs = e->files;
	uint64_t now = engine_now_ns();
	double dt;

	if (!fs) {
		summary_refresh(e);
		return;
	}
	dt = (now - fs->last_ns) / 1e9;
	fs->last_ns = now;
	fs->gen++;
	fs->ticks++;
	if (fs->bpf) {
		uint64_t events = 0;
		bool lost;

		fcache_bpf_events(fs->bpf, &events);	/* before the take: it holds all of these */
		/* No event since the last take, and every one counted was taken: the table is
		 * empty, and its batch read would still pass over every bucket (65,536: ~10%
		 * of an idle refresh). */
		if (events != fs->events_seen || events != fs->taken_pages + fs->lost_base)
			fcache_bpf_take(fs->bpf, on_delta, fs);
		fs->events_seen = events;
		lost = events > fs->taken_pages + fs->lost_base;
		if (lost) {
			fs->st.rewalks++;
			fs->lost_base = events - fs->taken_pages;
			fs->heal_due = true;
		}
		if (walk(e, fs->heal_due || fs->rewalks_due ? FC_WALK_ALL : FC_WALK_SHMEM)) {
			fs->st.walk_errors++;
		} else if (fs->heal_due) {
			/* More inodes changed than the delta table holds: the walk is the truth,
			 * rows it did not see have no pages left.  Rows of a superblock it cut
			 * are left for the next full walk, and that one heals them (a row
			 * evicted meanwhile stayed listed otherwise, test_pagecache). */
			fcache_each(fs->fc, empty_unseen, fs);
			fs->heal_due = fs->ncut || fs->cut_all;
		}
		drop_unseen_shmem(fs);
	} else {
		files_proc_rows(e);
	}
	files_update_rows(e, false);
	finish(fs, dt);
	summary_refresh(e);
}

int engine_files_start(struct engine *e, char *why, size_t whylen)
{
	struct files *fs = e->files;
	int err;

	if (!fs) {
		summary_refresh(e);
		return 0;
	}
	err = files_watch_paths(e, why, whylen);
	if (err)
		return err;
	if (e->f.fcache_walk && e->f.filemap_tp) {
		char bwhy[256] = "";

		err = start_ahead_fcache(e, &fs->bpf, bwhy, sizeof(bwhy));
		if (err) {
			log_note("the page cache walk is unavailable (%s): files from /proc only",
				 bwhy);
			fs->bpf = NULL;
		}
	}
	fs->last_ns = engine_now_ns();
	fs->gen++;
	if (fs->bpf) {
		/* The tracepoints are attached before the walk, so nothing between them is
		 * missed; what the walk saw and the tracepoints also counted is made exact
		 * by cachestat of the rows that changed. */
		err = walk(e, FC_WALK_ALL);
		if (err)
			log_note("the page cache walk stopped early: %s", strerror(-err));
		fcache_bpf_take(fs->bpf, on_delta, fs);
		fs->st.source = "bpf-walk";
		fs->counts_dirtied = fcache_bpf_counts_dirtied(fs->bpf);
	} else {
		files_proc_rows(e);
		fs->st.source = "proc";
	}
	files_update_rows(e, true);
	finish(fs, 0);
	summary_refresh(e);
	return 0;
}

int engine_files_init(struct engine *e)
{
	e->fc = fcache_new();
	if (!e->fc)
		return -ENOMEM;
	if (!e->o.files)
		return 0;
	e->files = calloc(1, sizeof(*e->files));
	if (!e->files)
		return -ENOMEM;
	e->files->fc = e->fc;
	e->files->top = e->o.files_top;
	e->files->first_listed = e->o.files_first_listed;
	if (fcache_proc_shm_dev(&e->files->shm_dev))
		e->files->shm_dev = 0;	/* no memfd: such rows are named from processes */
	if (cgroup_ids_new(&e->files->cgids))
		e->files->cgids = NULL;	/* no cgroup2 mount: memcg stays null */
	return fcache_name_new(&e->files->names);
}

void engine_files_fini(struct engine *e)
{
	mem_anon_free(e->anon);
	e->anon = NULL;
	if (e->files) {
		struct fkeys *l[] = { &e->files->touched, &e->files->rated, &e->files->shm_prev,
				      &e->files->shm_now, &e->files->mapped, &e->files->unnamed,
				      &e->files->needs_proc, &e->files->watched,
				      &e->files->kinfo, &e->files->tagged,
				      &e->files->draining };

		for (size_t i = 0; i < sizeof(l) / sizeof(l[0]); i++)
			files_keys_free(l[i]);
		files_top_free(e->files);
		fcache_bpf_close(e->files->bpf);
		fcache_name_free(e->files->names);
		cgroup_ids_free(e->files->cgids);
		files_names_fini(e);
		free(e->files);
		e->files = NULL;
	}
	if (e->fc)
		fcache_each(e->fc, files_close_fd, NULL);
	fcache_free(e->fc);
	e->fc = NULL;
}
