/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uffd_dev_x86.h - the x86-64 code of the /dev/userfaultfd handoff chain (exact/uffd_dev.c),
 * run in the target by inj_syscall_chain().  Its calls, in order (UFFD_DEV_STEP_*):
 *
 *   page = mmap(NULL, 4096, rw, private anonymous)   its data: a msghdr, a cmsg, sv[2]
 *   socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, page->sv)
 *                       -- mevitop takes sv[0] and sends the open /dev/userfaultfd on it
 *   close(sv[0])
 *   recvmsg(sv[1], page->msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)   the fd lands in page->fd
 *   close(sv[1])
 *   uffd = ioctl(page->fd, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK)
 *                       -- mevitop takes uffd
 *   close(uffd)
 *   close(page->fd)
 *   munmap(page, 4096)
 *   rt_sigreturn (the trampoline's restore)
 *
 * Every call runs whatever happened before: a failed one yields -errno, which the later
 * calls get as a bad fd (EBADF, harmless) - page->fd and sv start as -1 - and recvmsg does
 * not wait, so a monitor killed before it sent anything leaves a chain that finds nothing,
 * closes what it made and goes home.  Only a failed mmap skips to the restore (there is
 * nothing to undo then).  No branch depends on mevitop being alive.
 */
#ifndef MEVITOP_UFFD_DEV_X86_H
#define MEVITOP_UFFD_DEV_X86_H

#include <stddef.h>
#include <stdint.h>

enum {
	UFFD_DEV_STEP_MMAP,
	UFFD_DEV_STEP_SOCKETPAIR,
	UFFD_DEV_STEP_CLOSE_SV0,
	UFFD_DEV_STEP_RECVMSG,
	UFFD_DEV_STEP_CLOSE_SV1,
	UFFD_DEV_STEP_IOCTL,
	UFFD_DEV_STEP_CLOSE_UFFD,
	UFFD_DEV_STEP_CLOSE_DEV,
	UFFD_DEV_STEP_MUNMAP,
	UFFD_DEV_NSTEPS,
};

/* Where the chain keeps sv[2] in its page (mevitop reads sv[0] there). */
#define UFFD_DEV_SV_OFF		0x60

/* The chain's bytes for address @code_addr, ending in a jump to @restore_addr; its length
 * or 0 if @len is too small.  (struct inj_chain's build.) */
size_t uffd_dev_x86_build(uint8_t *buf, size_t len, uint64_t code_addr, uint64_t restore_addr);

#endif /* MEVITOP_UFFD_DEV_X86_H */
