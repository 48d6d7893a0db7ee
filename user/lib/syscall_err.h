/* SPDX-License-Identifier: GPL-2.0 */
/* What a raw system call's return value means (a call made in another process, or a
 * syscall(2) that bypasses libc's errno). */
#ifndef MEVITOP_SYSCALL_ERR_H
#define MEVITOP_SYSCALL_ERR_H

#include <stdbool.h>

/* The kernel returns -errno with errno in [1, MAX_ERRNO] (include/linux/err.h); any other
 * value is a result, "negative" ones included (mmap may return a high address). */
#define MAX_ERRNO	4095

static inline bool syscall_failed(long ret)
{
	return ret < 0 && ret >= -MAX_ERRNO;
}

#endif
