/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uffd_caps.h - the one userfaultfd probe: can exact mode give a target a userfaultfd, and how.
 *
 * A userfaultfd belongs to the mm of the process that creates it, so exact mode has the
 * target create its own (by injection) and takes it over.  Two ways to create one there:
 *  - the userfaultfd() system call.  With vm.unprivileged_userfaultfd=0 (the default) it
 *    needs CAP_SYS_PTRACE in the creating process - the target: root targets only
 *    (UFFD_USER_MODE_ONLY would lift that, but then kernel-mode faults - read() into an
 *    untouched page - fail with EFAULT in ordered mode instead of being served);
 *  - /dev/userfaultfd (Linux 6.1+): whoever can open it (mode 0600 root: mevitop) may create
 *    userfaultfds with its ioctl USERFAULTFD_IOC_NEW, for the mm of the process calling the
 *    ioctl, full-featured, with no capability check beyond the open.  mevitop opens it and
 *    hands the open file to the target (exact/uffd_dev.h): any user's process.
 * Both are tried here in mevitop's own process (as root the syscall works here as in a root
 * target), with write-protect registration of anonymous memory (--exact=fast needs it).
 * uffd.c's uffd_inject() uses the syscall where the target may, else the device.
 */
#ifndef MEVITOP_UFFD_CAPS_H
#define MEVITOP_UFFD_CAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <linux/userfaultfd.h>

#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW	_IO(0xAA, 0x00)	/* Linux 6.1; Debian 12's headers may lack it */
#endif

struct uffd_caps {
	bool syscall;		/* userfaultfd() is used (works here, not disabled) */
	int syscall_errno;	/* why not (0: disabled by switch) */
	bool dev;		/* the /dev/userfaultfd handoff is used */
	int dev_errno;		/* why not (0: disabled by switch) */
	bool wp;		/* anonymous memory registers in WP mode */
	uint64_t features;	/* what UFFDIO_API offers (0 if no way works) */
};

/* Probes both ways (skipping those switched off) and WP registration.  Always succeeds. */
void uffd_caps_probe(struct uffd_caps *c, bool no_syscall, bool no_dev);

/* The ways uffd_inject() will use, in words (--probe), "none" if no way works. */
const char *uffd_caps_paths(const struct uffd_caps *c);

#endif /* MEVITOP_UFFD_CAPS_H */
