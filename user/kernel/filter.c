// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "lib/array.h"
#include "kernel/filter.h"
#include "lib/log.h"
#include "kernel/procfs.h"

int filter_set_user(struct filter *f, const char *user)
{
	struct passwd *pw = getpwnam(user);
	unsigned long long v;
	char *end;

	if (pw) {
		f->uid = pw->pw_uid;
		f->uid_set = true;
		return 0;
	}
	/* A uid is digits only and fits uid_t; (uid_t)-1 means "no uid" to the kernel.  strtol
	 * alone would take " 0", "+0" or 4294967296 (as 0: root). */
	if (*user >= '0' && *user <= '9') {
		errno = 0;
		v = strtoull(user, &end, 10);
		if (!errno && !*end && v < (uid_t)-1) {
			f->uid = v;
			f->uid_set = true;
			return 0;
		}
	}
	log_err("no such user: '%s' (a user name, or a uid from 0 to %u)", user,
		(unsigned)(uid_t)-1 - 1);
	return -EINVAL;
}

int filter_set_comm(struct filter *f, const char *comm)
{
	if (!*comm || strlen(comm) >= sizeof(f->comm)) {
		log_err("invalid command name '%s': 1 to 15 characters, as in /proc/PID/comm", comm);
		return -EINVAL;
	}
	snprintf(f->comm, sizeof(f->comm), "%s", comm);
	return 0;
}

int filter_set_cgroup(struct filter *f, const char *path)
{
	char full[PATH_MAX], real[PATH_MAX], procs[PATH_MAX + 16];
	struct stat st;

	/* "system.slice/x.service" means /sys/fs/cgroup/system.slice/x.service. */
	if (path[0] == '/')
		snprintf(full, sizeof(full), "%s", path);
	else
		snprintf(full, sizeof(full), "/sys/fs/cgroup/%s", path);
	if (!realpath(full, real) || stat(real, &st) || !S_ISDIR(st.st_mode)) {
		log_err("no such cgroup: %s", path);
		return -EINVAL;
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", real);
	if (stat(procs, &st)) {
		log_err("%s is not a cgroup directory (no cgroup.procs)", path);
		return -EINVAL;
	}
	f->cgroup = strdup(real);
	if (!f->cgroup)
		return -ENOMEM;
	return filter_refresh(f);
}

static int add_member(struct filter *f, pid_t pid)
{
	if (array_reserve(f->members, f->nmembers, f->capmembers, 256))
		return -ENOMEM;
	f->members[f->nmembers++] = pid;
	return 0;
}

static void read_cgroup(struct filter *f, const char *dir, int depth)
{
	char path[PATH_MAX + 16], line[32];
	struct dirent *de;
	FILE *fp;
	DIR *d;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fp = fopen(path, "re");
	if (fp) {
		while (fgets(line, sizeof(line), fp))
			add_member(f, atoi(line));
		fclose(fp);
	}
	if (depth > 32 || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		read_cgroup(f, path, depth + 1);
	}
	closedir(d);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int filter_refresh(struct filter *f)
{
	if (!f->cgroup)
		return 0;
	f->nmembers = 0;
	read_cgroup(f, f->cgroup, 0);
	if (f->nmembers)
		qsort(f->members, f->nmembers, sizeof(*f->members), cmp_pid);
	return 0;
}

bool filter_match(const struct filter *f, pid_t pid, const char *comm)
{
	if (f->uid_set) {
		uid_t uid;

		if (procfs_read_euid(pid, &uid) || uid != f->uid)
			return false;
	}
	if (f->comm[0]) {
		char c[16];

		if (!comm) {
			if (procfs_read_comm(pid, c, sizeof(c)))
				return false;
			comm = c;
		}
		if (strncmp(comm, f->comm, sizeof(f->comm)))
			return false;
	}
	if (f->cgroup && (!f->nmembers ||
			  !bsearch(&pid, f->members, f->nmembers, sizeof(pid), cmp_pid)))
		return false;
	return true;
}

void filter_free(struct filter *f)
{
	if (!f)
		return;
	free(f->cgroup);
	free(f->members);
	f->cgroup = NULL;
	f->members = NULL;
	f->nmembers = f->capmembers = 0;
}
