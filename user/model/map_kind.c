// SPDX-License-Identifier: GPL-2.0
/* What a mapping is (anon, heap, file, shmem, ...), from its path and permissions. */
#include <string.h>
#include "model/model.h"

const char *map_kind_name(enum map_kind k)
{
	static const char *names[MK_COUNT] = {
		[MK_ANON] = "anon", [MK_HEAP] = "heap", [MK_STACK] = "stack",
		[MK_FILE] = "file", [MK_SHMEM] = "shmem", [MK_VDSO] = "vdso",
		[MK_VVAR] = "vvar", [MK_VSYSCALL] = "vsyscall", [MK_OTHER] = "other",
	};
	return k < MK_COUNT ? names[k] : "other";
}

enum map_kind map_kind_classify(const char *path, uint32_t perms, bool anon_shared)
{
	if (!path || !*path)
		return anon_shared || (perms & MP_SHARED) ? MK_SHMEM : MK_ANON;
	if (!strcmp(path, "[heap]"))
		return MK_HEAP;
	if (!strcmp(path, "[stack]"))
		return MK_STACK;
	if (!strcmp(path, "[vdso]"))
		return MK_VDSO;
	if (!strncmp(path, "[vvar", 5))
		return MK_VVAR;
	if (!strcmp(path, "[vsyscall]"))
		return MK_VSYSCALL;
	if (!strncmp(path, "[anon_shmem:", 12))
		return MK_SHMEM;
	if (!strncmp(path, "[anon:", 6))
		return MK_ANON;
	if (path[0] == '[')
		return MK_OTHER;
	/* Shared anonymous memory shows as "/dev/zero (deleted)"; memfd, SysV and POSIX shm
	 * are shmem too. */
	if (!strncmp(path, "/dev/zero", 9) || !strncmp(path, "/SYSV", 5) ||
	    !strncmp(path, "/memfd:", 7) || !strncmp(path, "/dev/shm/", 9))
		return MK_SHMEM;
	return MK_FILE;
}

bool map_kind_private_anon(enum map_kind k)
{
	return k == MK_ANON || k == MK_HEAP || k == MK_STACK;
}
