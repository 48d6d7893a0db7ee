/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The anonymous half of the memory summary's "accounted" (doc/pagecache.md): watched
 * processes' anonymous pages, each counted once.  Per process, smaps_rollup's Pss_Anon
 * (kernel/rollup.h), read again when the model sees its anonymous resident count change,
 * when a child of it appears (fork shares its pages), and every ANON_REREAD_NS otherwise;
 * within a time budget per refresh, the processes never read first.
 */
#ifndef MEVITOP_ENGINE_MEM_ANON_H
#define MEVITOP_ENGINE_MEM_ANON_H

#include <stdint.h>

struct engine;
struct anon_acct;

/* Whether the summary's anonymous memory is AnonPages less mevitop's own, not a rollup
 * per process: when the whole system is watched (no -p, no filter) and the switch
 * meminfo_anon is not off.  Every anonymous page in AnonPages is mapped by some process,
 * and every process but mevitop is watched then, so the two sums are the same pages; the
 * kernel's is exact at the instant it is read, where 5,000 rollups read over 0.1 s are
 * not (each is also rounded down to the kB), and it costs one read instead of a
 * page-table walk per process: ~20% of a 5,000-process start's CPU (issue 24). */
bool mem_anon_from_meminfo(bool whole_system, uint32_t disabled);
/* The watched processes' anonymous bytes counted once (a process not read yet, or whose
 * smaps_rollup cannot be read, counts its model's resident anonymous pages); *pending:
 * processes not read yet; *unreadable: those that could not be.  With
 * e->anon_meminfo, anon_pages (AnonPages, bytes) less mevitop's own Pss_Anon. */
uint64_t mem_anon_refresh(struct engine *e, uint64_t anon_pages, uint64_t *pending,
			  uint64_t *unreadable);
void mem_anon_free(struct anon_acct *a);

#endif
