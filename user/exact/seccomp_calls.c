// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp_calls.c - the list of injected system calls (native numbers), in the order an
 * attach makes them.  Keep it in step with scratch.c (the scratch page), inject.c (the
 * trampoline), uffd.c (the userfaultfd and its API handshake) and uffd_dev.c (the
 * /dev/userfaultfd handoff).
 */
#include "exact/seccomp_calls.h"

#include "kernel/uffd_caps.h"
#include "lib/page.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/userfaultfd.h>

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif


#define A(i)	(1u << (i))
#define PAGE	((long)PAGE_SIZE_4K)	/* the scratch page, as a syscall argument */

const struct sc_injected sc_injected[] = {
	{ __NR_mmap, "mmap", { 0, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0 },
	  A(1), "maps the injection's scratch page (its length follows the CPU's XSAVE size)",
	  SC_WAY_ALL },
	/* the memfd the scratch page is mapped from (exact/scratch.c), before that mmap */
	{ __NR_memfd_create, "memfd_create", { 0, 0, 0, 0, 0, 0 }, A(0) | A(1),
	  "creates the file that names the scratch page /memfd:mevitop-scratch",
	  SC_WAY_OPTIONAL },
	{ __NR_ftruncate, "ftruncate", { 0, 0, 0, 0, 0, 0 }, A(0) | A(1),
	  "sizes that file", SC_WAY_OPTIONAL },
	{ __NR_mmap, "mmap", { 0, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, 0, 0 }, A(1) | A(4),
	  "maps that file as the scratch page", SC_WAY_OPTIONAL },
	{ __NR_munmap, "munmap", { 0, 0, 0, 0, 0, 0 }, A(0) | A(1),
	  "unmaps the scratch page when mevitop lets the process go", SC_WAY_OPTIONAL },
	{ __NR_prctl, "prctl", { PR_SET_VMA, PR_SET_VMA_ANON_NAME, 0, 0, 0, 0 },
	  A(2) | A(3) | A(4), "names an anonymous scratch page [anon:mevitop-scratch]",
	  SC_WAY_OPTIONAL },
	{ __NR_userfaultfd, "userfaultfd", { O_CLOEXEC | O_NONBLOCK, 0, 0, 0, 0, 0 }, 0,
	  "creates the userfaultfd exact mode watches the process with", SC_WAY_SYSCALL },
	{ __NR_close, "close", { 0, 0, 0, 0, 0, 0 }, A(0),
	  "closes the process's own copy of that userfaultfd", SC_WAY_ALL },
	{ __NR_rt_sigreturn, "rt_sigreturn", { 0, 0, 0, 0, 0, 0 }, 0x3f,
	  "brings the thread home if mevitop dies during a call", SC_WAY_ALL },
	/* the API handshake made in the target (the remote path, see uffd_set_api_path) */
	{ __NR_mmap, "mmap", { 0, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
	  0 }, 0, "maps a page for the userfaultfd API handshake", SC_WAY_REMOTE | SC_WAY_DEV },
	{ __NR_ioctl, "ioctl", { 0, (long)UFFDIO_API, 0, 0, 0, 0 }, A(0) | A(2),
	  "enables the userfaultfd API", SC_WAY_REMOTE },
	{ __NR_munmap, "munmap", { 0, PAGE, 0, 0, 0, 0 }, A(0),
	  "unmaps that page", SC_WAY_REMOTE | SC_WAY_DEV },
	/* the /dev/userfaultfd handoff (exact/uffd_dev.c), for targets without CAP_SYS_PTRACE;
	 * its page is mapped and unmapped like the handshake's, its fds closed by close */
	{ __NR_socketpair, "socketpair", { AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, 0, 0, 0 },
	  A(3), "makes the socket /dev/userfaultfd is handed over", SC_WAY_DEV },
	{ __NR_recvmsg, "recvmsg", { 0, 0, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, 0, 0, 0 },
	  A(0) | A(1), "receives mevitop's open /dev/userfaultfd", SC_WAY_DEV },
	{ __NR_ioctl, "ioctl", { 0, (long)USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK, 0, 0, 0 },
	  A(0), "creates the userfaultfd from /dev/userfaultfd (USERFAULTFD_IOC_NEW)",
	  SC_WAY_DEV },
};

const size_t sc_injected_count = sizeof(sc_injected) / sizeof(sc_injected[0]);

const struct sc_injected *seccomp_calls_injected_find(long nr, const long args[6], unsigned unknown)
{
	for (size_t i = 0; i < sc_injected_count; i++) {
		const struct sc_injected *e = &sc_injected[i];
		int a;

		if (e->nr != nr)
			continue;
		/* every argument the proof took as fixed is fixed, and has that value */
		for (a = 0; a < 6; a++)
			if (!(e->unknown & A(a)) && ((unknown & A(a)) || args[a] != e->args[a]))
				break;
		if (a == 6)
			return e;
	}
	return NULL;
}
