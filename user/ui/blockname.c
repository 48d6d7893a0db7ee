// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "ui/blockname.h"

/* Strips a prefix and a suffix from s (if present), into buf, cut to BLOCK_NAME_MAX. */
static size_t trimmed(const char *s, const char *prefix, const char *suffix, char *buf,
		      size_t len)
{
	size_t n, pl = strlen(prefix), sl = strlen(suffix);

	if (!strncmp(s, prefix, pl))
		s += pl;
	n = strlen(s);
	if (n >= sl && !strcmp(s + n - sl, suffix))
		n -= sl;
	if (n > BLOCK_NAME_MAX)
		n = BLOCK_NAME_MAX;
	if (n >= len)
		n = len ? len - 1 : 0;
	if (len) {
		memcpy(buf, s, n);
		buf[n] = 0;
	}
	return n;
}

size_t blockname_of(const struct mapping *m, char *buf, size_t len)
{
	const char *path = m->path, *slash;

	if (!path || !*path)
		return trimmed(map_kind_name(m->kind), "", "", buf, len);
	if (!strncmp(path, "[anon:", 6))
		return trimmed(path, "[anon:", "]", buf, len);
	if (!strncmp(path, "[anon_shmem:", 12))
		return trimmed(path, "[anon_shmem:", "]", buf, len);
	if (path[0] == '[')
		return trimmed(path, "[", "]", buf, len);
	if (!strncmp(path, "/memfd:", 7))
		return trimmed(path, "/memfd:", " (deleted)", buf, len);
	slash = strrchr(path, '/');
	return trimmed(slash && slash[1] ? slash + 1 : path, "", " (deleted)", buf, len);
}

static bool unnamed_anon(const struct mapping *m)
{
	return m->kind == MK_ANON && (!m->path || !*m->path);
}

bool blockname_continues(const struct mapping *prev, const struct mapping *m)
{
	if (!prev || mapping_end(prev) != mapping_start(m))
		return false;
	/* Segments of one ELF object: the same file, mapped back to back. */
	if (prev->path && m->path && prev->kind == MK_FILE && m->kind == MK_FILE)
		return !strcmp(prev->path, m->path);
	/* The bss: anonymous memory right after a file's writable data segment. */
	if (prev->kind == MK_FILE && (prev->perms & MP_WRITE) && unnamed_anon(m))
		return (m->perms & (MP_READ | MP_WRITE)) == (MP_READ | MP_WRITE);
	/* A thread's stack: an inaccessible guard page, then the stack right above it. */
	if (unnamed_anon(prev) && unnamed_anon(m) &&
	    !(prev->perms & (MP_READ | MP_WRITE | MP_EXEC)))
		return (m->perms & (MP_READ | MP_WRITE)) == (MP_READ | MP_WRITE);
	return false;
}
