// SPDX-License-Identifier: GPL-2.0
/*
 * The per-refresh pass (engine_int.h): one read of the task iterator gives every process's
 * counters, so a refresh of a system where nothing moved reads nothing per process.  It
 * also says which processes exist, which heals lost fork and exit records: a listed
 * process missing from a pass has ended (its exit record was lost, or is about to come),
 * and a process the pass has and the table lacks lost its fork record.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/array.h"
#include "engine/engine_int.h"
#include "lib/log.h"

void pass_take(struct engine *e)
{
	int err;

	e->pass_ok = false;
	if (!e->tasks)
		return;
	err = taskiter_pass(e->tasks, &e->recs, &e->nrecs);
	if (err) {
		/* One failed pass falls back to /proc for this refresh only. */
		log_debug("failed to read the task iterator: %s", strerror(-err));
		return;
	}
	e->pass_ok = true;
	e->pass_ns = engine_now_ns();
}

const struct task_rec *pass_find(const struct engine *e, pid_t pid)
{
	return taskiter_find(e->recs, e->nrecs, pid);
}

bool pass_alive(const struct engine *e, const struct proc *p, const struct task_rec **out)
{
	const struct task_rec *r = pass_find(e, p->pid);

	*out = r;
	if (!r)
		return false;
	return !ps(p)->born || taskiter_start_ticks(r->start_ns) == ps(p)->born;
}

/* Without a pass, whole-system sessions list /proc once per refresh (getdents only: the
 * counters are read per process anyway) and model pids the table lacks -- but not those
 * already found to have no address space (kernel threads), which would be retried at every
 * refresh: e->nomm (table.c), kept to the pids still listed. */
static void add_missed_from_proc(struct engine *e)
{
	pid_t *pids, self = getpid();
	size_t n, i, keep = 0;

	if (table_filtered(e) || procfs_list_pids(&pids, &n))
		return;
	for (i = 0; i < n; i++) {
		if (table_no_mm(e, pids[i])) {
			e->nomm[keep++] = pids[i];	/* both sorted: still listed, kept */
			continue;
		}
		struct proc *p = engine_find(e, pids[i]);
		struct proc_counters c;

		/* A tombstone whose pid /proc lists again under another start time: a new
		 * process took the pid (its fork record lost); it gets a row of its own now,
		 * not when the tombstone goes.  One stat read, for tombstones only. */
		if (p && p->exited && ps(p)->born &&
		    procfs_read_counters(pids[i], &c) == 0 && c.start_time != ps(p)->born) {
			table_del(e, p);
			p = NULL;
		}
		if (pids[i] == self || p || (e->naliases && table_alias_parent(e, pids[i])))
			continue;
		if (table_new_proc(e, pids[i], false))
			e->st.missed++;
	}
	e->nnomm = keep;
	free(pids);
}

void pass_add_missed(struct engine *e)
{
	pid_t self = getpid();
	size_t i;

	if (!e->pass_ok) {
		add_missed_from_proc(e);
		return;
	}
	for (i = 0; i < e->nrecs; i++) {
		const struct task_rec *r = &e->recs[i];
		pid_t pid = (pid_t)r->tgid;
		struct proc *p;

		if (pid == self)
			continue;
		p = engine_find(e, pid);
		if (p && (!ps(p)->born || taskiter_start_ticks(r->start_ns) == ps(p)->born))
			continue;	/* known (a tombstone of this very process included) */
		if (p) {
			/* The pid was reused unseen (its exit and fork records lost, or the
			 * reuse fell between two refreshes): the row was another process's,
			 * whose exit is retired; the new one gets a row (and serial) of its
			 * own, as a record of the new process would give it (table_proc_for). */
			if (!p->exited) {
				table_mark_exited(e, p);
				e->st.retired++;
			}
			table_del(e, p);
		}
		if (e->naliases && table_alias_parent(e, pid))
			continue;	/* vfork child: its faults are the parent's */
		if (!table_filtered(e))
			p = table_new_proc(e, pid, false);
		else if (filter_active(e->o.filter) && e->src->passes(e->src_ctx, pid, r->comm))
			p = table_watch_new(e, pid, r->comm);
		else if (!filter_active(e->o.filter) && e->src->is_target(e->src_ctx, pid))
			p = table_new_proc(e, pid, false);	/* -p: a followed child */
		else
			continue;
		if (p)
			e->st.missed++;
	}
}
