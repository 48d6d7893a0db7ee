/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Process filters: -u USER, --comm NAME, --cgroup PATH.  The engine keeps the BPF target
 * bitmap equal to the set of processes that pass, so unwatched processes cost one array
 * lookup per fault and nothing else.
 */
#ifndef MEVITOP_FILTER_H
#define MEVITOP_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct filter {
	bool uid_set;
	uid_t uid;			/* effective uid, as top -u */
	char comm[16];			/* exact comm, or "" */
	char *cgroup;			/* cgroup directory (v2 or one v1 hierarchy), or NULL */
	pid_t *members;			/* cgroup: sorted pids in it and its descendants */
	size_t nmembers, capmembers;
};

static inline bool filter_active(const struct filter *f)
{
	return f && (f->uid_set || f->comm[0] || f->cgroup);
}

/* Parses the user's words; returns 0 or prints a message and returns -EINVAL. */
int filter_set_user(struct filter *f, const char *user);
int filter_set_comm(struct filter *f, const char *comm);
int filter_set_cgroup(struct filter *f, const char *path);

/* Re-reads the cgroup's member list (the cgroup and every cgroup below it). */
int filter_refresh(struct filter *f);
/* Does process pid pass?  comm may be NULL (read from /proc). */
bool filter_match(const struct filter *f, pid_t pid, const char *comm);
void filter_free(struct filter *f);

#endif
