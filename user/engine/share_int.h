/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sharing passes' state (share.c), which the cursor line's search (share_who.c) reads
 * too: its pagemap buffer, its kpagecount/kpageflags files and the tick it is in.  Types
 * only.
 */
#ifndef MEVITOP_ENGINE_SHARE_INT_H
#define MEVITOP_ENGINE_SHARE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "engine/engine.h"
#include "kernel/kpage.h"
#include "model/model.h"

#define ENTRY_CHUNK		4096		/* pagemap entries a read */

struct share_pend;
struct kcache_ent;

struct sharing {
	struct kpage k;
	struct share_stats st;
	struct share_pend *pend;
	size_t npend, cappend;
	uint64_t *pfns, *counts, *flags, *fout;
	size_t *fidx;			/* which misses' flags are read */
	uint64_t *mpfn, *mcount, *mflag;	/* the cache's misses, distinct, ascending */
	size_t *midx;			/* pend entry -> its miss, SIZE_MAX: cached */
	size_t caplook;
	struct kcache_ent *cache;	/* 1 << KCACHE_BITS entries */
	uint32_t gen;			/* this tick's (cache entries of others are stale) */
	uint64_t tick_t0, tick_read0;	/* when this tick began, pages_read then */
	uint64_t tick_ns_max;		/* the tick's time budget */
	uint64_t ent[ENTRY_CHUNK];
	size_t cursor;			/* round robin over engine_procs */
	uint64_t ksm_sharing;		/* /sys/kernel/mm/ksm/pages_sharing at the last tick */
	uint64_t ksm_scanned;		/* ... and ksmd's progress (kpage_ksm_scanned) */
	/* Processes that moved, counted since the start, by what their moves can change the
	 * map counts of: [WORLD_FILE] file, shmem and vdso pages (a process came or went, or
	 * its file-backed resident pages moved), [WORLD_ANON] anonymous ones (the same, of
	 * processes whose anonymous memory may be shared).  world_tick counts them. */
	uint64_t world[2];
	bool world_seen;		/* every process is watched: the epochs see every mover */
	/* engine_share_who's last answer, good for the rest of its tick. */
	pid_t who_pid;
	uint64_t who_page;
	uint32_t who_gen;		/* 0: none */
	struct share_who who;
	struct proc **who_todo;		/* its processes to search by PFN */
	size_t nwho_todo, capwho_todo;
	/* mevitop's own file and vdso PFNs (kpage_self.c), read at the first lookup of a
	 * tick (self_gen); self_off: --disable observer, counts as the kernel gives them. */
	struct kpage_self self;
	uint32_t self_gen;
	bool self_off;
};

/* Anonymous memory: private to a process unless a fork or KSM shares it. */
static inline bool is_anon(const struct mapping *m)
{
	return m->kind == MK_ANON || m->kind == MK_HEAP || m->kind == MK_STACK;
}

#endif
