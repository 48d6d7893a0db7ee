/* SPDX-License-Identifier: GPL-2.0 */
/* The page size mevitop models in: x86_64's base page.  Written once; everything that turns
 * addresses into page numbers uses these. */
#ifndef MEVITOP_PAGE_H
#define MEVITOP_PAGE_H

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#define PAGE_SHIFT_4K 12
#define PAGE_SIZE_4K 4096ULL

/* The page just past the byte address `end` (an exclusive end, rounded up). */
static inline uint64_t page_end_4k(uint64_t end)
{
	return (end + PAGE_SIZE_4K - 1) >> PAGE_SHIFT_4K;
}

/* `bytes` rounded up to whole pages, in bytes. */
static inline uint64_t page_round_up_4k(uint64_t bytes)
{
	return page_end_4k(bytes) << PAGE_SHIFT_4K;
}

/* `bytes` rounded up to the system's pages: the length of a mapping of a kernel object
 * (BPF arrays and rings are mapped in whole system pages, whatever the model's size). */
static inline size_t page_round_up_sys(size_t bytes)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (bytes + pg - 1) / pg * pg;
}

#endif
