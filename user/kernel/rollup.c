// SPDX-License-Identifier: GPL-2.0
/* /proc/PID/smaps_rollup: Pss_Anon and Anonymous (rollup.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/procfs.h"
#include "kernel/rollup.h"

/* The value of "Name:  N kB" at the start of a line, into *out (bytes); false if absent. */
static int field(const char *text, const char *name, uint64_t *out)
{
	size_t len = strlen(name);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, name, len) && p[len] == ':') {
			char *end;
			unsigned long long v;

			errno = 0;
			v = strtoull(p + len + 1, &end, 10);
			if (errno || end == p + len + 1 || v > UINT64_MAX / 1024)
				return -EINVAL;
			*out = v * 1024;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

int rollup_parse(const char *text, struct rollup *r)
{
	int a, b;

	memset(r, 0, sizeof(*r));
	a = field(text, "Pss_Anon", &r->pss_anon);
	b = field(text, "Anonymous", &r->anon);
	if (a == -EINVAL || b == -EINVAL || (a && b))
		return -EINVAL;
	return 0;
}

int rollup_read(pid_t pid, struct rollup *r)
{
	char path[64], buf[2048];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	n = procfs_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (n == 0) {		/* a kernel thread, or an address space already gone */
		memset(r, 0, sizeof(*r));
		return 0;
	}
	return rollup_parse(buf, r);
}
