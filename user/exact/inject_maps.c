// SPDX-License-Identifier: GPL-2.0
/*
 * inject_maps.c - look-ups in a target's /proc/PID/maps and code for inject.c.
 */
#include "exact/inject_maps.h"
#include "lib/page.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CODE_CHUNK	65536
#define CODE_OVERLAP	16	/* longest pattern we search for, so none straddles a chunk */
#define SCRATCH_MAX	(4 * PAGE_SIZE_4K)	/* the largest scratch mapping we make */

struct map_line {
	uint64_t start, end, offset, inode;
	char perms[8];
	char name[256];
};

/* Calls @fn for each line of /proc/PID/maps until it returns non-zero (that is returned). */
static int each_map(pid_t pid, int (*fn)(const struct map_line *m, void *arg), void *arg)
{
	char path[64], line[512];
	int ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		struct map_line m = { .name = "" };
		unsigned long long s, e, off, ino;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %llu %255[^\n]", &s, &e, m.perms, &off,
			   &ino, m.name) < 5)
			continue;
		m.start = s;
		m.end = e;
		m.offset = off;
		m.inode = ino;
		ret = fn(&m, arg);
	}
	fclose(f);
	return ret;
}

struct named_arg {
	const char *name;
	uint64_t addr;
	struct inj_vma *out;
};

static int match_named(const struct map_line *m, void *arg)
{
	struct named_arg *a = arg;

	if (a->name ? strcmp(m->name, a->name) : (a->addr < m->start || a->addr >= m->end))
		return 0;
	a->out->start = m->start;
	a->out->end = m->end;
	return 1;
}

int injmap_find_named(pid_t pid, const char *name, struct inj_vma *out)
{
	struct named_arg a = { .name = name, .out = out };
	int ret = each_map(pid, match_named, &a);

	return ret < 0 ? ret : ret ? 0 : -ENOENT;
}

struct code_arg {
	int memfd;
	const char *first;
	bool first_pass;
	injmap_match_fn match;
	uint64_t *addr;
	uint8_t *buf;
};

static int search_code(const struct map_line *m, void *arg)
{
	struct code_arg *a = arg;
	bool is_first;

	if (m->perms[2] != 'x' || !strcmp(m->name, "[vsyscall]"))
		return 0;
	is_first = a->first && strstr(m->name, a->first);
	if (is_first != a->first_pass)
		return 0;
	for (uint64_t at = m->start; at < m->end; at += CODE_CHUNK - CODE_OVERLAP) {
		size_t len = m->end - at < CODE_CHUNK ? (size_t)(m->end - at) : CODE_CHUNK;
		ssize_t n = pread(a->memfd, a->buf, len, (off_t)at);
		long off;

		if (n <= 0)
			break;	/* unreadable (e.g. execute-only): skip the mapping */
		off = a->match(a->buf, (size_t)n);
		if (off >= 0) {
			*a->addr = at + (uint64_t)off;
			return 1;
		}
		if (at + len >= m->end)
			break;
	}
	return 0;
}

int injmap_find_code(pid_t pid, int memfd, const char *first, injmap_match_fn match,
		     uint64_t *addr)
{
	struct code_arg a = { .memfd = memfd, .first = first, .match = match, .addr = addr };
	int ret = 0;

	a.buf = malloc(CODE_CHUNK);
	if (!a.buf)
		return -ENOMEM;
	for (int pass = first ? 0 : 1; pass < 2 && !ret; pass++) {
		a.first_pass = pass == 0;
		ret = each_map(pid, search_code, &a);
	}
	free(a.buf);
	return ret < 0 ? ret : ret ? 0 : -ENOENT;
}

struct scratch_arg {
	int memfd;
	const char *name;
	const void *magic;
	size_t magic_len;
	struct inj_vma *out;
};

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static int match_scratch(const struct map_line *m, void *arg)
{
	struct scratch_arg *a = arg;
	uint8_t page[PAGE_SIZE_4K];

	if (strcmp(m->name, a->name)) {
		/* unnamed: anonymous, private, r-x, small */
		if (m->inode || m->name[0] || strcmp(m->perms, "r-xp") ||
		    m->end - m->start > SCRATCH_MAX || a->magic_len > sizeof(page))
			return 0;
		if (pread(a->memfd, page, sizeof(page), (off_t)m->start) != (ssize_t)sizeof(page))
			return 0;
		/* ours, or one whose mapping we saw complete but died before writing it */
		if (memcmp(page, a->magic, a->magic_len) && !all_zero(page, sizeof(page)))
			return 0;
	}
	a->out->start = m->start;
	a->out->end = m->end;
	return 1;
}

int injmap_find_scratch(pid_t pid, int memfd, const char *name, const void *magic,
			size_t magic_len, struct inj_vma *out)
{
	struct scratch_arg a = { memfd, name, magic, magic_len, out };
	int ret = each_map(pid, match_scratch, &a);

	return ret < 0 ? ret : ret ? 0 : -ENOENT;
}
