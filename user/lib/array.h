/* SPDX-License-Identifier: GPL-2.0 */
/* Growable arrays: a pointer, a count and a capacity kept side by side. */
#ifndef MEVITOP_ARRAY_H
#define MEVITOP_ARRAY_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Makes room for `need` elements in v (capacity cap), doubling cap (from `first`, > 0)
 * until they fit.  0 on success; -ENOMEM (out of memory, or a size no array can have)
 * leaves v and cap as they were: the caller says so or fails, it never goes on as if the
 * element were stored. */
#define array_reserve_n(v, need, cap, first) ({					\
	int err_ = 0;								\
	size_t need_ = (need);							\
	if (need_ > (size_t)(cap)) {						\
		size_t max_ = SIZE_MAX / sizeof(*(v));				\
		size_t c_ = (cap) ? (size_t)(cap) * 2 : (size_t)(first);	\
		while (c_ < need_ && c_ <= max_ / 2)				\
			c_ *= 2;						\
		__typeof__(v) nv_ = c_ < need_ || c_ > max_ ? NULL :		\
				    realloc((v), c_ * sizeof(*(v)));		\
		if (nv_) {							\
			(v) = nv_;						\
			(cap) = c_;						\
		} else {							\
			err_ = -ENOMEM;						\
		}								\
	}									\
	err_;									\
})

/* Makes room for one more element in v (n used of cap). */
#define array_reserve(v, n, cap, first) array_reserve_n(v, (size_t)(n) + 1, cap, first)

/* Resizes v to exactly n > 0 elements (buffers sized to what a frame or a load needs, not
 * appended to).  0 on success; -ENOMEM (out of memory, or a size
 * no array can have) leaves v as it was. */
#define array_resize(v, n) ({							\
	size_t n_ = (n);							\
	__typeof__(v) nv_ = n_ > SIZE_MAX / sizeof(*(v)) ? NULL :		\
			    realloc((v), n_ * sizeof(*(v)));			\
	if (nv_)								\
		(v) = nv_;							\
	nv_ ? 0 : -ENOMEM;							\
})

/* The first index of v[0..n), ascending, whose element is not below key (n if none). */
#define array_lower_bound(v, n, key) ({						\
	size_t lo_ = 0, hi_ = (n);						\
	while (lo_ < hi_) {							\
		size_t mid_ = lo_ + (hi_ - lo_) / 2;				\
		if ((v)[mid_] < (key))						\
			lo_ = mid_ + 1;						\
		else								\
			hi_ = mid_;						\
	}									\
	lo_;									\
})

/* Appends s and its NUL to a blob of names (*len bytes used of *cap), giving its offset:
 * tables that are copied whole keep their strings in one block.  0 or -ENOMEM. */
static inline int array_add_str(char **v, size_t *len, size_t *cap, const char *s,
				size_t *off)
{
	size_t n = strlen(s) + 1;

	if (array_reserve_n(*v, *len + n, *cap, 4096))
		return -ENOMEM;
	memcpy(*v + *len, s, n);
	*off = *len;
	*len += n;
	return 0;
}

#endif
