// SPDX-License-Identifier: GPL-2.0
/* One filesystem's directory tree, depth first (dirwalk.h). */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "kernel/dirwalk.h"

int dirwalk_tree(struct dirwalk *w, int dfd, char *path, size_t len, size_t cap)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int err = 0;

	if (!d) {
		close(dfd);
		return 0;
	}
	while (!err && w->left && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (w->dirs_only && de->d_type != DT_DIR))
			continue;
		w->left--;
		if (len + 1 + n + 1 > cap ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || st.st_dev != w->dev)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		err = w->fn(w->ctx, path, &st);
		if (!err && S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				err = dirwalk_tree(w, sub, path, len + 1 + n, cap);
		}
		path[len] = 0;
	}
	closedir(d);
	return err;
}
