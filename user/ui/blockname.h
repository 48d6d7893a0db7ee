/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a block of the packed heatmap is called, and which mappings form one object.
 * No curses here: the layout needs the names' widths before anything is drawn.
 */
#ifndef MEVITOP_UI_BLOCKNAME_H
#define MEVITOP_UI_BLOCKNAME_H

#include <stdbool.h>
#include <stddef.h>
#include "model/model.h"

/* Longest short name (characters); longer ones are cut. */
#define BLOCK_NAME_MAX 12

/* The mapping's short name into buf (at least BLOCK_NAME_MAX + 1 bytes): a file's base name,
 * an anonymous mapping's own name ([anon:NAME] -> NAME), a memfd's name, else its kind.
 * Returns its length. */
size_t blockname_of(const struct mapping *m, char *buf, size_t len);
/* True when m continues the object prev started: the next segment of the same file, the
 * bss right after a file's writable segment, or a thread's stack right above its guard
 * page.  Only contiguous mappings continue one another. */
bool blockname_continues(const struct mapping *prev, const struct mapping *m);

#endif
