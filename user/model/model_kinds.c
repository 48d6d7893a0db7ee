// SPDX-License-Identifier: GPL-2.0
/* A process's pages per kind of mapping and its largest resident mappings (model.h's
 * model_kinds), kept with the generation they were counted at: a scrape of an idle
 * process walks no tree. */
#include <stdlib.h>
#include <string.h>
#include "model/model.h"

/* Keeps k->top the k->cap largest resident mappings, largest first; of equal ones the
 * lower address first. */
static void top_insert(struct proc_kinds *k, const struct mapping *m, uint64_t resident)
{
	size_t i;

	if (!k->cap || !resident)
		return;
	if (k->ntop == k->cap && k->top[k->cap - 1].resident >= resident)
		return;
	i = k->ntop < k->cap ? k->ntop++ : k->cap - 1;
	for (; i > 0 && k->top[i - 1].resident < resident; i--)
		k->top[i] = k->top[i - 1];
	k->top[i] = (struct model_top){ .m = m, .resident = resident };
}

const struct proc_kinds *model_kinds(const struct proc *p, uint32_t cap)
{
	/* A cache, not a change of p (as struct proc's figs): hence the cast. */
	struct proc *w = (struct proc *)p;
	struct proc_kinds *k = w->kinds;
	const struct mapping *m;

	if (k && k->stamp == p->gen + 1 && k->cap == cap)
		return k;
	if (!k || k->cap != cap) {
		free(w->kinds);
		w->kinds = k = calloc(1, sizeof(*k) + cap * sizeof(k->top[0]));
		if (!k)
			return NULL;
		k->cap = cap;
	}
	memset(k->pages, 0, sizeof(k->pages));
	k->ntop = 0;
	for (m = model_first(p); m; m = model_next(m)) {
		uint64_t s = mapping_start(m), e = mapping_end(m), *c = k->pages[m->kind];
		uint64_t res = model_count(p, PS_RESIDENT, s, e);

		c[PS_NOT_RESIDENT] += e - s;
		c[PS_RESIDENT] += res;
		c[PS_SWAPPED] += model_count(p, PS_SWAPPED, s, e);
		c[PS_UNTRACKED] += model_count(p, PS_UNTRACKED, s, e);
		top_insert(k, m, res);
	}
	k->stamp = p->gen + 1;
	return k;
}
