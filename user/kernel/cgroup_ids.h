/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory cgroup ids (kernfs node ids: what BPF reads from a cgroup's kn->id, and the st_ino
 * of its directory) to paths relative to the memory controller's hierarchy root ("/a/b",
 * "/" for the root): the v1 memory mount where the layout is hybrid, else cgroup2.  From a
 * walk of that mount's tree, walked again on a miss (at most every 200 ms).
 */
#ifndef MEVITOP_CGROUP_IDS_H
#define MEVITOP_CGROUP_IDS_H

#include <stdint.h>

struct cgids;

int cgroup_ids_new(struct cgids **out);		/* -ENOENT: no cgroup2 mount */
void cgroup_ids_free(struct cgids *c);
/* The path of id, or NULL (a cgroup removed since, or one outside our cgroup namespace). */
const char *cgroup_ids_path(struct cgids *c, uint64_t id, uint64_t now_ns);

#endif
