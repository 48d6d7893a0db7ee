// SPDX-License-Identifier: GPL-2.0
/* uffd_caps.c - the one userfaultfd probe (see uffd_caps.h). */
#include "kernel/uffd_caps.h"
#include "lib/page.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#define UFFD_DEV_PATH		"/dev/userfaultfd"

/* A userfaultfd of our own process, by the syscall or by /dev/userfaultfd; fd or -errno. */
static int open_local(bool dev)
{
	int fd, devfd;

	if (!dev) {
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
		return fd < 0 ? -errno : fd;
	}
	devfd = open(UFFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (devfd < 0)
		return -errno;
	fd = ioctl(devfd, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		fd = -errno;
	close(devfd);
	return fd;
}

/* UFFDIO_API with features 0 always succeeds and reports everything the kernel has. */
static int api_features(int fd, uint64_t *features)
{
	struct uffdio_api api = { .api = UFFD_API };

	if (ioctl(fd, UFFDIO_API, &api) < 0)
		return -errno;
	*features = api.features;
	return 0;
}

/* Can @fd (UFFDIO_API done) register anonymous memory in WP mode?  Tried on a page of ours. */
static bool wp_registers(int fd)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	bool ok;
	void *p = mmap(NULL, PAGE_SIZE_4K, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return false;
	reg.range.start = (uint64_t)(uintptr_t)p;
	reg.range.len = PAGE_SIZE_4K;
	ok = ioctl(fd, UFFDIO_REGISTER, &reg) == 0;
	munmap(p, PAGE_SIZE_4K);
	return ok;
}

/* Try one way; true if it gives a working userfaultfd (features and WP filled in). */
static bool try_way(struct uffd_caps *c, bool dev, int *err)
{
	int fd = open_local(dev);
	uint64_t features = 0;

	if (fd < 0) {
		*err = -fd;
		return false;
	}
	*err = -api_features(fd, &features);
	if (!*err && !c->features) {
		c->features = features;
		c->wp = wp_registers(fd);
	}
	close(fd);
	return !*err;
}

void uffd_caps_probe(struct uffd_caps *c, bool no_syscall, bool no_dev)
{
	memset(c, 0, sizeof(*c));
	if (!no_syscall)
		c->syscall = try_way(c, false, &c->syscall_errno);
	if (!no_dev)
		c->dev = try_way(c, true, &c->dev_errno);
}

const char *uffd_caps_paths(const struct uffd_caps *c)
{
	if (c->syscall && c->dev)
		return "userfaultfd() where the target may, else /dev/userfaultfd";
	if (c->dev)
		return "/dev/userfaultfd";
	if (c->syscall)
		return "userfaultfd() (root or CAP_SYS_PTRACE targets only)";
	return "none";
}
