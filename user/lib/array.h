/* SPDX-License-Identifier: GPL-2.0 */
/* Growable arrays: a pointer, a count and a capacity kept side by side. */
#ifndef MEVITOP_ARRAY_H
#define MEVITOP_ARRAY_H

#include <errno.h>
#include <stdlib.h>

/* Makes room for one more element in v (n used of cap), doubling cap from `first`.
 * 0 on success; -ENOMEM leaves v and cap as they were. */
#define array_reserve(v, n, cap, first) ({					\
	int err_ = 0;								\
	if ((n) >= (cap)) {							\
		size_t c_ = (cap) ? (size_t)(cap) * 2 : (size_t)(first);	\
		__typeof__(v) nv_ = realloc((v), c_ * sizeof(*(v)));		\
		if (nv_) {							\
			(v) = nv_;						\
			(cap) = c_;						\
		} else {							\
			err_ = -ENOMEM;						\
		}								\
	}									\
	err_;									\
})

/* Resizes v to exactly n > 0 elements (buffers sized to what a frame or a load needs, not
 * appended to).  0 on success; -ENOMEM leaves v as it was. */
#define array_resize(v, n) ({							\
	__typeof__(v) nv_ = realloc((v), (size_t)(n) * sizeof(*(v)));		\
	if (nv_)								\
		(v) = nv_;							\
	nv_ ? 0 : -ENOMEM;							\
})

#endif
