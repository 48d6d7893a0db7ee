// SPDX-License-Identifier: GPL-2.0
/*
 * arch_uffd_dev.c (arm64) - a stub: no chain code yet (exact/arch.h describes the chain;
 * arch_unsupported() keeps exact mode from getting here).
 */
#include "exact/arch.h"

size_t arch_uffd_dev_build(uint8_t *buf, size_t len, uint64_t code_addr, uint64_t restore_addr)
{
	return 0;
}
