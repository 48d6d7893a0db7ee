// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel itself knows of each new row (doc/pagecache.md, "Names" and "Memory
 * cgroups"), asked for by inode address in batches of FC_INFO_MAX (kernel/fcache_bpf.h):
 *
 *   - the dentry's name up to its superblock's root.  On a mounted filesystem that is a
 *     path (checked with stat: it must lead to this dev and ino) for any filesystem, not
 *     only those whose file handles we can build; on the internal shm mount it says what
 *     the inode is: "memfd:NAME", "SYSV%08x" (its key; the inode number is the shmid),
 *     "dev/zero" (a shared anonymous mapping); on a filesystem not mounted here it is the
 *     path within that filesystem.
 *   - a block device inode's device (its /dev name).
 *   - the memory cgroup charged for the file's first cached folio.
 *
 * Only rows that have no better name get the dentry's; every new row gets its memcg.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "engine/files.h"
#include "kernel/cgroup_ids.h"
#include "kernel/fcache_bpf.h"
#include "kernel/fcache_name.h"
#include "kernel/procfs.h"

#define KINFO_FIRST_NS	300000000ULL	/* the first snapshot (~2.5 µs a row: 120,000) */
#define KINFO_TICK_NS	20000000ULL	/* a slice of each later tick */

/* The components (leaf first) as one name: "/a/b" when they reach the filesystem's root
 * ("/"), else joined as they are (a pseudo file's own name, "memfd:x").  false: incomplete. */
static bool join(const struct fc_info *o, char *out, size_t len, bool *rooted)
{
	size_t at = 0;
	int k, top;

	if (!o->depth || o->depth > FC_DEPTH || (o->flags & FCI_F_TRUNC) ||
	    !(o->flags & FCI_F_ROOT))
		return false;
	top = (int)o->depth - 1;
	*rooted = !strcmp(o->comp[top], "/");
	out[0] = 0;
	for (k = *rooted ? top - 1 : top; k >= 0; k--) {
		int n = snprintf(out + at, len - at, "%s%.*s", *rooted ? "/" : (k == top ? "" : "/"),
				 FC_COMP, o->comp[k]);

		if (n < 0 || (size_t)n >= len - at)
			return false;
		at += n;
	}
	if (*rooted && !at)
		snprintf(out, len, "/");
	return true;
}

/* The internal shm mount: what the pseudo file's name says it is. */
static void shm_name(struct files *fs, struct fc_file *f, const char *name)
{
	unsigned key;

	if (!strncmp(name, "memfd:", 6)) {
		fcache_file_set_name(f, name, FC_NAME_KERNEL, NULL);
		files_set_kind(fs, f, FC_MEMFD);
	} else if (sscanf(name, "SYSV%8x", &key) == 1) {
		char buf[64];

		snprintf(buf, sizeof(buf), "SYSV key=0x%08x shmid=%llu", key,
			 (unsigned long long)f->ino);
		fcache_file_set_name(f, buf, FC_NAME_SYSV, NULL);
		files_set_kind(fs, f, FC_SYSV);
	} else if (!strcmp(name, "dev/zero")) {
		fcache_file_set_name(f, "[anon shmem]", FC_NAME_KERNEL,
				 "a shared anonymous mapping (MAP_SHARED|MAP_ANONYMOUS)");
		files_set_kind(fs, f, FC_ANON_SHMEM);
	} else {
		fcache_file_set_name(f, name, FC_NAME_KERNEL, "a file of the kernel's internal shm "
				 "mount");
	}
}

/* A block device inode: /dev/NAME from sysfs. */
static void block_name(struct fc_file *f, uint32_t krdev)
{
	char path[96], text[512], *dn, name[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", krdev >> 20, krdev & 0xfffff);
	n = procfs_read_file(path, text, sizeof(text));
	dn = n > 0 ? strstr(text, "DEVNAME=") : NULL;
	if (!dn || sscanf(dn + 8, "%100[^\n]", name + 5) != 1)
		return;
	memcpy(name, "/dev/", 5);
	fcache_file_set_name(f, name, FC_NAME_KERNEL, "the block device's own cache (Buffers: "
			 "metadata, raw device reads); size is the device's");
}

/* A rooted path on dev's filesystem: a path here if a mount shows it, else the path within
 * the filesystem.  No stat here (it costs more than the kernel's answer, ~3 µs a path): the
 * first open by the path checks dev and ino (row_fd) and drops the name if they differ. */
static void fs_name(struct files *fs, struct fc_file *f, const char *rel, bool *reloaded)
{
	char path[4096];
	int err = fcache_name_mount_path(fs->names, f->dev, rel, path, sizeof(path));

	if (err == -ENOENT && !*reloaded) {	/* mounted since the table was read? */
		*reloaded = true;
		fcache_name_reload(fs->names);
		err = fcache_name_mount_path(fs->names, f->dev, rel, path, sizeof(path));
	}
	if (!err) {
		fcache_file_set_name(f, path, FC_NAME_PATH, NULL);
		f->flags |= FF_BY_PATH | FF_NAMED_AT_GEN | FF_TREE_TRIED;
		return;
	}
	fcache_file_set_name(f, rel, FC_NAME_KERNEL, err == -ENOENT ?
			 "the path within its filesystem, which is not mounted in mevitop's "
			 "mount namespace" : err == -EXDEV ?
			 "the path within its filesystem, outside the part mounted here" :
			 "the path within its filesystem (too long to show here)");
}

/* The memory cgroup's path; a miss (a cgroup made since the tree was walked, and walked
 * too recently to walk again) asks again at a later tick, twice at most (then it is a
 * cgroup removed since: null). */
static void memcg(struct files *fs, struct fc_file *f, uint64_t cgid, uint64_t now,
		  struct fkeys *retry)
{
	const char *cg = cgroup_ids_path(fs->cgids, cgid, now);

	if (cg) {
		fcache_file_set_memcg(f, cg);
		return;
	}
	if (f->flags & FF_MEMCG_MISS2)
		return;
	f->flags |= f->flags & FF_MEMCG_MISS1 ? FF_MEMCG_MISS2 : FF_MEMCG_MISS1;
	files_keys_add(retry, f);
}

static void apply(struct files *fs, struct fc_file *f, const struct fc_info *o, bool *reloaded,
		  uint64_t now, struct fkeys *retry)
{
	char name[FC_DEPTH * FC_COMP + 2], path[FC_DEPTH * FC_COMP + 2];
	bool rooted = false;

	if (o->status != FCI_OK)
		return;
	if ((o->flags & FCI_F_MEMCG) && fs->cgids) {
		memcg(fs, f, o->cgid, now, retry);
	}
	if (f->name_src != FC_NAME_NONE)
		return;		/* a better name */
	if (S_ISBLK(f->mode) && o->rdev) {
		block_name(f, o->rdev);
		return;
	}
	if (!join(o, name, sizeof(name), &rooted))
		return;
	if (f->flags & FF_DELETED) {	/* unlinked, still held: its last name */
		if (rooted && !fcache_name_mount_path(fs->names, f->dev, name, path, sizeof(path)))
			snprintf(name, sizeof(name), "%s", path);
		fcache_file_set_name(f, name, FC_NAME_KERNEL, "deleted: its last name");
		return;
	}
	if (f->dev == fs->shm_dev && !rooted)
		shm_name(fs, f, name);
	else if (rooted)
		fs_name(fs, f, name, reloaded);
	else
		fcache_file_set_name(f, name, FC_NAME_KERNEL, "a pseudo file's own name");
}

struct by_size {
	uint64_t cached;
	struct fkey k;
};

static int by_cached_desc(const void *a, const void *b)
{
	const struct by_size *x = a, *y = b;

	return x->cached < y->cached ? 1 : x->cached > y->cached ? -1 : 0;
}

/* More rows than one firing: the largest first (what the first snapshot lists).  Each
 * row's count is looked up once, not at every comparison. */
static void largest_first(struct files *fs)
{
	struct by_size *v = malloc(fs->kinfo.n * sizeof(*v));
	size_t i;

	if (!v)
		return;		/* the order they came in */
	for (i = 0; i < fs->kinfo.n; i++) {
		const struct fc_file *f = fcache_find(fs->fc, fs->kinfo.v[i].dev,
						      fs->kinfo.v[i].ino);

		v[i].cached = f ? f->pages.cached : 0;
		v[i].k = fs->kinfo.v[i];
	}
	qsort(v, fs->kinfo.n, sizeof(*v), by_cached_desc);
	for (i = 0; i < fs->kinfo.n; i++)
		fs->kinfo.v[i] = v[i].k;
	free(v);
}

/* Asks about rows[0..n) (each with an inode address) and applies the answers; false: the
 * program is unavailable. */
static bool ask(struct files *fs, struct fc_file **rows, size_t n, bool *reloaded,
		uint64_t now, struct fkeys *retry)
{
	struct fc_info_req req[FC_INFO_MAX];
	static struct fc_info out[FC_INFO_MAX];	/* 66 KiB: not on the stack */
	size_t k;

	for (k = 0; k < n; k++)
		req[k] = (struct fc_info_req){ .inode = rows[k]->kaddr, .ino = rows[k]->ino,
			.dev = (uint32_t)(major(rows[k]->dev) << 20 | minor(rows[k]->dev)) };
	if (n && fcache_bpf_info(fs->bpf, req, n, out))
		return false;
	for (k = 0; k < n; k++)
		apply(fs, rows[k], &out[k], reloaded, now, retry);
	fs->st.kinfo += n;
	return true;
}

/* The first snapshot of a session that lists only the largest rows (--json --files-top N,
 * files.first_listed): those are asked about now, with a margin, and the others over the
 * next refreshes, KINFO_TICK_NS a refresh, as rows past the budget always were.  With
 * ~14,000 cached files that was ~50 ms less before the first line here.  Then fs->kinfo
 * keeps only the rows not asked. */
static bool first_listed(struct files *fs, bool *reloaded, uint64_t now, struct fkeys *retry)
{
	size_t want = 2 * (size_t)fs->first_listed, n = 0, i, j, got;
	struct fc_file **top = malloc(want * sizeof(*top)), *rows[FC_INFO_MAX];
	bool ok = true;

	if (!top)
		return true;	/* then every row, as without */
	got = files_top_get(fs, top, want);
	for (i = 0; i <= got && ok; i++) {
		if (n == FC_INFO_MAX || (i == got && n)) {
			ok = ask(fs, rows, n, reloaded, now, retry);
			n = 0;
		}
		if (i < got && (top[i]->flags & FF_KINFO)) {
			top[i]->flags &= ~FF_KINFO;
			if (top[i]->kaddr)
				rows[n++] = top[i];
		}
	}
	free(top);
	for (i = j = 0; i < fs->kinfo.n; i++) {
		struct fc_file *f = fcache_find(fs->fc, fs->kinfo.v[i].dev, fs->kinfo.v[i].ino);

		if (f && (f->flags & FF_KINFO))
			fs->kinfo.v[j++] = fs->kinfo.v[i];
	}
	fs->kinfo.n = j;
	return ok;
}

void files_kinfo(struct files *fs, bool first)
{
	struct fc_file *rows[FC_INFO_MAX];
	uint64_t t0 = engine_now_ns(), budget = first ? KINFO_FIRST_NS : KINFO_TICK_NS;
	struct fkeys retry = { 0 };
	bool reloaded = false, ok = true, listed_only = first && fs->first_listed;
	size_t i = 0, n, j;

	if (!fs->bpf || !fs->kinfo.n)
		return;
	if (listed_only) {
		ok = first_listed(fs, &reloaded, t0, &retry);	/* the rest: next refreshes */
	} else {
		if (fs->kinfo.n > FC_INFO_MAX && fs->kinfo_added)
			largest_first(fs);
		fs->kinfo_added = false;
	}
	while (ok && !listed_only && i < fs->kinfo.n && engine_now_ns() - t0 < budget) {
		for (n = 0; i < fs->kinfo.n && n < FC_INFO_MAX; i++) {
			struct fc_file *f = fcache_find(fs->fc, fs->kinfo.v[i].dev,
							fs->kinfo.v[i].ino);

			if (!f)
				continue;
			f->flags &= ~FF_KINFO;	/* asked now, or never (no address) */
			if (!f->kaddr)
				continue;
			rows[n++] = f;
		}
		ok = ask(fs, rows, n, &reloaded, t0, &retry);
	}
	if (!ok) {
		/* Unavailable: names come from handles and processes. */
		for (j = 0; j < fs->kinfo.n; j++) {
			struct fc_file *g = fcache_find(fs->fc, fs->kinfo.v[j].dev,
							fs->kinfo.v[j].ino);

			if (g)
				g->flags &= ~FF_KINFO;
		}
		fs->kinfo.n = 0;
		files_keys_free(&retry);
		return;
	}
	/* Keep what is left, in order, then the rows to ask again. */
	for (j = 0; i < fs->kinfo.n; i++, j++)
		fs->kinfo.v[j] = fs->kinfo.v[i];
	fs->kinfo.n = j;
	for (i = 0; i < retry.n; i++) {
		struct fc_file *f = fcache_find(fs->fc, retry.v[i].dev, retry.v[i].ino);

		if (f)
			files_keys_add(&fs->kinfo, f);
	}
	files_keys_free(&retry);
	fs->st.kinfo_ns = engine_now_ns() - t0;
}
