/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names for user addresses, with elfutils' libdwfl: function+offset, and file:line where the
 * module has debug info.
 *
 * An address is placed with the model's mapping (the layout when the stack arrived, so a
 * process that has exited since still resolves): file offset -> the ELF's own address
 * through its PT_LOAD headers, which covers PIE, shared libraries and fixed executables
 * alike.  Each ELF file is opened once for every process that maps it (one Dwfl per file,
 * keyed by device and inode), and only while its path still names that file (a deleted or
 * replaced binary is never read in its place).  The vDSO is named from mevitop's own (the
 * same kernel image in every process).
 *
 * Never a wrong name: an address no symbol's extent covers is "[unknown]"; anonymous
 * executable memory (JIT code) is "[anon:0x...]".
 */
#ifndef MEVITOP_STACKS_SYMBOLIZE_H
#define MEVITOP_STACKS_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

struct symbolizer;

struct sym_frame {
	uint64_t addr;		/* as sampled (a return address for callers) */
	char *name;		/* "func+0x1c", "[anon:0x...]", "[unknown]" (owned) */
	char *func;		/* function alone, NULL when unknown (owned) */
	char *module;		/* module file name, NULL when unknown (owned) */
	char *file;		/* source file, NULL without debug info (owned) */
	int line;
	uint64_t func_start;	/* the function's first byte in the process, 0 when unknown */
};

int symbolize_new(struct symbolizer **out);
void symbolize_free(struct symbolizer *s);
/* Names addr in p.  caller: addr is a return address (the call is the byte before it).
 * Returns 0 (out filled, even with "[unknown]") or -ENOMEM. */
int symbolize_name(struct symbolizer *s, const struct proc *p, uint64_t addr, bool caller,
		   struct sym_frame *out);
void symbolize_frame_clear(struct sym_frame *f);

#endif
