/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared, reference-counted copies of strings that repeat across processes: the model's
 * mapping paths.  On a 5,000-process host most of 185,000 mappings name one of a few
 * hundred files (libc, ld.so, the locale files), and a strdup() each was 3.3 MiB of heap
 * (issue 24).  Thread-safe: copies of the model are made and freed outside the engine lock.
 */
#ifndef MEVITOP_STRPOOL_H
#define MEVITOP_STRPOOL_H

/* The pool's copy of s, one more reference to it; NULL when out of memory. */
const char *strpool_get(const char *s);
/* One more reference to a string strpool_get() returned (no look-up); NULL is ignored. */
const char *strpool_ref(const char *s);
/* One reference fewer to a string strpool_get() returned (NULL is ignored); the last frees
 * it. */
void strpool_put(const char *s);

#endif
