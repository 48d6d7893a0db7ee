// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's page cache side: the memory summary and the file table (model/fcache.h),
 * refreshed once per tick under the engine lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine_int.h"
#include "meminfo.h"

const struct mem_summary *engine_memory(struct engine *e)
{
	return &e->mem;
}

struct fcache *engine_fcache(struct engine *e)
{
	return e->fc;
}

/* Resident pages of the process's anonymous mappings (what "accounted" adds for it; its
 * shared and file pages are the files' and counted there). */
static uint64_t anon_resident(const struct proc *p)
{
	const struct mapping *m;
	uint64_t n = 0;

	for (m = model_first(p); m; m = model_next(m))
		if (m->kind == MK_ANON || m->kind == MK_HEAP || m->kind == MK_STACK)
			n += model_count(p, PS_RESIDENT, mapping_start(m), mapping_end(m));
	return n;
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

void engine_files_refresh(struct engine *e)
{
	struct meminfo mi;
	struct fc_totals t;
	uint64_t anon = 0;
	size_t i;

	if (meminfo_read(&mi) == 0) {
		summary_from(&e->mem, &mi);
		e->mem.ts_ns = e->now_ns ? e->now_ns : engine_now_ns();
	}
	for (i = 0; i < NBUCKETS; i++)
		for (struct proc *p = e->buckets[i]; p; p = p->hnext)
			if (!p->exited)
				anon += anon_resident(p);
	fcache_totals(e->fc, &t);
	e->mem.accounted = (anon + t.pages.cached) * PAGE_SIZE_4K;
}

int engine_files_init(struct engine *e)
{
	e->fc = fcache_new();
	return e->fc ? 0 : -ENOMEM;
}

void engine_files_fini(struct engine *e)
{
	fcache_free(e->fc);
	e->fc = NULL;
}
