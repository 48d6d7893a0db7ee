// SPDX-License-Identifier: GPL-2.0
/* uffd_dev.c - the /dev/userfaultfd handoff into a seized target (see uffd_dev.h). */
#include "exact/uffd_dev.h"
#include "exact/arch.h"
#include "exact/inject.h"

#include "kernel/uffd_caps.h"
#include "lib/page.h"
#include "lib/syscall_err.h"
#include "lib/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/userfaultfd.h>
#include <unistd.h>

#define UFFD_DEV_PATH	"/dev/userfaultfd"


static void (*test_hook)(void *ctx, const char *stage);
static void *test_hook_ctx;

void uffd_dev_set_test_hook(void (*hook)(void *ctx, const char *stage), void *ctx)
{
	test_hook = hook;
	test_hook_ctx = ctx;
}

static const char *const step_names[UFFD_DEV_NSTEPS] = {
	[UFFD_DEV_STEP_MMAP] = "dev-mmap",
	[UFFD_DEV_STEP_SOCKETPAIR] = "dev-socketpair",
	[UFFD_DEV_STEP_CLOSE_SV0] = "dev-close-sv0",
	[UFFD_DEV_STEP_RECVMSG] = "dev-recvmsg",
	[UFFD_DEV_STEP_CLOSE_SV1] = "dev-close-sv1",
	[UFFD_DEV_STEP_IOCTL] = "dev-ioctl",
	[UFFD_DEV_STEP_CLOSE_UFFD] = "dev-close-uffd",
	[UFFD_DEV_STEP_CLOSE_DEV] = "dev-close-dev",
	[UFFD_DEV_STEP_MUNMAP] = "dev-munmap",
};

struct handoff {
	int devfd;		/* our open /dev/userfaultfd */
	uint64_t page;		/* the chain's data page in the target */
	int uffd;		/* our copy of the target's new userfaultfd */
	int err;		/* first failure */
	char why[WHY_LEN];
};

static void fail(struct handoff *h, int err, const char *what)
{
	if (h->err)
		return;
	h->err = err;
	snprintf(h->why, sizeof(h->why), "%s: %s", what, strerror(-err));
}

/* Send the open device over our copy of the target's socket end @remote. */
static void send_dev(struct handoff *h, struct inj *in, int remote)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'u';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int sock, err;

	err = inj_getfd(in, remote, &sock);
	if (err) {
		fail(h, err, "failed to take the socket injected into the target");
		return;
	}
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &h->devfd, sizeof(int));
	/* The datagram stays queued on the target's end after we close ours. */
	if (sendmsg(sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		fail(h, -errno, "failed to send /dev/userfaultfd to the target");
	close(sock);
}

static int at_exit(void *ctx, struct inj *in, int step, long nr, long ret)
{
	struct handoff *h = ctx;
	int sv[2];

	(void)nr;
	if (step < 0 || step >= UFFD_DEV_NSTEPS)
		return 1;
	if (test_hook)
		test_hook(test_hook_ctx, step_names[step]);
	switch (step) {
	case UFFD_DEV_STEP_MMAP:
		if (syscall_failed(ret)) {
			fail(h, (int)ret, "failed to map a page in the target");
			return 1;	/* nothing made yet: restore right here */
		}
		h->page = (uint64_t)ret;
		break;
	case UFFD_DEV_STEP_SOCKETPAIR:
		if (ret < 0) {
			fail(h, (int)ret, "failed to create a socketpair in the target");
			break;
		}
		if (inj_mem_read(in, h->page + UFFD_DEV_SV_OFF, sv, sizeof(sv)))
			fail(h, -EIO, "failed to read the target's socketpair");
		else
			send_dev(h, in, sv[0]);
		break;
	case UFFD_DEV_STEP_RECVMSG:
		if (ret < 0)
			fail(h, (int)ret, "failed to receive /dev/userfaultfd in the target");
		break;
	case UFFD_DEV_STEP_IOCTL:
		if (ret < 0)
			fail(h, (int)ret, "USERFAULTFD_IOC_NEW failed in the target");
		else if (!h->err && (ret = inj_getfd(in, (int)ret, &h->uffd)) != 0)
			fail(h, (int)ret, "failed to take the target's userfaultfd");
		break;
	default:
		break;
	}
	return 0;
}

/*
 * What the chain can call (the arch's, exact/arch.h), for the seccomp guard of a filtered target:
 * the arguments it learns on the way (the page, the fds) are unknown to the proof.
 */
#define PAGE_LEN	((long)PAGE_SIZE_4K)
#define IPU		INJ_CALL_IP_UNKNOWN	/* the chain's code is written at attach */
static const struct inj_call chain_calls[] = {
	{ .nr = __NR_mmap, .args = { 0, PAGE_LEN, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0 }, .unknown = IPU },
	{ .nr = __NR_socketpair, .args = { AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, 0, 0, 0 },
	  .unknown = 1u << 3 | IPU },
	{ .nr = __NR_recvmsg, .args = { 0, 0, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, 0, 0, 0 },
	  .unknown = 1u << 0 | 1u << 1 | IPU },
	{ .nr = __NR_ioctl, .args = { 0, (long)USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK,
				      0, 0, 0 }, .unknown = 1u << 0 | IPU },
	{ .nr = __NR_close, .unknown = 1u << 0 | IPU },
	{ .nr = __NR_munmap, .args = { 0, PAGE_LEN, 0, 0, 0, 0 }, .unknown = 1u << 0 | IPU },
	{ .nr = __NR_rt_sigreturn, .unknown = 0x3fu | IPU },
};

int uffd_dev_create(struct inj *in, int *local_fd, char *why, size_t whylen)
{
	struct handoff h = { .devfd = -1, .uffd = -1 };
	struct inj_chain ch = { .build = arch_uffd_dev_build, .nsteps = UFFD_DEV_NSTEPS,
				.at_exit = at_exit, .ctx = &h, .calls = chain_calls,
				.ncalls = (int)(sizeof(chain_calls) / sizeof(chain_calls[0])) };
	int err;

	*local_fd = -1;
	h.devfd = open(UFFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (h.devfd < 0) {
		err = -errno;
		snprintf(why, whylen, "failed to open %s: %s", UFFD_DEV_PATH, strerror(-err));
		return err;
	}
	err = inj_syscall_chain(in, &ch);
	close(h.devfd);
	if (!err && h.err)
		err = h.err;
	if (!err && h.uffd < 0) {
		err = -EIO;
		fail(&h, err, "the chain gave no userfaultfd");
	}
	if (err) {
		if (h.uffd >= 0)
			close(h.uffd);
		snprintf(why, whylen, "failed to hand /dev/userfaultfd to process %d: %s",
			 inj_pid(in), h.err ? h.why : strerror(-err));
		return err;
	}
	*local_fd = h.uffd;
	return 0;
}
