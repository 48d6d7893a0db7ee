// SPDX-License-Identifier: GPL-2.0
/* The web view's copies of a held frame (out/web_snap.h says why). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/share_figs.h"
#include "out/web_snap.h"

uint64_t web_snap_key(const struct json_frame *f)
{
	return f->tick ? f->tick : f->mono_ns | 1ULL << 63;
}

const struct proc *web_snap_find(const struct json_frame *f, pid_t pid)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->procs[i]->pid == pid && f->procs[i]->ready)
			return f->procs[i];
	return NULL;
}

void web_snap_head(const struct json_frame *f, struct web_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->key = web_snap_key(f);
	s->wall = f->wall;
	s->mono_ns = f->mono_ns;
	snprintf(s->mode, sizeof(s->mode), "%s", f->mode ? f->mode : "");
}

static void row_fill(const struct proc *p, struct web_row *r)
{
	struct share_figs sf;

	*r = (struct web_row){ .pid = p->pid, .ppid = p->ppid, .exited = p->exited,
			       .share = p->share != NULL, .faults = p->faults,
			       .fault_rate = p->fault_rate, .mapped = p->mapped_pages,
			       .maps = model_count_maps(p) };
	memcpy(r->comm, p->comm, sizeof(r->comm));
	model_totals(p, r->counts);
	if (p->share) {
		share_totals(p, &sf);
		r->uss = sf.uss >> PAGE_SHIFT_4K;
		r->pss = (double)sf.pss / (1 << PAGE_SHIFT_4K);
	}
}

int web_snap_list(const struct json_frame *f, struct web_snap *s)
{
	web_snap_head(f, s);
	if (f->n && !(s->rows = calloc(f->n, sizeof(*s->rows))))
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++)
		if (f->procs[i]->ready)
			row_fill(f->procs[i], &s->rows[s->n++]);
	return 0;
}

int web_snap_process(const struct json_frame *f, pid_t pid, struct web_snap *s)
{
	const struct proc *p = web_snap_find(f, pid);
	struct proc *c;

	web_snap_head(f, s);
	if (!p)
		return -ESRCH;
	/* proc_clone copies what a fork would keep; what the answer also shows is set here. */
	c = proc_clone(p, p->pid);
	if (!c || heat_copy(&c->heat, &p->heat)) {
		proc_free(c);
		return -ENOMEM;
	}
	c->ppid = p->ppid;
	c->exited = p->exited;
	c->ready = p->ready;
	c->faults = p->faults;
	c->fault_rate = p->fault_rate;
	s->p = c;
	model_shown(p, &s->shown);
	return 0;
}

void web_snap_free(struct web_snap *s)
{
	free(s->rows);
	if (!s->shared)
		proc_free(s->p);
	memset(s, 0, sizeof(*s));
}
