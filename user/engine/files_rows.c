// SPDX-License-Identifier: GPL-2.0
/*
 * The rows' names, exact counts and mappers (files.h): open_by_handle_at for paths and
 * cachestat, the process model's file mappings for mapped_by (and names of memfds and
 * deleted files), /proc/PID/fd and /proc/sysvipc/shm for what nobody maps, --file's
 * page sets.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "lib/array.h"
#include "kernel/cachestat.h"
#include "kernel/fcache_name.h"
#include "kernel/fcache_proc.h"
#include "engine/files.h"
#include "lib/log.h"

#define FIRST_BUDGET_NS	300000000ULL	/* names at start: the first snapshot waits for them */
#define TICK_BUDGET_NS	20000000ULL	/* later: a slice of each tick */
#define PROC_SCAN_NS	5000000000ULL	/* /proc/PID/fd walks at most this often */

static const char *strip_deleted(const char *path, char *buf, size_t len, bool *deleted)
{
	size_t n = strlen(path);
	const char *suf = " (deleted)";
	size_t k = strlen(suf);

	*deleted = n > k && !strcmp(path + n - k, suf);
	if (!*deleted)
		return path;
	snprintf(buf, len, "%.*s", (int)(n - k), path);
	return buf;
}

/* A name from a process (its fd's target or its mapping's path) for a row that has none. */
static void name_from_proc(struct files *fs, struct fc_file *f, const char *path)
{
	char buf[4096];
	bool deleted;
	const char *p = strip_deleted(path, buf, sizeof(buf), &deleted);

	if (f->name_src == FC_NAME_PATH || f->name_src == FC_NAME_FILE_ARG ||
	    f->name_src == FC_NAME_SYSV)
		return;
	if (f->dev == fs->shm_dev && !strncmp(p, "/memfd:", 7)) {
		fcache_file_set_name(f, p + 1, FC_NAME_PROC, NULL);
		files_set_kind(fs, f, FC_MEMFD);
		return;
	}
	if (f->dev == fs->shm_dev && !strncmp(p, "/SYSV", 5))
		return;		/* /proc/sysvipc/shm names it better */
	if (f->dev == fs->shm_dev && !strcmp(p, "/dev/zero")) {
		fcache_file_set_name(f, "[anon shmem]", FC_NAME_PROC, NULL);
		files_set_kind(fs, f, FC_ANON_SHMEM);
		return;
	}
	fcache_file_set_name(f, p, FC_NAME_PROC, NULL);
	if (deleted) {
		f->flags |= FF_DELETED;
		if (f->kind == FC_REGULAR || f->kind == FC_TMPFS)
			files_set_kind(fs, f, FC_DELETED);
	}
}

/* --- mapped_by: the process model's file mappings --- */

struct pair {
	struct fc_file *f;
	pid_t pid;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->f != y->f)
		return x->f < y->f ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* mapped_by's answer changes only with the processes' layouts (each change is a maps read
 * or an applied event), the processes (a new one has a new serial, a lost exit is retired)
 * or the rows: on an idle box it need not walk every mapping of every process each tick. */
static bool mappers_moved(struct engine *e)
{
	struct files *fs = e->files;
	uint64_t sig[6] = { e->st.maps_reads, e->st.events, e->serials, e->st.retired,
			    e->nprocs, fs->map_inputs };

	_Static_assert(sizeof(sig) == sizeof(fs->mapped_sig), "mapped_sig holds sig");
	if (!memcmp(sig, fs->mapped_sig, sizeof(sig)))
		return false;
	memcpy(fs->mapped_sig, sig, sizeof(sig));
	return true;
}

/* p's mapped files, from its mappings only when they changed since the last list (an idle
 * process: no tree walk).  NULL if out of memory. */
static const struct proc_fmaps *file_maps(struct proc *p)
{
	struct proc_fmaps *l = p->fmaps;
	const struct mapping *m;

	if (l && l->stamp == p->gen + 1)
		return l;
	if (l)
		l->n = 0;
	for (m = model_first(p); m; m = model_next(m)) {
		uint64_t dev = makedev(m->dev_major, m->dev_minor);

		if (!m->ino || (m->kind != MK_FILE && m->kind != MK_SHMEM))
			continue;
		/* A library's mappings come in a row: one entry for them. */
		if (l && l->n && l->v[l->n - 1].ino == m->ino && l->v[l->n - 1].dev == dev)
			continue;
		if (!l || l->n == l->cap) {
			uint32_t cap = l && l->cap ? l->cap * 2 : 8;
			struct proc_fmaps *nl = realloc(l, sizeof(*l) + cap * sizeof(l->v[0]));

			if (!nl) {
				free(l);
				p->fmaps = NULL;
				return NULL;
			}
			if (!l)
				nl->n = 0;
			l = nl;
			l->cap = cap;
		}
		l->v[l->n++] = (struct proc_fmap){ .dev = dev, .ino = m->ino, .path = m->path };
	}
	if (!l)		/* no file mapped: an empty list, so it is not walked again */
		l = calloc(1, sizeof(*l));
	else if (l->n < l->cap) {	/* kept per process: no spare room (5,000 of them) */
		struct proc_fmaps *nl = realloc(l, sizeof(*l) + l->n * sizeof(l->v[0]));

		if (nl) {
			l = nl;
			l->cap = l->n;
		}
	}
	if (l)
		l->stamp = p->gen + 1;
	p->fmaps = l;
	return l;
}

static void mapped_by(struct engine *e, bool create)
{
	struct files *fs = e->files;
	struct pair *v = NULL;
	size_t n = 0, cap = 0, i, j;
	pid_t *pids = NULL;
	struct fkeys old;

	for (i = 0; i < NBUCKETS; i++) {
		for (struct proc *p = e->buckets[i]; p; p = p->hnext) {
			const struct proc_fmaps *l;

			if (p->exited || !p->ready)
				continue;
			l = file_maps(p);
			if (!l)
				goto out;
			for (uint32_t k = 0; k < l->n; k++) {
				const struct proc_fmap *m = &l->v[k];
				struct fc_file *f = create ? files_row(fs, m->dev, m->ino) :
							     fcache_find(fs->fc, m->dev, m->ino);

				if (!f)
					continue;
				if (create && !f->have_stat)
					files_touch(fs, f);	/* new: count it now */
				/* A path from the mapping only where no handle gives one:
				 * the internal shm mount, deleted files, the fallback. */
				if (m->path && f->name_src == FC_NAME_NONE &&
				    (f->dev == fs->shm_dev || !fs->bpf ||
				     (f->flags & (FF_DELETED | FF_NO_HANDLE))))
					name_from_proc(fs, f, m->path);
				if (array_reserve(v, n, cap, 256))
					goto out;
				v[n].f = f;
				v[n++].pid = p->pid;
			}
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_pair);
	pids = malloc((n ? n : 1) * sizeof(*pids));
	if (!pids)
		goto out;
	/* Each row's pids, set only where they differ (most do not, tick to tick); then the
	 * rows no process maps any more lose theirs. */
	old = fs->mapped;
	fs->mapped = (struct fkeys){ 0 };
	for (i = 0; i < n; i = j) {
		struct fc_file *f = v[i].f;
		size_t k = 0;

		for (j = i; j < n && v[j].f == f; j++)
			if (!k || pids[k - 1] != v[j].pid)
				pids[k++] = v[j].pid;
		if (f->nmapped_by != k || memcmp(f->mapped_by, pids, k * sizeof(*pids)))
			fcache_file_set_mapped_by(f, pids, k);
		f->flags |= FF_MAPPED;
		files_keys_add(&fs->mapped, f);
	}
	for (i = 0; i < old.n; i++) {
		struct fc_file *f = fcache_find(fs->fc, old.v[i].dev, old.v[i].ino);

		if (f && !(f->flags & FF_MAPPED))
			fcache_file_set_mapped_by(f, NULL, 0);
	}
	for (i = 0; i < n; i++)
		v[i].f->flags &= ~FF_MAPPED;
	files_keys_free(&old);
out:
	free(pids);
	free(v);
}

/* --- names of what the walk found on no mount: /proc/PID/fd, /proc/sysvipc/shm --- */

struct fd_ctx {
	struct engine *e;
	bool create;
};

static int on_fd(void *ctx, pid_t pid, uint64_t dev, uint64_t ino, const char *target,
		 const char *link)
{
	struct fd_ctx *c = ctx;
	struct files *fs = c->e->files;
	struct fc_file *f = c->create ? files_row(fs, dev, ino) : fcache_find(fs->fc, dev, ino);

	(void)pid;
	(void)link;
	if (target && f && (f->name_src == FC_NAME_NONE || (f->flags & FF_DELETED)))
		name_from_proc(fs, f, target);
	if (f && c->create) {
		f->seen_gen = fs->gen;
		if (!f->have_stat)
			files_touch(fs, f);	/* new: count it now */
	}
	return 0;
}

/* The link is read only for a row on_fd may name with it (new, unnamed or deleted); proc_names
 * wants nothing else, the fallback every row (it makes them and marks them seen). */
static enum fcproc_want wants(void *ctx, uint64_t dev, uint64_t ino)
{
	struct fd_ctx *c = ctx;
	const struct fc_file *f = fcache_find(c->e->files->fc, dev, ino);

	if (!f || f->name_src == FC_NAME_NONE || (f->flags & FF_DELETED))
		return f || c->create ? FCPROC_LINK : FCPROC_SKIP;
	return c->create ? FCPROC_KEY : FCPROC_SKIP;
}

static int on_sysv(void *ctx, const struct sysv_seg *s)
{
	struct files *fs = ctx;
	struct fc_file *f = fs->shm_dev ? fcache_find(fs->fc, fs->shm_dev, (uint32_t)s->shmid) : NULL;
	char name[96];

	if (!f)
		return 0;
	snprintf(name, sizeof(name), "SYSV key=0x%08x shmid=%d", (unsigned)s->key, s->shmid);
	fcache_file_set_name(f, name, FC_NAME_SYSV, NULL);
	files_set_kind(fs, f, FC_SYSV);
	return 0;
}

/* Rows only a process can name (memfds, SysV segments, deleted files): /proc/sysvipc/shm,
 * then every process's fds, at most every PROC_SCAN_NS. */
static void proc_names(struct engine *e, bool first)
{
	struct files *fs = e->files;
	uint64_t now = engine_now_ns();
	struct fd_ctx c = { e, false };

	if (!fs->needs_proc.n || (!first && now - fs->last_proc_scan_ns < PROC_SCAN_NS))
		return;
	fcache_proc_sysv(on_sysv, fs);
	fs->last_proc_scan_ns = now;
	fs->st.proc_scans++;
	fcache_proc_fds(getpid(), wants, on_fd, &c);
	fs->needs_proc.n = 0;
}

void files_proc_rows(struct engine *e)
{
	struct files *fs = e->files;
	struct fd_ctx c = { e, true };

	fs->st.proc_scans++;
	fcache_proc_fds(getpid(), wants, on_fd, &c);
	mapped_by(e, true);
}

/* --- tmpfs: names from the mount's tree --- */

#define TREE_LIMIT 200000	/* entries one walk of a tmpfs visits at most */
#define TMPFS_MAGIC_ 0x01021994

struct tree_ctx {
	struct files *fs;
	uint64_t dev;
};

static int on_tree(void *ctx, uint64_t ino, const char *path)
{
	struct tree_ctx *c = ctx;
	struct fc_file *f = fcache_find(c->fs->fc, c->dev, ino);

	if (f && f->name_src == FC_NAME_NONE) {
		fcache_file_set_name(f, path, FC_NAME_PATH, NULL);
		f->flags |= FF_BY_PATH | FF_NAMED_AT_GEN;
	}
	return 0;
}

static bool wants_tree(const struct files *fs, const struct fc_file *f)
{
	return f->sb_magic == TMPFS_MAGIC_ && f->dev != fs->shm_dev &&
	       !(f->flags & FF_TREE_TRIED) && f->name_src == FC_NAME_NONE;
}

/* The tmpfs mounts of queued rows no walk has tried, walked once each for them. */
static void tmpfs_names(struct files *fs)
{
	uint64_t devs[4];
	size_t i, j, n = 0;

	for (i = 0; i < fs->unnamed.n && n < 4; i++) {
		struct fc_file *f = fcache_find(fs->fc, fs->unnamed.v[i].dev, fs->unnamed.v[i].ino);

		if (!f || !wants_tree(fs, f))
			continue;
		for (j = 0; j < n && devs[j] != f->dev; j++)
			;
		if (j == n)
			devs[n++] = f->dev;
	}
	for (j = 0; j < n; j++) {
		struct tree_ctx c = { fs, devs[j] };

		fcache_name_walk_tree(fs->names, c.dev, TREE_LIMIT, on_tree, &c);
		fs->st.tree_walks++;
	}
	for (i = 0; n && i < fs->unnamed.n; i++) {
		struct fc_file *f = fcache_find(fs->fc, fs->unnamed.v[i].dev, fs->unnamed.v[i].ino);

		for (j = 0; f && j < n; j++)
			if (f->dev == devs[j])
				f->flags |= FF_TREE_TRIED;
	}
}

/* --- exact counts and paths: open by handle, cachestat --- */

static void set_stat(struct files *fs, struct fc_file *f, const struct cstat *c)
{
	if (f->pages.cached != c->cached && !(f->flags & FF_CHANGED)) {
		/* A change no tracepoint told of (the fallback has none). */
		if (c->cached > f->pages.cached)
			f->win_adds += c->cached - f->pages.cached;
		else
			f->win_dels += f->pages.cached - c->cached;
	}
	if (f->pages.cached != c->cached)
		files_set_cached(fs, f, c->cached);
	files_set_counts(fs, f, &(struct fc_pages){ .dirty = c->dirty, .writeback = c->writeback,
			 .evicted = c->evicted, .recently_evicted = c->recently_evicted });
	f->have_stat = true;
	f->flags |= FF_STAT;
	if ((c->dirty || c->writeback) && !(f->flags & FF_DRAINING)) {
		f->flags |= FF_DRAINING;
		files_keys_add(&fs->draining, f);
	}
}

/* The row's fd: the held one (--file), or one opened by handle (closed by the caller). */
static int row_fd(struct files *fs, struct fc_file *f, bool *opened)
{
	char path[4096];
	const char *why;
	bool deleted, named;
	int fd;

	*opened = false;
	if (f->fd >= 0)
		return f->fd;
	if (f->flags & FF_BY_PATH) {
		struct stat st;

		fd = open(f->name, O_RDONLY | O_CLOEXEC | O_NOATIME | O_NONBLOCK | O_NOCTTY);
		if (fd >= 0 && !fstat(fd, &st) && st.st_dev == f->dev && st.st_ino == f->ino) {
			*opened = true;
			return fd;
		}
		if (fd >= 0)
			close(fd);
		/* Renamed or removed since it was named (or the name leads elsewhere: a mount
		 * over it): named again, by the kernel, a handle or the tree, a few times. */
		f->flags &= ~(FF_BY_PATH | FF_TREE_TRIED | FF_NAMED_AT_GEN);
		fcache_file_set_name(f, NULL, FC_NAME_NONE, "its path led elsewhere (renamed or "
				 "removed since it was named)");
		if (f->name_tries++ < 3 && !(f->flags & FF_QUEUED)) {
			f->flags |= FF_QUEUED | FF_KINFO;
			files_keys_add(&fs->unnamed, f);
			files_keys_add(&fs->kinfo, f);
			fs->kinfo_added = true;
		}
		return -1;
	}
	if (f->sb_magic == TMPFS_MAGIC_ && !(f->flags & FF_TREE_TRIED))
		return -1;	/* named by the tree walk first */
	if ((f->flags & FF_NO_HANDLE) || f->dev == fs->shm_dev)
		return -1;
	if (f->mode && !S_ISREG(f->mode)) {
		if (f->name_src == FC_NAME_NONE && f->kind != FC_BLOCK)
			fcache_file_set_name(f, NULL, FC_NAME_NONE, S_ISDIR(f->mode) ? "a directory" :
					 S_ISLNK(f->mode) ? "a symbolic link" :
					 S_ISBLK(f->mode) ? "a block device's cache" :
					 "not a regular file");
		return -1;
	}
	fs->st.opens++;
	/* A row named by a path already needs only the fd (readlink costs as much again). */
	named = f->name_src == FC_NAME_PATH && (f->flags & FF_NAMED_AT_GEN);
	fd = fcache_name_open(fs->names, f->dev, f->ino, f->generation, named ? NULL : path,
			 sizeof(path), &why);
	f->name_tries++;
	if (fd < 0) {
		log_debug("no handle for %s (ino %lu gen %08x): %s", f->name,
			  (unsigned long)f->ino, f->generation, strerror(-fd));
		f->flags |= FF_NO_HANDLE;
		fs->map_inputs++;	/* a mapping may name it now */
		if (f->name_src == FC_NAME_NONE)
			fcache_file_set_name(f, NULL, FC_NAME_NONE, why);
		return -1;
	}
	fs->st.opened++;
	*opened = true;
	if (named)
		return fd;
	f->flags |= FF_NAMED_AT_GEN;
	if (f->name_src == FC_NAME_NONE || f->name_src == FC_NAME_PATH) {
		char buf[4096];
		const char *p = strip_deleted(path, buf, sizeof(buf), &deleted);

		if (!deleted && (!f->name || strcmp(f->name, p)))
			fcache_file_set_name(f, p, FC_NAME_PATH, NULL);
		else if (deleted && f->name_src == FC_NAME_NONE)
			fcache_file_set_name(f, p, FC_NAME_PROC, NULL);
	}
	return fd;
}

static void exact(struct files *fs, struct fc_file *f)
{
	struct cstat c;
	bool opened;
	int fd;

	if (f->stat_gen == fs->gen)
		return;		/* counted this tick already */
	f->stat_gen = fs->gen;
	fd = row_fd(fs, f, &opened);
	if (fd < 0)
		return;
	fs->st.cachestats++;
	if (cachestat_read(fd, 0, 0, &c) == 0)
		set_stat(fs, f, &c);
	if (opened)
		close(fd);
}

/* --- which rows get a name and exact counts this tick --- */

/* A queued row: named now if it can be (by handle, which also counts it exactly), handed
 * to the process scan or the tree walk otherwise.  True: it leaves the queue. */
static bool name_one(struct files *fs, struct fc_file *f)
{
	if (f->name_src != FC_NAME_NONE)
		return true;
	/* The kernel's name before a handle (files_kinfo.c): ~6x cheaper; and before the
	 * processes' fds, which it names memfds and deleted files without. */
	if ((f->flags & FF_KINFO) && fs->bpf && f->kaddr)
		return false;
	if (f->dev == fs->shm_dev || (f->flags & FF_DELETED)) {
		files_keys_add(&fs->needs_proc, f);
		return true;
	}
	if (wants_tree(fs, f))
		return false;	/* its mount's tree first (tmpfs_names) */
	exact(fs, f);
	return true;
}

static int cmp_cached_desc(const void *a, const void *b)
{
	const struct fc_file *x = *(struct fc_file *const *)a, *y = *(struct fc_file *const *)b;

	return x->pages.cached < y->pages.cached ? 1 : x->pages.cached > y->pages.cached ? -1 : 0;
}

/* Names for the queue, largest rows first, within budget_ns; the rest wait for the next
 * tick.  At start the whole table is queued: the first snapshot names what it can in the
 * budget (the largest files first), later ticks the rest. */
static void name_queue(struct files *fs, uint64_t budget_ns)
{
	uint64_t t0 = engine_now_ns();
	struct fc_file **v = NULL;
	size_t i, n = 0, k = 0;

	if (!fs->unnamed.n)
		return;
	v = malloc(fs->unnamed.n * sizeof(*v));
	if (!v)
		return;
	for (i = 0; i < fs->unnamed.n; i++) {
		struct fc_file *f = fcache_find(fs->fc, fs->unnamed.v[i].dev, fs->unnamed.v[i].ino);

		if (f && (f->flags & FF_QUEUED))
			v[n++] = f;
	}
	qsort(v, n, sizeof(*v), cmp_cached_desc);
	for (i = 0; i < n && engine_now_ns() - t0 < budget_ns; i++)
		if (name_one(fs, v[i]))
			v[i]->flags &= ~FF_QUEUED;
	/* Keep what is still queued, in the same order. */
	for (i = 0; i < n; i++)
		if (v[i]->flags & FF_QUEUED) {
			fs->unnamed.v[k].dev = v[i]->dev;
			fs->unnamed.v[k++].ino = v[i]->ino;
		}
	fs->unnamed.n = k;
	free(v);
}

static void exact_keys(struct files *fs, const struct fkeys *l)
{
	size_t i, n = l->n;	/* exact() may append to touched: only what was there */

	for (i = 0; i < n; i++) {
		struct fc_file *f = fcache_find(fs->fc, l->v[i].dev, l->v[i].ino);

		/* Not a row left with no page (not --file's; the walk or the tracepoints
		 * counted it, the fallback's new rows are 0 until counted): finish() removes
		 * it.  Reclaim of many small files made a cachestat each, 10,000 in a second,
		 * for rows about to go. */
		if (f && !(f->flags & FF_QUEUED) &&
		    (f->pages.cached || f->watched || (!fs->bpf && !f->have_stat)))
			exact(fs, f);
	}
}

/* Rows the walk saw with a dirty, writeback or towrite mark on their page cache (the
 * marks cachestat counts): counted now, within budget_ns, the rest at the next ticks.  A
 * row without marks has no dirty or writeback page, so its zeros are exact already: the
 * first snapshot's dirty and writeback are exact for every row, not only the listed. */
static void exact_tagged(struct files *fs, uint64_t budget_ns)
{
	uint64_t t0 = engine_now_ns();
	size_t i, k = 0;

	for (i = 0; i < fs->tagged.n && engine_now_ns() - t0 < budget_ns; i++) {
		struct fc_file *f = fcache_find(fs->fc, fs->tagged.v[i].dev, fs->tagged.v[i].ino);

		if (f)
			exact(fs, f);
	}
	for (; i < fs->tagged.n; i++)
		fs->tagged.v[k++] = fs->tagged.v[i];
	fs->tagged.n = k;
}

/* Rows last counted with dirty or writeback pages, counted again: the flusher cleans pages
 * and writeback ends with no event, so without this a row's dirty count stayed what its
 * last change left.  A row counted clean leaves the list (set_stat puts it back when a
 * count finds dirt again). */
static void exact_draining(struct files *fs)
{
	struct fkeys cur = fs->draining;
	size_t i;

	fs->draining = (struct fkeys){ 0 };
	for (i = 0; i < cur.n; i++) {
		struct fc_file *f = fcache_find(fs->fc, cur.v[i].dev, cur.v[i].ino);

		if (!f)
			continue;
		f->flags &= ~FF_DRAINING;
		exact(fs, f);		/* a no-op if counted this tick already */
		if ((f->pages.dirty || f->pages.writeback) && !(f->flags & FF_DRAINING)) {
			f->flags |= FF_DRAINING;
			files_keys_add(&fs->draining, f);
		}
	}
	files_keys_free(&cur);
}

/* --- --file --- */

int files_watch_paths(struct engine *e, char *why, size_t whylen)
{
	struct files *fs = e->files;
	size_t i;

	fs->paths = calloc(e->o.nfile_paths ? e->o.nfile_paths : 1, sizeof(*fs->paths));
	if (!fs->paths)
		return -ENOMEM;
	for (i = 0; i < e->o.nfile_paths; i++) {
		const char *path = e->o.file_paths[i];
		struct stat st;
		struct fc_file *f;
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), err;

		if (fd < 0) {
			err = -errno;
			snprintf(why, whylen, "failed to watch %s: %s", path, strerror(-err));
			return err;
		}
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			err = errno && !S_ISREG(st.st_mode) ? -EINVAL : -errno;
			snprintf(why, whylen, "failed to watch %s: %s", path,
				 S_ISDIR(st.st_mode) ? "it is a directory" :
				 S_ISFIFO(st.st_mode) ? "it is a FIFO (no page cache)" :
				 "not a regular file");
			close(fd);
			return -EINVAL;
		}
		f = files_row(fs, st.st_dev, st.st_ino);
		fs->paths[fs->npaths] = strdup(path);
		if (!f || !fs->paths[fs->npaths]) {
			close(fd);
			return -ENOMEM;
		}
		if (f->fd >= 0) {	/* the same file twice */
			close(fd);
			free(fs->paths[fs->npaths]);
			fs->paths[fs->npaths] = NULL;
			continue;
		}
		f->watch_path = fs->paths[fs->npaths++];
		f->fd = fd;
		f->watched = true;
		files_keys_add(&fs->watched, f);
		f->mode = st.st_mode;
		f->size = st.st_size;
		fcache_file_set_name(f, path, FC_NAME_FILE_ARG, NULL);
	}
	return 0;
}

static int on_run(void *ctx, uint64_t start, uint64_t end, enum cstat_state s)
{
	struct fc_file *f = ctx;

	pageset_add_range(f->cached_set, start, end);
	if (s == CST_DIRTY)
		pageset_add_range(f->dirty_set, start, end);
	else if (s == CST_WRITEBACK)
		pageset_add_range(f->writeback_set, start, end);
	return 0;
}

static void page_sets(struct files *fs, struct fc_file *f)
{
	struct stat st;
	bool opened;
	int fd;

	if (!f->cached_set) {
		f->cached_set = pageset_new();
		f->dirty_set = pageset_new();
		f->writeback_set = pageset_new();
		if (!f->cached_set || !f->dirty_set || !f->writeback_set)
			return;
	}
	fd = row_fd(fs, f, &opened);
	pageset_clear(f->cached_set);
	pageset_clear(f->dirty_set);
	pageset_clear(f->writeback_set);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0) {
		f->size = st.st_size;
		if (f->watch_path && !(f->flags & FF_DELETED)) {
			struct stat now;

			if (stat(f->watch_path, &now) || now.st_dev != st.st_dev ||
			    now.st_ino != st.st_ino) {
				f->flags |= FF_DELETED;
				log_warn("watched file %s vanished (%s): still watched through "
					 "mevitop's descriptor", f->watch_path,
					 st.st_nlink ? "renamed or replaced" : "deleted");
			}
		}
	}
	cachestat_runs(fd, (f->size + 4095) / 4096, on_run, f);
	if (opened)
		close(fd);
}

/* A row a view opened (Enter in the Files view): its sets like --file's, unless it is one. */
static void wanted_sets(struct fc_file *f, void *arg)
{
	struct files *fs = arg;

	if (!f->watch_path)
		page_sets(fs, f);
}

/*
 * Ticks between exact counts of rows no event names.  Rows with dirty or writeback pages
 * (the draining list), and without the dirtied hook every one of the largest, are counted
 * every DIRTY_EVERY: dirt comes and goes with no filemap event.  With the hook a clean row
 * changes its dirty count only by an event, which counts it at that tick; what is left to
 * age without one is evicted and recently_evicted (the workingset's clock moves with every
 * eviction and activation on the node, and the shadow shrinker drops old entries), so the
 * largest are counted every QUIET_EVERY only.  Those counts walk the whole file: a 300 MB
 * cached binary is ~150,000 xarray entries, ~8 ms here, most of mevitop's idle CPU when
 * they came every 5 s (issue 24).
 */
#define DIRTY_EVERY 5
#define QUIET_EVERY 30

void files_update_rows(struct engine *e, bool first)
{
	struct files *fs = e->files;
	uint64_t t0 = engine_now_ns();
	size_t i;

	if (fs->bpf && mappers_moved(e))
		mapped_by(e, false);
	fs->st.mapped_ns = engine_now_ns() - t0;
	files_kinfo(fs, first);
	tmpfs_names(fs);
	name_queue(fs, first ? FIRST_BUDGET_NS : TICK_BUDGET_NS);
	proc_names(e, first);
	fs->st.proc_ns = engine_now_ns() - t0 - fs->st.mapped_ns;
	/* At start every row is new and changed: only the listed ones (the top files_top)
	 * are counted exactly for the first snapshot; the walk's nrpages is already exact for
	 * cached, and the rest are counted as they change or rise into the top. */
	if (!first)
		exact_keys(fs, &fs->touched);
	if (first || !fs->top ||
	    fs->ticks % (fs->counts_dirtied ? QUIET_EVERY : DIRTY_EVERY) == 0) {
		size_t k = fs->top ? fs->top : fcache_count(fs->fc);
		struct fc_file **v = malloc((k ? k : 1) * sizeof(*v));
		size_t n = v ? files_top_get(fs, v, k) : 0;

		for (i = 0; i < n; i++)
			if (first || !(v[i]->flags & (FF_CHANGED | FF_QUEUED)))
				exact(fs, v[i]);
		free(v);
	}
	exact_tagged(fs, first ? FIRST_BUDGET_NS : TICK_BUDGET_NS);
	if (!first && fs->ticks % DIRTY_EVERY == 0)
		exact_draining(fs);
	for (i = 0; i < fs->watched.n; i++) {
		struct fc_file *f = fcache_find(fs->fc, fs->watched.v[i].dev, fs->watched.v[i].ino);

		if (f)
			page_sets(fs, f);
	}
	fcache_each_wanted(fs->fc, wanted_sets, fs);
	fs->st.refresh_ns = engine_now_ns() - t0;
	fs->st.queued = fs->unnamed.n;
}

int files_close_fd(struct fc_file *f, void *arg)
{
	(void)arg;
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	return 0;
}

void files_names_fini(struct engine *e)
{
	size_t i;

	for (i = 0; i < e->files->npaths; i++)
		free(e->files->paths[i]);
	free(e->files->paths);
}
