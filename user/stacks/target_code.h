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

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"

/* len bytes at addr of p's address space; false if they cannot be known. */
bool target_code_read(const struct proc *p, uint64_t addr, void *buf, size_t len);
/*
 * The path to open m's file by, in @buf: /proc/PID/root/PATH while @p lives - the path in
 * /proc/PID/maps is the one the process sees, and a container's root is not ours - else
 * PATH; false if that path no longer names the file it maps.
 */
#define TARGET_PATH_MAX	(PATH_MAX + 32)	/* "/proc/PID/root" and a path */
bool target_code_mapping_file_path(const struct proc *p, const struct mapping *m, char *buf,
				   size_t len);

#endif
