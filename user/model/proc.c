// SPDX-License-Identifier: GPL-2.0
/* A process's model over its lifetime: new, reset (exec), clone (a frame's copy, a fork),
 * free, its size and the key of what a view shows of it.  Its mappings and page states are
 * model.c's. */
#include <stdlib.h>
#include <string.h>
#include "model/model.h"
#include "model/model_int.h"

struct proc *proc_new(pid_t pid)
{
	struct proc *p = calloc(1, sizeof(*p));
	size_t i;

	if (!p)
		return NULL;
	p->pid = pid;
	itree_init(&p->maps);
	for (i = 0; i < MODEL_NTRACKED; i++) {
		p->set[model_tracked[i]] = pageset_new();
		if (!p->set[model_tracked[i]]) {
			proc_free(p);
			return NULL;
		}
	}
	return p;
}

void proc_free(struct proc *p)
{
	size_t i;

	if (!p)
		return;
	model_clear_layout(p);
	for (i = 0; i < MODEL_NTRACKED; i++)
		pageset_free(p->set[model_tracked[i]]);
	heat_free(&p->heat);
	share_free(p->share);
	free(p->kinds);
	free(p->fmaps);
	free(p);
}

void proc_reset(struct proc *p)
{
	size_t i;

	model_clear_layout(p);
	for (i = 0; i < MODEL_NTRACKED; i++)
		pageset_clear(p->set[model_tracked[i]]);
	model_changed(p);
	heat_free(&p->heat);
	share_free(p->share);	/* a new address space shares nothing yet */
	p->share = NULL;
	p->brk_start = 0;
}

struct proc *proc_clone(const struct proc *p, pid_t pid)
{
	struct proc *c = proc_new(pid);
	size_t i;

	if (!c)
		return NULL;
	memcpy(c->comm, p->comm, sizeof(c->comm));
	c->uid = p->uid;
	c->brk_start = p->brk_start;
	c->serial = p->serial;	/* a copy is the same process; a fork is renumbered when added */
	if (model_copy_layout(c, p)) {
		proc_free(c);
		return NULL;
	}
	for (i = 0; i < MODEL_NTRACKED; i++) {
		pageset_free(c->set[model_tracked[i]]);
		c->set[model_tracked[i]] = pageset_clone(p->set[model_tracked[i]]);
		if (!c->set[model_tracked[i]]) {
			proc_free(c);
			return NULL;
		}
	}
	model_changed(c);
	if (p->share && !(c->share = share_clone(p->share))) {
		proc_free(c);
		return NULL;
	}
	return c;
}

size_t proc_bytes(const struct proc *p)
{
	size_t kinds = p->kinds ? sizeof(*p->kinds) + p->kinds->cap * sizeof(p->kinds->top[0]) : 0;
	size_t fmaps = p->fmaps ? sizeof(*p->fmaps) + p->fmaps->cap * sizeof(p->fmaps->v[0]) : 0;

	return sizeof(*p) + (size_t)p->heat.cap * sizeof(struct heat_entry) +
	       model_layout_bytes(p) + share_bytes(p->share) + kinds + fmaps;
}

void model_shown(const struct proc *p, struct proc_shown *out)
{
	memset(out, 0, sizeof(*out));	/* padding too: compared field by field anyway */
	out->gen = p->gen;
	out->heat_gen = p->heat.gen;
	out->share = p->share != NULL;
	out->share_at_ns = p->share ? p->share->at_ns : 0;
	out->ppid = p->ppid;
	out->exited = p->exited;
	memcpy(out->comm, p->comm, sizeof(out->comm));
}

bool model_shown_same(const struct proc_shown *a, const struct proc_shown *b)
{
	return a->gen == b->gen && a->heat_gen == b->heat_gen &&
	       a->share == b->share && a->share_at_ns == b->share_at_ns && a->ppid == b->ppid &&
	       a->exited == b->exited && !memcmp(a->comm, b->comm, sizeof(a->comm));
}
