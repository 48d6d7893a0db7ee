/* SPDX-License-Identifier: GPL-2.0 */
/* The one clock every time stamp of mevitop is read from. */
#ifndef MEVITOP_CLOCK_H
#define MEVITOP_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds: the clock the kernel's records and the JSON "monotonic"
 * are on. */
uint64_t clock_mono_ns(void);

#endif
