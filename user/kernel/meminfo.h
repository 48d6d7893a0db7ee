/* SPDX-License-Identifier: GPL-2.0 */
/* /proc/meminfo: the fields the memory summary adds up (bytes). */
#ifndef MEVITOP_MEMINFO_H
#define MEVITOP_MEMINFO_H

#include <stdint.h>

struct meminfo {
	uint64_t mem_total, mem_free, mem_available, buffers, cached, swap_cached;
	uint64_t anon_pages, shmem, slab, kernel_stack, page_tables, sec_page_tables;
	uint64_t percpu, vmalloc_used, swap_total, swap_free;
	uint64_t mapped;
};

/* 0, or -errno (the file cannot be read, or MemTotal is missing). */
int meminfo_read(struct meminfo *out);
/* The same from text (what the file holds), for tests and fuzzing. */
int meminfo_parse(const char *text, struct meminfo *out);

#endif
