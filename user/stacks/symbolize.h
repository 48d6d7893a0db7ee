/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names for user addresses, with elfutils' libdwfl: function+offset, and file:line where the
 * module has debug info.  One Dwfl per process (its modules are the ELF files mapped there,
 * PIE and shared libraries at their load bias, the vDSO read from the process), reported
 * from /proc/PID/maps when the first stack of the process arrives and again when an address
 * falls outside every known module (a library loaded since).  A process gone before its
 * stacks were drained is reported from the model's mappings instead (the layout when the
 * stack was taken), file by file, only where the path still names the mapped file.
 *
 * Never a wrong name: an address outside every module is "[unknown]", or "[anon:0x...]"
 * when the caller knows it lies in anonymous executable memory (JIT code).
 */
#ifndef MEVITOP_STACKS_SYMBOLIZE_H
#define MEVITOP_STACKS_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model.h"

struct symbolizer;

struct sym_frame {
	uint64_t addr;		/* as sampled (a return address for callers) */
	char *name;		/* "func+0x1c", "[anon:0x...]", "[unknown]" (owned) */
	char *func;		/* function alone, NULL when unknown (owned) */
	char *module;		/* module file name, NULL when unknown (owned) */
	char *file;		/* source file, NULL without debug info (owned) */
	int line;
	uint64_t func_start;	/* the function's first byte, 0 when unknown */
};

int symbolizer_new(struct symbolizer **out);
void symbolizer_free(struct symbolizer *s);
/* Names addr in pid.  caller: addr is a return address (the call is the byte before it).
 * anon_exec: addr lies in anonymous executable memory, as the caller's model says.
 * Returns 0 (out filled, even with "[unknown]") or -ENOMEM. */
int symbolizer_name(struct symbolizer *s, const struct proc *p, uint64_t addr, bool caller,
		    bool anon_exec, struct sym_frame *out);
/* Forgets pid's modules (exec, exit). */
void symbolizer_forget(struct symbolizer *s, pid_t pid);
void sym_frame_clear(struct sym_frame *f);

#endif
