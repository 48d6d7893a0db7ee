/* SPDX-License-Identifier: GPL-2.0 */
/* What model.c and proc.c share: the page states a process keeps a page set for (a page in
 * none of them is not resident), and the copy of a layout that proc_clone makes. */
#ifndef MEVITOP_MODEL_INT_H
#define MEVITOP_MODEL_INT_H

#include "model/model.h"

#define node_map(n) itree_entry(n, struct mapping, node)

/* static: each file's loops over it fold to constants. */
static const enum page_state model_tracked[] = { PS_RESIDENT, PS_SWAPPED, PS_UNTRACKED };
#define MODEL_NTRACKED 3
_Static_assert(sizeof(((struct proc_figs *)0)->counts) == MODEL_NTRACKED * sizeof(uint64_t),
	       "struct proc_figs' counts: one per tracked state");

/* Copies p's mappings into c, which has none.  0 or -ENOMEM (c keeps what was copied). */
int model_copy_layout(struct proc *c, const struct proc *p);

#endif
