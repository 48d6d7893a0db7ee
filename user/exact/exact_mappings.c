// SPDX-License-Identifier: GPL-2.0
/*
 * exact_mappings.c - which mappings a userfaultfd covers, and the pieces of a range that
 * are (or could be) registered: shared by the hooks (exact_track.c) and the fast
 * variant's scans (exact_fast.c).  Engine thread, engine lock held (but
 * mappings_eligible_entry, which reads nothing but its arguments).
 */
#include <errno.h>
#include <stdlib.h>
#include "lib/array.h"
#include "exact/exact_int.h"
#include "model/model.h"
#include "kernel/pagemap.h"

int mappings_pagemap_fd(struct xproc *xp)
{
	if (xp->pagemap_fd < 0)
		xp->pagemap_fd = pagemap_open(xp->pid);
	return xp->pagemap_fd;
}

bool mappings_eligible_entry(const char *path, uint32_t perms)
{
	enum map_kind k = map_kind_classify(path, perms, false);

	return !(perms & MP_SHARED) && (k == MK_ANON || k == MK_HEAP || k == MK_STACK);
}

static bool eligible(const struct mapping *m)
{
	return !(m->perms & MP_SHARED) && !(m->flags & (MF_HUGETLB | MF_PFNMAP)) &&
	       (m->kind == MK_ANON || m->kind == MK_HEAP || m->kind == MK_STACK);
}

int mappings_collect(const struct proc *p, uint64_t start, uint64_t end, bool uffd_only,
		     struct span **out, size_t *nout)
{
	struct mapping *m = model_find(p, start);
	struct span *v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	*nout = 0;
	if (!m)
		m = model_find_ge(p, start);
	for (; m && mapping_start(m) < end; m = model_next(m)) {
		uint64_t s = mapping_start(m) > start ? mapping_start(m) : start;
		uint64_t t = mapping_end(m) < end ? mapping_end(m) : end;

		if (uffd_only ? !(m->flags & MF_UFFD) : (!eligible(m) || (m->flags & MF_UFFD)))
			continue;
		if (n && v[n - 1].end == s) {
			v[n - 1].end = t;
			continue;
		}
		if (array_reserve(v, n, cap, 16)) {
			free(v);
			return -ENOMEM;
		}
		v[n++] = (struct span){ s, t };
	}
	*out = v;
	*nout = n;
	return 0;
}
