/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a watched process's code after the fact: from its memory while it lives, else
 * from the file its mapping maps, but only if that path still names the same file (same
 * device and inode as when it was mapped: a deleted or replaced binary is never read in
 * its place).  Used to check frame-pointer chains and to name the frames of a process that
 * exited before its stacks were drained.
 */
#ifndef MEVITOP_STACKS_TARGET_CODE_H
#define MEVITOP_STACKS_TARGET_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model.h"

/* len bytes at addr of p's address space; false if they cannot be known. */
bool target_code_read(const struct proc *p, uint64_t addr, void *buf, size_t len);
/* m's file, if its path still names the file it maps. */
bool target_mapping_file_same(const struct mapping *m);

#endif
