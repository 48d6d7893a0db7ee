// SPDX-License-Identifier: GPL-2.0
/* A shared library whose function touches memory: --stacks must name it by this library's
 * symbol (tests/integration/test_stacks.py loads it into wl_stacks with dlopen). */
#include <stddef.h>

__attribute__((noinline)) void wl_lib_touch(char *base, size_t pages)
{
	size_t i;

	for (i = 0; i < pages; i++)
		((volatile char *)base)[i * 4096] = 1;
}
