/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uffd_dev.h - give a seized target of any user a full-featured userfaultfd of its own mm,
 * through /dev/userfaultfd, without changing anything system-wide (kernel/uffd_caps.h says
 * why the userfaultfd() syscall cannot do it for a target without CAP_SYS_PTRACE).
 *
 * mevitop (root) opens /dev/userfaultfd - its permission is checked at open only - and the
 * target runs one injected chain (the arch's arch_uffd_dev.c, behind exact/arch.h): a
 * socketpair, over which mevitop sends the open device with SCM_RIGHTS; recvmsg;
 * ioctl(USERFAULTFD_IOC_NEW), whose result mevitop takes with pidfd_getfd; then the close of
 * everything the chain made.  The chain is one piece of code that runs to its end on its own
 * (inj_syscall_chain): a mevitop killed at any moment leaves the target with exactly its own
 * fds and no extra mapping.
 * Injected system calls: mmap, socketpair, close, recvmsg, ioctl, munmap (rt_sigreturn).
 */
#ifndef MEVITOP_UFFD_DEV_H
#define MEVITOP_UFFD_DEV_H

#include <stddef.h>

struct inj;

/*
 * Create the target's userfaultfd (O_CLOEXEC | O_NONBLOCK, no UFFDIO_API yet) and put our
 * copy in *local_fd; the target keeps none.  Returns 0 or -errno, with why in @why.
 */
int uffd_dev_create(struct inj *in, int *local_fd, char *why, size_t whylen);

/* Tests: called at the exit of each call of the chain with its name ("dev-socketpair"...),
 * where MEVITOP_TEST_PAUSE may hold mevitop (exact.c). */
void uffd_dev_set_test_hook(void (*hook)(void *ctx, const char *stage), void *ctx);

#endif /* MEVITOP_UFFD_DEV_H */
