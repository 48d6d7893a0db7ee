/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inject_maps.h - finding things in a seized target's address space for inject.c: a
 * mapping by its /proc/PID/maps name ("[stack]", "[anon:mevitop-scratch]"), a byte
 * pattern in its executable code (read through /proc/PID/mem, never written), and a
 * scratch page a previous attach left behind.
 */
#ifndef MEVITOP_INJECT_MAPS_H
#define MEVITOP_INJECT_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct inj_vma {
	uint64_t start, end;
};

/* The mapping named exactly @name; 0, -ENOENT, or -errno. */
int injmap_find_named(pid_t pid, const char *name, struct inj_vma *out);


/* A matcher: offset of the first match in p[0..n), or -1. */
typedef long (*injmap_match_fn)(const uint8_t *p, size_t n);

/*
 * Search the executable mappings of @pid for @match, in this order: those whose name
 * contains @first (NULL: none first), then all the others.  *addr gets the match.
 * Returns 0, -ENOENT, or -errno.
 */
int injmap_find_code(pid_t pid, int memfd, const char *first, injmap_match_fn match,
		     uint64_t *addr);

/*
 * A scratch page left by an earlier, killed attach: the mapping named @name, or else a small
 * private anonymous r-x mapping whose first bytes are @magic (the kernel may lack
 * anonymous VMA names) or whose first page is all zeros (a monitor killed right after
 * the bootstrap's mmap, before it wrote the page: adopting it keeps the leftover to one
 * mapping, and a program has no use for a page of zeros it can only execute).
 * Returns 0, -ENOENT, or -errno.
 */
int injmap_find_scratch(pid_t pid, int memfd, const char *name, const void *magic,
			size_t magic_len, struct inj_vma *out);

#endif /* MEVITOP_INJECT_MAPS_H */
