// SPDX-License-Identifier: GPL-2.0
/* Inodes opened by handle (fcache_name.h). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "lib/array.h"
#include "kernel/dirwalk.h"
#include "kernel/fcache_name.h"

struct mnt {
	uint64_t dev;
	char fstype[32];
	char *dir;
	char *root;		/* the mount's root within its filesystem ("/" mostly) */
	int fd;			/* -1: not opened yet; -2: could not be */
	int depth;		/* mount points preferred shallow: "/" over a bind mount */
};

struct fcname {
	struct mnt *m;
	size_t n, cap;
	uint64_t tried, opened;
};

int fcache_name_new(struct fcname **out)
{
	struct fcname *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	*out = n;
	return fcache_name_reload(n);
}

static void drop(struct fcname *n)
{
	size_t i;

	for (i = 0; i < n->n; i++) {
		if (n->m[i].fd >= 0)
			close(n->m[i].fd);
		free(n->m[i].dir);
		free(n->m[i].root);
	}
	n->n = 0;
}

void fcache_name_free(struct fcname *n)
{
	if (!n)
		return;
	drop(n);
	free(n->m);
	free(n);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = 0;
}

static struct mnt *find(struct fcname *n, uint64_t dev)
{
	size_t i;

	for (i = 0; i < n->n; i++)
		if (n->m[i].dev == dev)
			return &n->m[i];
	return NULL;
}

int fcache_name_reload(struct fcname *n)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	if (!f)
		return -errno;
	drop(n);
	while (getline(&line, &cap, f) > 0) {
		unsigned maj, min;
		char root[4096], dir[4096], *sep, fstype[32];
		struct mnt *m;
		int depth = 0;

		/* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
		if (sscanf(line, "%*u %*u %u:%u %4095s %4095s", &maj, &min, root, dir) != 4)
			continue;
		sep = strstr(line, " - ");
		if (!sep || sscanf(sep + 3, "%31s", fstype) != 1)
			continue;
		unescape(dir);
		/* A mount of the filesystem's root serves every handle; a bind mount of a
		 * subtree serves only what lies under it (open_by_handle_at checks). */
		depth = strcmp(root, "/") ? 1000 : 0;
		for (char *p = dir; *p; p++)
			depth += *p == '/';
		m = find(n, makedev(maj, min));
		if (m) {
			if (m->depth <= depth)
				continue;
			free(m->dir);
			free(m->root);
		} else {
			if (array_reserve(n->m, n->n, n->cap, 32)) {
				err = -ENOMEM;
				break;
			}
			m = &n->m[n->n++];
			m->dev = makedev(maj, min);
		}
		unescape(root);
		m->dir = strdup(dir);
		m->root = strdup(root);
		m->fd = -1;
		m->depth = depth;
		snprintf(m->fstype, sizeof(m->fstype), "%s", fstype);
		if (!m->dir || !m->root) {
			free(m->dir);
			free(m->root);
			n->n--;
			err = -ENOMEM;
			break;
		}
	}
	free(line);
	fclose(f);
	return err;
}

const char *fcache_name_fstype(struct fcname *n, uint64_t dev)
{
	struct mnt *m = find(n, dev);

	return m ? m->fstype : NULL;
}

int fcache_name_mount_path(struct fcname *n, uint64_t dev, const char *rel, char *out, size_t len)
{
	struct mnt *m = find(n, dev);
	size_t rl;
	const char *tail;

	if (!m)
		return -ENOENT;
	rl = strcmp(m->root, "/") ? strlen(m->root) : 0;
	if (rl && (strncmp(rel, m->root, rl) || (rel[rl] && rel[rl] != '/')))
		return -EXDEV;
	tail = rel + rl;
	if (snprintf(out, len, "%s%s", strcmp(m->dir, "/") || !*tail ? m->dir : "", tail) >=
	    (int)len)
		return -ENAMETOOLONG;
	return 0;
}

void fcache_name_counts(const struct fcname *n, uint64_t *tried, uint64_t *opened)
{
	*tried = n->tried;
	*opened = n->opened;
}

static bool is_ext(const char *t)
{
	return !strcmp(t, "ext4") || !strcmp(t, "ext3") || !strcmp(t, "ext2");
}

int fcache_name_open(struct fcname *n, uint64_t dev, uint64_t ino, uint32_t gen, char *path,
		size_t len, const char **why)
{
	struct {
		struct file_handle h;
		uint32_t w[4];
	} fh;
	struct mnt *m = find(n, dev);
	char link[64];
	ssize_t k;
	int fd;

	*why = NULL;
	if (!m) {
		*why = "its filesystem is not mounted in mevitop's mount namespace";
		return -ENOENT;
	}
	if (is_ext(m->fstype)) {
		/* ext4_fh_to_dentry: FILEID_INO32_GEN, {ino, generation} */
		fh.h.handle_type = 1;
		fh.h.handle_bytes = 8;
		fh.w[0] = (uint32_t)ino;
		fh.w[1] = gen;
	} else if (!strcmp(m->fstype, "tmpfs")) {
		/* shmem_encode_fh: {generation, ino low, ino high} */
		fh.h.handle_type = 1;
		fh.h.handle_bytes = 12;
		fh.w[0] = gen;
		fh.w[1] = (uint32_t)ino;
		fh.w[2] = (uint32_t)(ino >> 32);
	} else {
		*why = "no file handle layout for its filesystem";
		return -EOPNOTSUPP;
	}
	if (m->fd == -1) {
		m->fd = open(m->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (m->fd < 0)
			m->fd = -2;
	}
	if (m->fd < 0) {
		*why = "its mount point cannot be opened";
		return -EACCES;
	}
	n->tried++;
	/* O_NOATIME: looking changes no timestamp; O_NONBLOCK: never wait on a lease. */
	fd = open_by_handle_at(m->fd, &fh.h, O_RDONLY | O_CLOEXEC | O_NOATIME | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;

		*why = e == ESTALE ? "gone (ESTALE)" : e == ENOENT ? "not reachable from its mount"
		       : "open_by_handle_at failed";
		return -e;
	}
	if (!path)
		goto done;	/* the caller knows the name: only the fd is wanted */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	k = readlink(link, path, len - 1);
	if (k < 0) {
		int e = errno;

		close(fd);
		*why = "readlink failed";
		return -e;
	}
	path[k] = 0;
done:
	n->opened++;
	return fd;
}

struct tree {
	fcname_tree_fn fn;
	void *ctx;
};

static int on_entry(void *ctx, const char *path, const struct stat *st)
{
	struct tree *t = ctx;

	return S_ISREG(st->st_mode) ? t->fn(t->ctx, st->st_ino, path) : 0;
}

int fcache_name_walk_tree(struct fcname *n, uint64_t dev, size_t limit, fcname_tree_fn fn,
		     void *ctx)
{
	struct mnt *m = find(n, dev);
	struct tree t = { fn, ctx };
	struct dirwalk w = { .dev = dev, .left = limit, .fn = on_entry, .ctx = &t };
	char path[4096];
	size_t len;
	int fd;

	if (!m)
		return -ENOENT;
	len = strlen(m->dir);
	if (len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, m->dir, len + 1);
	if (len == 1)
		len = 0;	/* "/": children are "/x", not "//x" */
	fd = open(m->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return dirwalk_tree(&w, fd, path, len, sizeof(path));
}
