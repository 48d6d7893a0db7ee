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

/* The watched processes' anonymous bytes counted once (a process not read yet, or whose
 * smaps_rollup cannot be read, counts its model's resident anonymous pages); *pending:
 * processes not read yet; *unreadable: those that could not be. */
uint64_t mem_anon_refresh(struct engine *e, uint64_t *pending, uint64_t *unreadable);
void mem_anon_free(struct anon_acct *a);

#endif
