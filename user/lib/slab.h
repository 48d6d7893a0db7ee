/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixed-size objects carved from 64 KiB blocks, without malloc's 8-byte header and 16-byte
 * rounding per object: the model's ~140,000 mappings at 5,000 processes are 80 bytes each,
 * 96 through malloc (issue 24).  Freed objects are reused, blocks are kept.  Thread-safe.
 * Under AddressSanitizer each object is its own malloc, so use-after-free is still caught.
 */
#ifndef MEVITOP_SLAB_H
#define MEVITOP_SLAB_H

#include <pthread.h>
#include <stddef.h>

struct slab {
	size_t size;		/* object size, rounded up to a pointer's alignment */
	pthread_mutex_t lock;
	void *free;		/* freed objects, linked through their first word */
	char *next, *end;	/* the current block's unused part */
};

#define SLAB_INIT(type) { .size = (sizeof(type) + sizeof(void *) - 1) & ~(sizeof(void *) - 1), \
			  .lock = PTHREAD_MUTEX_INITIALIZER }

/* An object of s->size bytes, zeroed; NULL when out of memory. */
void *slab_alloc(struct slab *s);
void slab_free(struct slab *s, void *obj);

#endif
