// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "lib/slab.h"

#define SLAB_BLOCK (64u << 10)

#if defined(__SANITIZE_ADDRESS__)
#define SLAB_BY_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_BY_MALLOC 1
#endif
#endif

void *slab_alloc(struct slab *s)
{
	void *obj;

#ifdef SLAB_BY_MALLOC
	return calloc(1, s->size);
#endif
	pthread_mutex_lock(&s->lock);
	obj = s->free;
	if (obj) {
		s->free = *(void **)obj;
	} else {
		if (s->end - s->next < (ptrdiff_t)s->size) {
			char *b = malloc(SLAB_BLOCK);	/* kept: objects are reused */

			if (!b) {
				pthread_mutex_unlock(&s->lock);
				return NULL;
			}
			s->next = b;
			s->end = b + SLAB_BLOCK;
		}
		obj = s->next;
		s->next += s->size;
	}
	pthread_mutex_unlock(&s->lock);
	memset(obj, 0, s->size);
	return obj;
}

void slab_free(struct slab *s, void *obj)
{
	if (!obj)
		return;
#ifdef SLAB_BY_MALLOC
	free(obj);
	return;
#endif
	pthread_mutex_lock(&s->lock);
	*(void **)obj = s->free;
	s->free = obj;
	pthread_mutex_unlock(&s->lock);
}
