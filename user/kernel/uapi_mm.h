/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mm uapi values the engine decodes from syscall records (mmap flags, prot, mremap,
 * mlockall, madvise advice): the kernel's own headers, plus what Debian 12's
 * linux-libc-dev (6.1) does not have yet.  Values are the kernel's ABI (stable).
 */
#ifndef MEVITOP_UAPI_MM_H
#define MEVITOP_UAPI_MM_H

#include <linux/mman.h>

#ifndef MADV_GUARD_INSTALL	/* Linux 6.13 */
#define MADV_GUARD_INSTALL	102
#define MADV_GUARD_REMOVE	103
#endif

#endif
