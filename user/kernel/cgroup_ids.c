// SPDX-License-Identifier: GPL-2.0
/* Cgroup ids to paths (cgroup_ids.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/array.h"
#include "kernel/cgroup_ids.h"
#include "kernel/dirwalk.h"

#define CG_LIMIT	100000		/* directories one walk visits at most */
#define CG_REWALK_NS	200000000ull

struct cg {
	uint64_t id;
	char *path;
};

struct cgids {
	char mnt[4096];
	struct cg *v;
	size_t n, cap;
	uint64_t walked_ns;
};

/* The memory controller's hierarchy: a v1 "cgroup" mount with the memory option where
 * there is one (a hybrid layout: memcg->css.cgroup is in that hierarchy), else cgroup2. */
static int mount_point(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int err = -ENOENT;
	bool v1 = false;

	if (!f)
		return -errno;
	while (!v1 && getline(&line, &cap, f) > 0) {
		char dir[4096], type[32], opts[1024], *sep = strstr(line, " - ");
		bool mem;

		if (!sep || sscanf(sep + 3, "%31s %*s %1023s", type, opts) != 2 ||
		    sscanf(line, "%*u %*u %*u:%*u %*s %4095s", dir) != 1 || strlen(dir) >= len)
			continue;
		mem = !strcmp(type, "cgroup") && (strstr(opts, ",memory") ||
						  !strncmp(opts, "memory", 6));
		if (mem || (!strcmp(type, "cgroup2") && err)) {
			strcpy(out, dir);
			err = 0;
			v1 = mem;
		}
	}
	free(line);
	fclose(f);
	return err;
}

static void clear(struct cgids *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	c->n = 0;
}

static int add(struct cgids *c, uint64_t id, const char *rel)
{
	if (array_reserve(c->v, c->n, c->cap, 64))
		return -ENOMEM;
	c->v[c->n].path = strdup(*rel ? rel : "/");
	if (!c->v[c->n].path)
		return -ENOMEM;
	c->v[c->n++].id = id;
	return 0;
}

/* Each cgroup below the mount: its directory's inode number is its id. */
static int on_dir(void *ctx, const char *rel, const struct stat *st)
{
	return add(ctx, st->st_ino, rel);
}

static int by_id(const void *a, const void *b)
{
	const struct cg *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int rewalk(struct cgids *c)
{
	struct dirwalk w = { .left = CG_LIMIT, .dirs_only = true, .fn = on_dir, .ctx = c };
	char rel[4096] = "";
	struct stat st;
	int fd, err;

	clear(c);
	fd = open(c->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = fstat(fd, &st) ? -errno : add(c, st.st_ino, "");
	if (err) {
		close(fd);
		return err;
	}
	w.dev = st.st_dev;
	err = dirwalk_tree(&w, fd, rel, 0, sizeof(rel));
	qsort(c->v, c->n, sizeof(*c->v), by_id);
	return err;
}

int cgroup_ids_new(struct cgids **out)
{
	struct cgids *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	err = mount_point(c->mnt, sizeof(c->mnt));
	if (err) {
		free(c);
		return err;
	}
	*out = c;
	return 0;
}

void cgroup_ids_free(struct cgids *c)
{
	if (!c)
		return;
	clear(c);
	free(c->v);
	free(c);
}

const char *cgroup_ids_path(struct cgids *c, uint64_t id, uint64_t now_ns)
{
	struct cg key = { .id = id }, *hit;

	hit = c->n ? bsearch(&key, c->v, c->n, sizeof(key), by_id) : NULL;
	if (!hit && (!c->walked_ns || now_ns - c->walked_ns >= CG_REWALK_NS)) {
		c->walked_ns = now_ns ? now_ns : 1;
		rewalk(c);
		hit = c->n ? bsearch(&key, c->v, c->n, sizeof(key), by_id) : NULL;
	}
	return hit ? hit->path : NULL;
}
