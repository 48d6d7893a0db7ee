// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/array.h"
#include "kernel/procfs.h"

ssize_t procfs_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - total);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		total += n;
	}
	buf[total] = 0;
	close(fd);
	return total;
}

/* A missing /proc/PID means the process is gone: report ESRCH, whatever open said. */
static int gone(int err)
{
	return err == -ENOENT ? -ESRCH : err;
}

/* Reads a whole /proc file of unknown size into a growing buffer: each read gets at least
 * SLURP_ROOM bytes (a seq_file hands out up to a page per read). */
#define SLURP_FIRST	16384
#define SLURP_ROOM	4096

/* A field of a maps line as the kernel prints it (hex without 0x, or decimal); NULL when
 * there is no digit.  By hand: sscanf() was a third of reading a small process's text. */
static const char *hex_field(const char *p, uint64_t *v)
{
	const char *s = p;
	uint64_t x = 0;

	for (;; p++) {
		unsigned int c = (unsigned char)*p;

		if (c - '0' < 10)
			x = x << 4 | (c - '0');
		else if ((c | 32) - 'a' < 6)
			x = x << 4 | ((c | 32) - 'a' + 10);
		else
			break;
	}
	*v = x;
	return p > s ? p : NULL;
}

static const char *dec_field(const char *p, uint64_t *v)
{
	const char *s = p;
	uint64_t x = 0;

	for (; (unsigned int)(*p - '0') < 10; p++)
		x = x * 10 + (uint64_t)(*p - '0');
	*v = x;
	return p > s ? p : NULL;
}

/* "start-end perms offset major:minor inode   path" */
static int parse_maps_line(char *line, struct maps_entry *e)
{
	const char *p = hex_field(line, &e->start);
	uint64_t major, minor;

	if (!p || *p++ != '-' || !(p = hex_field(p, &e->end)) || *p++ != ' ')
		return -EINVAL;
	if (!p[0] || !p[1] || !p[2] || !p[3] || p[4] != ' ')
		return -EINVAL;
	e->perms = (p[0] == 'r' ? MP_READ : 0) | (p[1] == 'w' ? MP_WRITE : 0) |
		   (p[2] == 'x' ? MP_EXEC : 0) | (p[3] == 's' ? MP_SHARED : 0);
	p += 5;
	if (!(p = hex_field(p, &e->offset)) || *p++ != ' ' || !(p = hex_field(p, &major)) ||
	    *p++ != ':' || !(p = hex_field(p, &minor)) || *p++ != ' ' ||
	    !(p = dec_field(p, &e->ino)))
		return -EINVAL;
	e->dev_major = (uint32_t)major;
	e->dev_minor = (uint32_t)minor;
	while (*p == ' ' || *p == '\t')
		p++;
	e->path = p;
	return 0;
}

int procfs_parse_maps(char *buf, maps_cb cb, void *arg)
{
	struct maps_entry e;
	char *line, *next;
	int ret = 0;

	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (parse_maps_line(line, &e))
			continue;	/* not a mapping's line: none is left out for it */
		ret = cb(&e, arg);
		if (ret)
			break;
	}
	return ret;
}

/* The whole of fd into buf (cap bytes, on the caller's stack; or none), or into a heap
 * buffer when it does not fit (the caller frees what is not buf); NULL and *err on
 * failure. */
static char *read_whole(int fd, char *buf, size_t cap, size_t *len, int *err)
{
	char *b = buf;
	size_t n = 0;
	ssize_t r;

	for (;;) {
		if (cap - n < SLURP_ROOM) {
			size_t ncap = cap ? cap * 2 : SLURP_FIRST;
			char *nb = malloc(ncap);

			if (!nb) {
				*err = -ENOMEM;
				goto fail;
			}
			if (n)
				memcpy(nb, b, n);
			if (b != buf)
				free(b);
			b = nb;
			cap = ncap;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			*err = -errno;
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	b[n] = 0;
	*len = n;
	return b;
fail:
	if (b != buf)
		free(b);
	return NULL;
}

static char *slurp(const char *path, size_t *len, int *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;

	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	buf = read_whole(fd, NULL, 0, len, err);
	close(fd);
	return buf;
}

/* exact: -EILSEQ, before any callback, when a name may hold an escape (the text writes a
 * newline in a path as the four characters \012, and a backslash as itself), and -ESRCH
 * for no mappings at all (no mm: gone, or a kernel thread), as PROCMAP_QUERY says. */
static int read_maps(pid_t pid, maps_cb cb, void *arg, bool exact)
{
	char path[64], stack[SLURP_FIRST], *buf;
	size_t len;
	int fd, err = 0, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gone(-errno);
	buf = read_whole(fd, stack, sizeof(stack), &len, &err);
	close(fd);
	if (!buf)
		return gone(err);
	if (exact && (!len || memchr(buf, '\\', len))) {
		ret = len ? -EILSEQ : -ESRCH;
		goto out;
	}
	ret = procfs_parse_maps(buf, cb, arg);
out:
	if (buf != stack)
		free(buf);
	return ret;
}

int procfs_read_maps(pid_t pid, maps_cb cb, void *arg)
{
	return read_maps(pid, cb, arg, false);
}

int procfs_read_maps_exact(pid_t pid, maps_cb cb, void *arg)
{
	return read_maps(pid, cb, arg, true);
}

int procfs_read_vmflags(pid_t pid, vmflags_cb cb, void *arg)
{
	char path[64], *buf, *line, *next, *tok;
	uint64_t start = 0, end = 0;
	size_t len;
	int err = 0, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	buf = slurp(path, &len, &err);
	if (!buf)
		return gone(err);
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (isxdigit((unsigned char)line[0]) && strchr(line, '-')) {
			sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end);
			continue;
		}
		if (strncmp(line, "VmFlags:", 8))
			continue;
		uint32_t vmf = 0;
		char *save = NULL;

		for (tok = strtok_r(line + 8, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			if (!strcmp(tok, "hg"))
				vmf |= VMF_HUGEPAGE;
			else if (!strcmp(tok, "nh"))
				vmf |= VMF_NOHUGEPAGE;
			else if (!strcmp(tok, "gd"))
				vmf |= VMF_GROWSDOWN;
			else if (!strcmp(tok, "lo"))
				vmf |= VMF_LOCKED;
			else if (!strcmp(tok, "ht"))
				vmf |= VMF_HUGETLB;
			else if (!strcmp(tok, "pf") || !strcmp(tok, "io"))
				vmf |= VMF_PFNMAP;
		}
		ret = cb(start, end, vmf, arg);
		if (ret)
			break;
	}
	free(buf);
	return ret;
}

int procfs_read_comm(pid_t pid, char *comm, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	n = procfs_read_file(path, comm, len);
	if (n < 0)
		return gone(n);
	while (n > 0 && comm[n - 1] == '\n')
		comm[--n] = 0;
	return 0;
}

/* Value of a "Key:\tvalue" line of /proc/PID/status. */
static int status_field(pid_t pid, const char *key, long *val)
{
	char path[64], buf[4096], *p;
	ssize_t n;
	size_t klen = strlen(key);

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	n = procfs_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return gone(n);
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			*val = strtol(p + klen + 1, NULL, 10);
			return 0;
		}
	}
	return -ENOENT;
}

int procfs_read_tgid(pid_t tid, pid_t *tgid)
{
	long v;
	int err = status_field(tid, "Tgid", &v);

	if (!err)
		*tgid = v;
	return err;
}

int procfs_read_uid(pid_t pid, uid_t *uid)
{
	long v;
	int err = status_field(pid, "Uid", &v);

	if (!err)
		*uid = v;
	return err;
}

/* The effective uid (what top -u filters on): the second number of status's "Uid:". */
int procfs_read_euid(pid_t pid, uid_t *euid)
{
	char path[64], buf[4096], *p;
	unsigned long r, e;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	n = procfs_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return gone(n);
	p = strstr(buf, "\nUid:");
	if (!p || sscanf(p + 5, "%lu %lu", &r, &e) != 2)
		return -ENOENT;
	*euid = e;
	return 0;
}

/* The largest pid + 1 (/proc/sys/kernel/pid_max; the kernel's 64-bit limit if unreadable). */
size_t procfs_pid_max(void)
{
	char buf[32];
	unsigned long v;

	if (procfs_read_file("/proc/sys/kernel/pid_max", buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "%lu", &v) != 1)
		return 4194304;
	return v;
}

/* /proc/PID/stat into buf; *fields points just past the last ')' (comm may hold spaces and
 * parentheses), where field 3, the state, begins. */
static int read_stat(pid_t pid, char *buf, size_t len, char **fields)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = procfs_read_file(path, buf, len);
	if (n < 0)
		return gone(n);
	*fields = strrchr(buf, ')');
	return *fields ? 0 : -EINVAL;
}

/* Field @field (numbered as proc(5) does) of /proc/PID/stat, a number. */
static int stat_field(pid_t pid, int field, uint64_t *v)
{
	char buf[2048], *p;
	int i, err = read_stat(pid, buf, sizeof(buf), &p);

	if (err)
		return err;
	/* p is at the ")" that ends field 2 (comm, which may hold spaces). */
	for (i = 2; i < field && p; i++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -EINVAL;
	*v = strtoull(p + 1, NULL, 10);
	return 0;
}

int procfs_read_start_brk(pid_t pid, uint64_t *start_brk)
{
	return stat_field(pid, 47, start_brk);
}

int procfs_read_cpu(pid_t tid, int *cpu)
{
	uint64_t v;
	int err = stat_field(tid, 39, &v);

	if (!err)
		*cpu = (int)v;
	return err;
}

/* The first three fields of /proc/PID/statm: size, resident, shared (pages).  The rss
 * counters are per-CPU counters.  /proc/PID/stat reads only their shared part, which lags
 * by up to 32 pages per CPU and counter (measured here: 14 pages behind after 20 faults),
 * so a reclaim of a few dozen pages would not show there; statm sums the per-CPU parts
 * (6.16+: "mm: fix the inaccurate memory statistics"). */
static int read_statm(pid_t pid, uint64_t v[3])
{
	char path[64], buf[256], *p = buf, *end;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	n = procfs_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return gone(n);
	for (int i = 0; i < 3; i++, p = end) {
		v[i] = strtoull(p, &end, 10);
		if (end == p)
			return -EINVAL;
	}
	return 0;
}

int procfs_read_rss(pid_t pid, uint64_t *rss)
{
	uint64_t v[3];
	int err = read_statm(pid, v);

	if (!err)
		*rss = v[1];
	return err;
}

int procfs_read_anon_rss(pid_t pid, uint64_t *pages)
{
	uint64_t v[3];
	int err = read_statm(pid, v);

	if (!err)
		*pages = v[1] > v[2] ? v[1] - v[2] : 0;	/* shared: file and shmem pages */
	return err;
}

int procfs_read_counters(pid_t pid, struct proc_counters *c)
{
	char buf[2048], *p;
	unsigned long long v[24];
	int i, err = read_stat(pid, buf, sizeof(buf), &p);

	char *open;

	if (err)
		return err;
	/* The name between the first '(' and the last ')' (it may hold either). */
	open = strchr(buf, '(');
	c->comm[0] = 0;
	if (open && open < p)
		snprintf(c->comm, sizeof(c->comm), "%.*s", (int)(p - open - 1), open + 1);
	c->state = p[2];
	if (!(p = strchr(p + 2, ' ')))		/* past the state */
		return -EINVAL;
	/* Fields 4..24 (ppid .. rss) are numbers. */
	for (i = 4; i <= 24; i++) {
		char *end;

		v[i - 1] = strtoull(p, &end, 10);
		if (end == p)
			return -EINVAL;
		p = end;
	}
	c->ppid = (pid_t)v[3];
	c->minflt = v[9];
	c->majflt = v[11];
	c->start_time = v[21];
	c->vsize = v[22];
	return procfs_read_rss(pid, &c->rss);
}

bool procfs_process_ended(pid_t pid, uint64_t born)
{
	struct proc_counters c;
	long threads;

	if (procfs_read_counters(pid, &c) == -ESRCH)
		return true;
	if (born && c.start_time != born)
		return true;		/* the pid was reused */
	if (c.state != 'Z' && c.state != 'X')
		return false;
	/* A zombie leader whose other threads still run (it called pthread_exit()) is alive:
	 * the thread count drops only as threads are released, and a zombie group keeps 1. */
	return status_field(pid, "Threads", &threads) || threads <= 1;
}

int procfs_exe_is_32bit(pid_t pid)
{
	char path[64], ident[EI_NIDENT];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gone(-errno);
	n = pread(fd, ident, sizeof(ident), 0);
	close(fd);
	if (n != (ssize_t)sizeof(ident) || memcmp(ident, ELFMAG, SELFMAG))
		return -ENOEXEC;
	return ident[EI_CLASS] == ELFCLASS32;
}

static char stat_state(const char *path)
{
	char buf[512], *p;

	if (procfs_read_file(path, buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')) || !p[1])
		return 0;
	return p[2];
}

int procfs_live_thread(pid_t pid, pid_t *tid)
{
	char path[96];
	struct dirent *d;
	DIR *dir;
	char st;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	st = stat_state(path);
	if (!st)
		return -ESRCH;
	*tid = pid;
	if (st != 'Z' && st != 'X')
		return 0;
	/* The main thread exited (pthread_exit()) and waits as a zombie for the others:
	 * /proc/PID/maps, statm and pagemap read its mm, which is gone; any live thread's
	 * /proc/TID has the process's. */
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -ESRCH;
	while ((d = readdir(dir))) {
		pid_t t = (pid_t)strtol(d->d_name, NULL, 10);

		if (t <= 0 || t == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, t);
		st = stat_state(path);
		if (st && st != 'Z' && st != 'X') {
			*tid = t;
			break;
		}
	}
	closedir(dir);
	return *tid != pid ? 0 : -ESRCH;
}

bool procfs_is_kernel_thread(pid_t pid)
{
	char path[64], buf[16];

	/* Kernel threads have no mm: /proc/PID/maps is empty (and exe unreadable).  So has a
	 * zombie main thread, but then a live thread shows the process's. */
	if (procfs_live_thread(pid, &pid))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	return procfs_read_file(path, buf, sizeof(buf)) == 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int procfs_list_pids(pid_t **pids, size_t *n)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t cap = 512, cnt = 0;
	pid_t *v = malloc(cap * sizeof(*v));

	if (!d || !v) {
		int err = d ? -ENOMEM : -errno;

		if (d)
			closedir(d);
		free(v);
		return err;
	}
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (array_reserve(v, cnt, cap, 512)) {
			closedir(d);
			free(v);
			return -ENOMEM;
		}
		v[cnt++] = pid;
	}
	closedir(d);
	qsort(v, cnt, sizeof(*v), cmp_pid);
	*pids = v;
	*n = cnt;
	return 0;
}

int procfs_pidfd_target(pid_t pid, int fd, pid_t *target)
{
	char path[64], buf[1024], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	n = procfs_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	p = strstr(buf, "\nPid:");
	if (!p)
		return -EINVAL;
	*target = strtol(p + 5, NULL, 10);
	return *target > 0 ? 0 : -ESRCH;
}
