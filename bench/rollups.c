// SPDX-License-Identifier: GPL-2.0
/*
 * Every process's smaps_rollup Pss and Private_Clean + Private_Dirty, one line each:
 * "PID PSS_KB PRIVATE_KB".  Linked statically (Makefile) so that the reader maps no
 * shared library: a reader that maps libc is a mapper of libc's pages while it reads,
 * and lowers the PSS (and USS) it reads of every process using them -- smem's python
 * does.  bench/sharing_bench.py compares mevitop --sharing with this and with smem.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return 1;
	while ((e = readdir(d))) {
		char path[300], line[256];
		long pss = -1, priv = 0, v;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/smaps_rollup", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "Pss: %ld kB", &v) == 1)
				pss = v;
			else if (sscanf(line, "Private_Clean: %ld kB", &v) == 1 ||
				 sscanf(line, "Private_Dirty: %ld kB", &v) == 1)
				priv += v;
		}
		fclose(f);
		if (pss >= 0)
			printf("%s %ld %ld\n", e->d_name, pss, priv);
	}
	closedir(d);
	return 0;
}
