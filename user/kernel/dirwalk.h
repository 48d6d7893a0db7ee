/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A depth-first walk of one filesystem's directory tree from an open directory, the one walk
 * both the tmpfs names (fcache_name.c) and the memory cgroups' ids (cgroup_ids.c) use: no
 * symlinks followed, a mount below (another dev) not entered, at most `left` entries looked at.
 */
#ifndef MEVITOP_DIRWALK_H
#define MEVITOP_DIRWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct dirwalk {
	uint64_t dev;		/* the filesystem walked: entries on another are skipped */
	size_t left;		/* entries still to look at (counted down) */
	bool dirs_only;		/* only directories, told by d_type: cgroupfs's many control
				 * files are not even stat'ed */
	/* Each entry looked at (path: the directory's path + "/name"); non-zero stops the walk
	 * and is its return. */
	int (*fn)(void *ctx, const char *path, const struct stat *st);
	void *ctx;
};

/*
 * Walks below dfd (closed here), whose path is path[0..len) in a buffer of cap bytes (path
 * is restored on return).  0, or fn's non-zero return.
 */
int dirwalk_tree(struct dirwalk *w, int dfd, char *path, size_t len, size_t cap);

#endif
