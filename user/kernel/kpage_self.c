// SPDX-License-Identifier: GPL-2.0
/*
 * The observer's own pages: the PFNs mevitop itself maps from files (its binary, libc,
 * libncursesw, libbpf, ...) and the vdso.  A page of libc that only a watched process
 * and mevitop have touched has a map count of 2 while mevitop runs, so without this the
 * watched process's USS would lose it and its PSS count half of it -- figures that
 * smaps_rollup read once mevitop has exited calls private (a long-lived bash: 2 to 17
 * pages).  The sharing passes take these mappings out of each count they look up.
 *
 * Anonymous memory is not read: no watched process maps mevitop's private pages, and its
 * reservations (ASan's shadow) would make the read cost terabytes of absent entries.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kernel/kpage.h"
#include "kernel/procfs.h"
#include "lib/array.h"
#include "lib/page.h"

#define SELF_CHUNK	1024	/* pagemap entries a pread */

struct self_ctx {
	struct kpage_self *s;
	int fd;
	int err;
};

/* Files and the vdso: the pages other processes map too.  [vvar] and the like have no
 * struct page (pagemap gives no PFN). */
static bool wanted(const struct maps_entry *m)
{
	return m->path[0] == '/' || !strcmp(m->path, "[vdso]");
}

static int on_map(const struct maps_entry *m, void *arg)
{
	struct self_ctx *c = arg;
	struct kpage_self *s = c->s;
	uint64_t ent[SELF_CHUNK], at, end = m->end / PAGE_SIZE_4K;
	size_t i, n;

	if (!wanted(m))
		return 0;
	for (at = m->start / PAGE_SIZE_4K; at < end; at += n) {
		n = end - at < SELF_CHUNK ? end - at : SELF_CHUNK;
		c->err = kpage_read_entries(c->fd, at, n, ent);
		if (c->err)
			return 1;
		s->entries += n;
		for (i = 0; i < n; i++) {
			if (!kpm_present(ent[i]) || !kpm_pfn(ent[i]))
				continue;
			if (array_reserve(s->pfns, s->n, s->cap, 1024)) {
				c->err = -ENOMEM;
				return 1;
			}
			s->pfns[s->n++] = kpm_pfn(ent[i]);
		}
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int kpage_self_read(struct kpage_self *s)
{
	struct self_ctx c = { .s = s };
	int err;

	s->n = 0;
	c.fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (c.fd < 0)
		return -errno;
	err = procfs_read_maps(getpid(), on_map, &c);
	close(c.fd);
	if (!err)
		err = c.err;
	if (err)
		s->n = 0;	/* counts stay as the kernel gives them */
	qsort(s->pfns, s->n, sizeof(*s->pfns), cmp_u64);
	return err;
}

uint64_t kpage_self_count(const struct kpage_self *s, uint64_t pfn)
{
	size_t i = array_lower_bound(s->pfns, s->n, pfn), j = i;

	while (j < s->n && s->pfns[j] == pfn)
		j++;
	return j - i;
}

void kpage_self_discount(const struct kpage_self *s, const uint64_t *pfns, uint64_t *counts,
			 size_t n)
{
	size_t i, j = n && s->n ? array_lower_bound(s->pfns, s->n, pfns[0]) : s->n;

	for (i = 0; i < n && j < s->n; i++) {
		uint64_t mine = 0;

		while (j < s->n && s->pfns[j] < pfns[i])
			j++;
		for (; j + mine < s->n && s->pfns[j + mine] == pfns[i]; mine++)
			;
		/* The watched process maps it too: once at least, whatever a race says. */
		if (mine && counts[i])
			counts[i] = counts[i] > mine ? counts[i] - mine : 1;
	}
}

void kpage_self_free(struct kpage_self *s)
{
	free(s->pfns);
	memset(s, 0, sizeof(*s));
}
