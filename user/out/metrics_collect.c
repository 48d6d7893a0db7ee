// SPDX-License-Identifier: GPL-2.0
/* The copy a scrape takes of the model (under the engine lock), and what it adds after. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include "lib/strpool.h"
#include "model/share_figs.h"
#include "out/metrics.h"

/* p's figures into mp; its top mappings go at *maps, which moves past them. */
static int collect_proc(const struct proc *p, uint32_t top, struct metrics_proc *mp,
			struct metrics_map **maps)
{
	const struct proc_kinds *k;
	size_t i;

	mp->pid = p->pid;
	mp->serial = p->serial;
	memcpy(mp->comm, p->comm, sizeof(mp->comm));
	mp->comm[sizeof(mp->comm) - 1] = 0;
	mp->faults = p->faults;
	if (p->share) {
		struct share_figs f;

		share_totals(p, &f);
		mp->sharing = true;
		mp->uss = f.uss;
		mp->pss = f.pss;
		mp->shared = f.shared;
	}
	/* Counted again only for a process that changed since the last scrape. */
	k = model_kinds(p, top);
	if (!k)
		return -ENOMEM;
	memcpy(mp->pages, k->pages, sizeof(mp->pages));
	for (i = 0; i < MK_COUNT; i++)
		mp->resident += k->pages[i][PS_RESIDENT];
	mp->top = *maps;
	for (i = 0; i < k->ntop && i < top; i++) {
		const struct mapping *m = k->top[i].m;

		/* The path is the model's pooled copy: a reference, not a strdup (a scrape
		 * names a few thousand mappings). */
		mp->top[i] = (struct metrics_map){
			.start = mapping_start(m) << PAGE_SHIFT_4K,
			.resident = k->top[i].resident,
			.kind = m->kind,
			.name = strpool_ref(m->path),
		};
		mp->ntop++;
	}
	*maps += mp->ntop;
	return 0;
}

static int collect_files(struct engine *e, const struct metrics_opts *o, struct metrics_snap *s)
{
	struct fcache *t = engine_fcache(e);
	struct fc_file **v;
	size_t i, n;

	s->mem = *engine_memory(e);
	if (!t)
		return 0;
	s->have_files = true;
	s->files = fcache_count(t);
	if (!o->files)
		return 0;
	v = calloc(o->files, sizeof(*v));
	s->top_files = calloc(o->files, sizeof(*s->top_files));
	if (!v || !s->top_files) {
		free(v);
		return -ENOMEM;
	}
	n = engine_files_top(e, v, o->files);
	for (i = 0; i < n; i++) {
		struct metrics_file *mf = &s->top_files[i];

		mf->path = strdup(v[i]->name);
		if (!mf->path) {
			free(v);
			return -ENOMEM;
		}
		snprintf(mf->dev, sizeof(mf->dev), "%u:%u", major(v[i]->dev), minor(v[i]->dev));
		mf->ino = v[i]->ino;
		mf->cached = v[i]->pages.cached;
		mf->dirty = v[i]->pages.dirty;
		s->ntop_files++;
	}
	s->files_omitted = s->files - s->ntop_files;
	free(v);
	return 0;
}

int metrics_collect(struct engine *e, const struct metrics_opts *o, struct metrics_snap *s)
{
	struct metrics_map *maps;
	struct proc **procs;
	size_t n, i;
	int err;

	memset(s, 0, sizeof(*s));
	procs = engine_procs(e, &n);
	s->mode = engine_mode_name(engine_mode(e));
	s->version = MEVITOP_VERSION;
	s->st = *engine_stats(e);
	s->model_bytes = engine_bytes(e);
	s->interval_ms = o->interval_ms * engine_interval_scale(e);
	s->taken_ns = engine_now_ns();
	if (engine_hooks(e)->first_touches) {
		/* Read like the JSON reads it: nothing resets (the tick ends an interval). */
		s->exact = true;
		s->exact_touches = engine_hooks(e)->first_touches(engine_hooks(e)->ctx);
	}
	err = collect_files(e, o, s);
	if (err)
		return err;
	s->procs = calloc(n ? n : 1, sizeof(*s->procs));
	s->maps = calloc(n && o->top ? n * o->top : 1, sizeof(*s->maps));
	if (!s->procs || !s->maps)
		return -ENOMEM;
	maps = s->maps;
	for (i = 0; i < n; i++) {
		/* An exited process leaves the output at once: its series end with it. */
		if (!procs[i]->ready || procs[i]->exited)
			continue;
		s->procs[s->nprocs].cgroup_id = engine_proc_cgroup(e, procs[i]);
		err = collect_proc(procs[i], o->top, &s->procs[s->nprocs++], &maps);
		if (err)
			return err;
	}
	s->nmaps = maps - s->maps;
	s->running = s->nprocs;
	return 0;
}

static int by_resident_desc(const void *a, const void *b)
{
	uint64_t x = ((const struct metrics_proc *)a)->resident;
	uint64_t y = ((const struct metrics_proc *)b)->resident;

	return x < y ? 1 : x > y ? -1 : 0;
}

static int by_pid(const void *a, const void *b)
{
	const struct metrics_proc *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The unified (v2) hierarchy's path, "0::/PATH"; without one, the first v1 hierarchy's. */
static char *read_cgroup(pid_t pid)
{
	char path[64], line[4096], *best = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "re");
	if (!f)
		return strdup("");
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		c = c ? strchr(c + 1, ':') : NULL;
		if (!c)
			continue;
		c[1 + strcspn(c + 1, "\n")] = 0;
		if (!strncmp(line, "0::", 3) || !best) {
			free(best);
			best = strdup(c + 1);
			if (!strncmp(line, "0::", 3))
				break;
		}
	}
	fclose(f);
	return best ? best : strdup("");
}

/*
 * The cgroup paths of the last scrape, by pid: a process whose serial and cgroup id (from
 * the engine's task-iterator pass) are those of the last scrape keeps its path, so a steady
 * system costs no /proc/PID/cgroup read per scrape.  Without the pass (cgroup id 0) every
 * path is read, as a process may have moved.  Only the scrape thread uses it.
 */
struct cgroup_memo {
	pid_t pid;
	uint64_t serial, cgroup_id;
	char *path;
};

static struct cgroup_memo *memo;
static size_t nmemo;

static struct cgroup_memo *memo_find(const struct metrics_proc *p)
{
	size_t lo = 0, hi = nmemo;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (memo[mid].pid == p->pid)
			return memo[mid].serial == p->serial && p->cgroup_id &&
			       memo[mid].cgroup_id == p->cgroup_id ? &memo[mid] : NULL;
		if (memo[mid].pid < p->pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * Fills every process's cgroup path (s->procs sorted by pid) and remembers them.  The memo
 * owns the strings: a path still right moves to the new memo (no copy), and the snapshot
 * borrows them until the next call (the last snapshot is freed right after it).
 */
static void cgroup_paths(struct metrics_snap *s)
{
	struct cgroup_memo *next = calloc(s->nprocs ? s->nprocs : 1, sizeof(*next));
	size_t i;

	if (!next) {		/* out of memory: the old memo stays, the rest is unknown */
		for (i = 0; i < s->nprocs; i++) {
			const struct cgroup_memo *m = memo_find(&s->procs[i]);

			s->procs[i].cgroup = m && m->path ? m->path : "";
		}
		return;
	}
	for (i = 0; i < s->nprocs; i++) {
		struct metrics_proc *p = &s->procs[i];
		struct cgroup_memo *m = memo_find(p);
		char *path = m ? m->path : read_cgroup(p->pid);

		if (m)
			m->path = NULL;		/* moved */
		/* Without a path (out of memory) the id never matches: read again. */
		next[i] = (struct cgroup_memo){ p->pid, p->serial, path ? p->cgroup_id : 0, path };
		p->cgroup = path ? path : "";
	}
	for (i = 0; i < nmemo; i++)
		free(memo[i].path);
	free(memo);
	memo = next;
	nmemo = s->nprocs;
}

void metrics_finish(struct metrics_snap *s, const struct metrics_opts *o)
{
	struct rusage ru;

	if (s->nprocs > o->procs) {
		qsort(s->procs, s->nprocs, sizeof(*s->procs), by_resident_desc);
		s->omitted = s->nprocs - o->procs;
		s->nprocs = o->procs;
		qsort(s->procs, s->nprocs, sizeof(*s->procs), by_pid);
	}
	cgroup_paths(s);
	if (!getrusage(RUSAGE_SELF, &ru))
		s->cpu_seconds = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				 ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

void metrics_snap_free(struct metrics_snap *s)
{
	size_t i;

	for (i = 0; i < s->ntop_files; i++)
		free(s->top_files[i].path);
	free(s->top_files);
	s->top_files = NULL;
	s->ntop_files = 0;
	/* The tops of processes trimmed by --metrics-procs are in maps too. */
	for (i = 0; s->maps && i < s->nmaps; i++)
		strpool_put(s->maps[i].name);
	free(s->maps);
	s->maps = NULL;
	s->nmaps = 0;
	free(s->procs);
	s->procs = NULL;
	s->nprocs = 0;
}
