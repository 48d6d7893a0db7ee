/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process's mappings through the PROCMAP_QUERY ioctl on /proc/PID/maps (Linux 6.11+): one
 * binary record per VMA, no text to format in the kernel or to parse here.  The same
 * entries, in the same order, as procfs_read_maps(), which is the fallback.
 */
#ifndef MEVITOP_PROCMAP_H
#define MEVITOP_PROCMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "kernel/procfs.h"

/* Does this kernel answer PROCMAP_QUERY (asked once, on /proc/self/maps)? */
bool procmap_query_supported(void);

/* Calls cb for each mapping of pid in address order, as procfs_read_maps() does; -ENOTTY
 * where the ioctl is missing, -ESRCH when the process is gone. */
int procmap_read_maps(pid_t pid, maps_cb cb, void *arg);
/* One PROCMAP_QUERY on an open /proc/PID/maps: the mapping covering addr or the next one
 * (e->path is name, or ""); -ENOENT when none is left. */
int procmap_query(int fd, uint64_t addr, struct maps_entry *e, char *name, size_t len);
/* x86_64's [vsyscall] gate area, which the text lists last and no VMA walk sees; NULL
 * where this kernel has none. */
const struct maps_entry *procmap_gate(void);
/*
 * The layout the cheaper way (text: the --disable maps_text switch clears it): one read()
 * of the text, parsed by hand, costs less than an ioctl a mapping at every size measured
 * (6.18, 2026-12-04: 24 against 27 µs for a 25-mapping sleeper, 23 against 34 for 43
 * mappings, 67-82 against 138-148 for 223), unless a name may hold an escape: then
 * PROCMAP_QUERY (procfs_read_maps_exact()).  The same entries either way.
 */
int procmap_read_layout(pid_t pid, bool text, maps_cb cb, void *arg);
/* Takes the gate area from our own maps now: after it, procmap_read_maps() keeps no state
 * of its own and may run on several threads at once. */
void procmap_prepare(void);

#endif
