/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Is a frame-pointer chain to be trusted?  The kernel walks %rbp whatever the code was built
 * with; in code without frame pointers %rbp is an ordinary register and the "return
 * addresses" it yields are garbage, or real but skip callers.  These checks read the
 * target's code (stacks/target_code.h) so a caller is named only when it must be the caller.
 * x86_64 only.
 */
#ifndef MEVITOP_STACKS_UNWIND_CHECK_H
#define MEVITOP_STACKS_UNWIND_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include "model/model.h"

/* True if the bytes before ra in pid are a call instruction (ra is its return address).
 * *target is the callee of a direct call (call rel32), 0 for an indirect one. */
bool unwind_check_call_precedes(const struct proc *p, uint64_t ra, uint64_t *target);
/* The function at func_start sets up a frame pointer (endbr64? push %rbp; mov %rsp,%rbp) and
 * pc (inside it) is past that prologue: then %rbp is this function's frame, and the next
 * return address on the chain is its caller's. */
bool unwind_check_frame_set_up(const struct proc *p, uint64_t func_start, uint64_t pc);

/* If stub is a PLT entry ([endbr64] [bnd] jmp *GOT(%rip)), *dest is where its GOT slot
 * points now (in the live process: a slot read back from the file is not relocated, and
 * names nothing). */
bool unwind_check_plt_dest(const struct proc *p, uint64_t stub, uint64_t *dest);

#endif
