// SPDX-License-Identifier: GPL-2.0
/*
 * uffd.c - userfaultfd helpers: probe, inject into a seized target, register, serve faults.
 */
#include "exact/uffd.h"
#include "kernel/uffd_caps.h"
#include "exact/seccomp_guard.h"
#include "exact/uffd_dev.h"
#include "exact/inject.h"
#include "lib/page.h"
#include "lib/syscall_err.h"
#include "lib/clock.h"
#include "lib/array.h"
#include "lib/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef __NR_userfaultfd
#define __NR_userfaultfd	ARCH_NR_USERFAULTFD
#endif
#ifndef UFFD_PAGEFAULT_FLAG_MINOR
#define UFFD_PAGEFAULT_FLAG_MINOR	(1 << 2)
#endif

/* stats are bumped by the serving thread and read from others */
#define STAT_INC(s, f)	__atomic_fetch_add(&(s)->stats.f, 1, __ATOMIC_RELAXED)
#define MSG_BATCH	64

static __thread char why_buf[1024];
static enum uffd_api_path api_path_switch = UFFD_API_AUTO;
static enum uffd_api_path api_path_last = UFFD_API_AUTO;
static struct uffd_caps caps;		/* how targets get a userfaultfd (uffd_set_caps) */
static bool caps_set;
static enum uffd_create create_last = UFFD_CREATE_NONE;

static void set_why(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_why(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof(why_buf), fmt, ap);
	va_end(ap);
}

const char *uffd_why(void)
{
	return why_buf;
}

void uffd_set_api_path(enum uffd_api_path path)
{
	api_path_switch = path;
}

enum uffd_api_path uffd_last_api_path(void)
{
	return api_path_last;
}

void uffd_set_caps(const struct uffd_caps *c)
{
	caps = *c;
	caps_set = true;
}

enum uffd_create uffd_last_create(void)
{
	return create_last;
}

/* ---- probe ---- */

int uffd_probe(uint64_t *features)
{
	struct uffd_caps c;
	int err;

	uffd_caps_probe(&c, false, false);
	if (c.syscall || c.dev) {
		if (features)
			*features = c.features;
		return 0;
	}
	err = c.syscall_errno;
	if (err == ENOSYS)
		set_why("failed to create userfaultfd: %s (kernel built without CONFIG_USERFAULTFD)",
			strerror(ENOSYS));
	else if (err == EPERM)
		set_why("failed to create userfaultfd: %s (set sysctl vm.unprivileged_userfaultfd=1, "
			"run as root, or grant access to /dev/userfaultfd)", strerror(EPERM));
	else
		set_why("failed to create userfaultfd: %s", strerror(err));
	return -err;
}

/* ---- inject ---- */

static int api_local(int fd, uint64_t want, uint64_t *got)
{
	struct uffdio_api api = { .api = UFFD_API, .features = want };

	if (ioctl(fd, UFFDIO_API, &api) < 0)
		return -errno;
	*got = want;	/* api.features reports all supported ones, not the enabled ones */
	return 0;
}

static int api_remote(struct inj *in, int rfd, uint64_t want, uint64_t *got)
{
	struct uffdio_api api = { .api = UFFD_API, .features = want };
	long args[6] = { 0, (long)PAGE_SIZE_4K, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0 };
	long addr, ret;
	int err, err2;

	err = inj_syscall(in, __NR_mmap, args, &addr);
	if (!err && syscall_failed(addr))
		err = (int)addr;
	if (err) {
		set_why("failed to map a scratch page in process %d: %s", inj_pid(in), strerror(-err));
		return err;
	}
	err = inj_mem_write(in, (uint64_t)addr, &api, sizeof(api));
	if (err) {
		set_why("failed to write the scratch page of process %d: %s", inj_pid(in),
			strerror(-err));
		goto unmap;
	}
	{
		long a2[6] = { rfd, (long)UFFDIO_API, addr, 0, 0, 0 };

		err = inj_syscall(in, __NR_ioctl, a2, &ret);
	}
	if (!err && ret < 0)
		err = (int)ret;
	if (err) {
		set_why("failed to enable userfaultfd API in process %d: %s", inj_pid(in),
			strerror(-err));
		goto unmap;
	}
	err = inj_mem_read(in, (uint64_t)addr, &api, sizeof(api));
	if (!err)
		*got = want;
unmap:
	{
		long a3[6] = { addr, (long)PAGE_SIZE_4K, 0, 0, 0, 0 };

		err2 = inj_syscall(in, __NR_munmap, a3, &ret);
		if (!err2 && ret < 0)
			err2 = (int)ret;
	}
	if (!err && err2) {
		err = err2;
		set_why("failed to unmap the scratch page of process %d: %s", inj_pid(in),
			strerror(-err));
	}
	return err;
}

/* Without uffd_set_caps() (unit tests): every way this kernel has. */
static void uffd_set_caps_probed(void)
{
	struct uffd_caps c;

	uffd_caps_probe(&c, false, false);
	uffd_set_caps(&c);
}

/* Why the /dev/userfaultfd handoff is not used, as the end of a sentence. */
static const char *uffd_dev_off_why(void)
{
	static __thread char buf[160];

	if (!caps.dev_errno)
		return "the /dev/userfaultfd handoff is disabled (--disable uffd_dev): enable it";
	snprintf(buf, sizeof(buf), "/dev/userfaultfd is unavailable (%s; Linux 6.1+ has it): set "
		 "sysctl vm.unprivileged_userfaultfd=1", strerror(caps.dev_errno));
	return buf;
}

static const char *uffd_no_way_why(void)
{
	static __thread char buf[320];

	snprintf(buf, sizeof(buf), "no way to create one: userfaultfd() %s, and %s",
		 caps.syscall_errno ? strerror(caps.syscall_errno) : "is disabled (--disable "
		 "uffd_syscall)", uffd_dev_off_why());
	return buf;
}

/* The /dev/userfaultfd way (exact/uffd_dev.h); UFFDIO_API from our process. */
static int inject_dev(struct inj *in, uint64_t want, int *local_fd, uint64_t *got_features)
{
	uint64_t got = 0;
	char why[WHY_LEN];
	int fd, err;

	err = uffd_dev_create(in, &fd, why, sizeof(why));
	if (err) {
		set_why("%s", why);
		return err;
	}
	err = api_local(fd, want, &got);
	if (err) {
		close(fd);
		set_why("failed to enable userfaultfd API on the fd of process %d: %s",
			inj_pid(in), strerror(-err));
		return err;
	}
	api_path_last = UFFD_API_LOCAL;
	create_last = UFFD_CREATE_DEV;
	*local_fd = fd;
	if (got_features)
		*got_features = got;
	return 0;
}

/*
 * The seccomp guard refused userfaultfd(): the target's filters would kill it for the
 * call (suspended: were mevitop killed mid-call; not suspended: they refuse it).  The
 * /dev/userfaultfd handoff is the other way in, if its calls are allowed; else the reason
 * names both refusals.
 */
static int refused_by_filters(struct inj *in, uint64_t want, int *local_fd,
			      uint64_t *got_features)
{
	const char *sw = inj_seccomp_suspended(in) ? SCG_SUSPENDED_WHY : "";
	char first[512];
	int err;

	snprintf(first, sizeof(first), "%s", inj_guard_why(in));
	if (!caps.dev) {
		set_why("failed to create userfaultfd in process %d: %s%s; and %s", inj_pid(in),
			first, sw, uffd_dev_off_why());
		return -EPERM;
	}
	err = inject_dev(in, want, local_fd, got_features);
	if (err == -EPERM && !strcmp(inj_guard_why(in), first))
		set_why("failed to create userfaultfd in process %d: %s%s; the /dev/userfaultfd "
			"handoff needs that call too", inj_pid(in), first, sw);
	else if (err == -EPERM && inj_guard_why(in)[0])
		set_why("failed to create userfaultfd in process %d: %s%s; and for the "
			"/dev/userfaultfd handoff, %s", inj_pid(in), first, sw, inj_guard_why(in));
	return err;
}

int uffd_inject(struct inj *in, uint64_t want_features, int *local_fd, uint64_t *got_features)
{
	long args[6] = { O_CLOEXEC | O_NONBLOCK, 0, 0, 0, 0, 0 };
	uint64_t supported = 0, got = 0;
	long rfd = -1, ret;
	int fd = -1, err, err2;
	enum uffd_api_path path = api_path_switch;

	set_why("%s", "");
	if (!in || !local_fd)
		return -EINVAL;
	if (!caps_set)
		uffd_set_caps_probed();
	supported = caps.features;
	if (!caps.syscall && !caps.dev) {
		set_why("failed to create userfaultfd in process %d: %s", inj_pid(in),
			uffd_no_way_why());
		return -EOPNOTSUPP;
	}
	want_features &= supported;
	if (!caps.syscall)
		return inject_dev(in, want_features, local_fd, got_features);

	/* Never UFFD_USER_MODE_ONLY: kernel-mode faults (read() into a registered buffer)
	 * would then fail with EFAULT in the target instead of being served. */
	if (path != UFFD_API_REMOTE) {
		/* The target's copy is closed inside the injected call, even if we die. */
		err = inj_syscall_fd(in, __NR_userfaultfd, args, &rfd, &fd);
		if (!err && rfd < 0)
			err = (int)rfd;
		if (!err) {
			err = api_local(fd, want_features, &got);
			if (!err) {
				api_path_last = UFFD_API_LOCAL;
				create_last = UFFD_CREATE_SYSCALL;
				*local_fd = fd;
				if (got_features)
					*got_features = got;
				return 0;
			}
			close(fd);
			fd = -1;
			set_why("failed to enable userfaultfd API on the taken fd: %s", strerror(-err));
			if (path == UFFD_API_LOCAL)
				return err;
		} else {
			goto explain;
		}
	}
	/* The remote UFFDIO_API needs the target's copy open across several calls. */
	err = inj_syscall(in, __NR_userfaultfd, args, &rfd);
	if (!err && rfd < 0)
		err = (int)rfd;
explain:
	if (err) {
		/* EPERM: the target lacks CAP_SYS_PTRACE (or a seccomp filter said no) */
		if (err == -EPERM && inj_guard_why(in)[0])
			return refused_by_filters(in, want_features, local_fd, got_features);
		if (err == -EPERM && caps.dev)
			return inject_dev(in, want_features, local_fd, got_features);
		if (err == -EPERM)
			set_why("failed to create userfaultfd in process %d: %s (userfaultfd() needs "
				"CAP_SYS_PTRACE in the target%s, and %s)", inj_pid(in),
				strerror(-err), inj_seccomp_mode(in) ? ", or its seccomp filter" : "",
				uffd_dev_off_why());
		else
			set_why("failed to create userfaultfd in process %d: %s", inj_pid(in),
				strerror(-err));
		return err;
	}
	err = inj_getfd(in, (int)rfd, &fd);
	if (err) {
		set_why("failed to take userfaultfd %ld from process %d: %s", rfd, inj_pid(in),
			strerror(-err));
		goto close_remote;
	}
	err = api_remote(in, (int)rfd, want_features, &got);
	if (!err) {
		api_path_last = UFFD_API_REMOTE;
		create_last = UFFD_CREATE_SYSCALL;
	}
close_remote:
	/* The target must not keep a copy: if it did and we died, it would block forever. */
	{
		long a2[6] = { rfd, 0, 0, 0, 0, 0 };

		err2 = inj_syscall(in, __NR_close, a2, &ret);
		if (!err2 && ret < 0)
			err2 = (int)ret;
	}
	if (!err && err2) {
		err = err2;
		set_why("failed to close userfaultfd %ld in process %d: %s", rfd, inj_pid(in),
			strerror(-err));
	}
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	*local_fd = fd;
	if (got_features)
		*got_features = got;
	return 0;
}

/* ---- registration ---- */

int uffd_register(int fd, uint64_t start, uint64_t len, uint64_t mode, uint64_t *ioctls)
{
	struct uffdio_register reg = { .range = { .start = start, .len = len }, .mode = mode };

	if (ioctl(fd, UFFDIO_REGISTER, &reg) < 0) {
		int err = -errno;

		set_why("failed to register [%#llx, %#llx) with userfaultfd: %s",
			(unsigned long long)start, (unsigned long long)(start + len), strerror(-err));
		return err;
	}
	if (ioctls)
		*ioctls = reg.ioctls;
	return 0;
}

int uffd_unregister(int fd, uint64_t start, uint64_t len)
{
	struct uffdio_range r = { .start = start, .len = len };

	if (ioctl(fd, UFFDIO_UNREGISTER, &r) < 0) {
		int err = -errno;

		set_why("failed to unregister [%#llx, %#llx): %s", (unsigned long long)start,
			(unsigned long long)(start + len), strerror(-err));
		return err;
	}
	return 0;
}

int uffd_alive(int fd)
{
	/*
	 * A zero-page request for the last user page: the kernel checks the mm before looking
	 * for the VMA, so ESRCH means the mm is gone; anything else (ENOENT: nothing
	 * registered there) means it is alive.  EAGAIN: an event is pending, also alive.
	 */
	struct uffdio_zeropage z = {
		.range = { .start = UFFD_USER_END - PAGE_SIZE_4K, .len = PAGE_SIZE_4K },
		.mode = UFFDIO_ZEROPAGE_MODE_DONTWAKE,
	};

	if (ioctl(fd, UFFDIO_ZEROPAGE, &z) == 0)
		return 1;
	if (errno == ESRCH)
		return 0;
	if (errno == EBADF)
		return -EBADF;
	return 1;
}

/* ---- fault server ---- */

struct uffd_server {
	struct uffd_server_ops ops;
	void *ctx;
	unsigned flags;
	pthread_mutex_t lock;
	int *fds;		/* served fds; changed under lock */
	int nfds, cap;
	int *pend;		/* fds to remove at the next round (busy serving thread) */
	int npend, pcap;
	bool in_round;		/* a thread is inside uffd_server_poll() */
	int evfd;		/* wakes poll() for stop/add/remove */
	int stop;		/* atomic */
	struct uffd_server_stats stats;
	void *zero;		/* a zero page for UFFDIO_COPY */
};

int uffd_server_new(const struct uffd_server_ops *ops, void *ctx, unsigned flags,
		    struct uffd_server **out)
{
	struct uffd_server *s;
	int err;

	if (!out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (ops)
		s->ops = *ops;
	s->ctx = ctx;
	s->flags = flags;
	pthread_mutex_init(&s->lock, NULL);
	s->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->evfd < 0) {
		err = -errno;
		set_why("failed to create eventfd: %s", strerror(-err));
		goto fail;
	}
	s->zero = mmap(NULL, PAGE_SIZE_4K, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->zero == MAP_FAILED) {
		err = -errno;
		s->zero = NULL;
		set_why("failed to map a zero page: %s", strerror(-err));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	uffd_server_free(s);
	return err;
}

int uffd_server_add(struct uffd_server *s, int fd)
{
	uint64_t one = 1;
	int err;

	if (!s || fd < 0)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	err = array_reserve(s->fds, s->nfds, s->cap, 8);
	if (!err)
		s->fds[s->nfds++] = fd;
	pthread_mutex_unlock(&s->lock);
	if (!err && write(s->evfd, &one, sizeof(one)) < 0)
		err = 0;	/* counter full: poll() wakes anyway */
	return err;
}

static void drop_fd_locked(struct uffd_server *s, int fd)
{
	for (int i = 0; i < s->nfds; i++) {
		if (s->fds[i] == fd) {
			s->fds[i] = s->fds[--s->nfds];
			close(fd);
			return;
		}
	}
}

void uffd_server_stop(struct uffd_server *s)
{
	uint64_t one = 1;
	ssize_t n;

	if (!s)
		return;
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	n = write(s->evfd, &one, sizeof(one));
	(void)n;
}

int uffd_server_nr_fds(struct uffd_server *s)
{
	int n;

	pthread_mutex_lock(&s->lock);
	n = s->nfds;
	pthread_mutex_unlock(&s->lock);
	return n;
}

void uffd_server_get_stats(struct uffd_server *s, struct uffd_server_stats *st)
{
	st->reads = __atomic_load_n(&s->stats.reads, __ATOMIC_RELAXED);
	st->faults = __atomic_load_n(&s->stats.faults, __ATOMIC_RELAXED);
	st->resolved = __atomic_load_n(&s->stats.resolved, __ATOMIC_RELAXED);
	st->raced = __atomic_load_n(&s->stats.raced, __ATOMIC_RELAXED);
	st->retried = __atomic_load_n(&s->stats.retried, __ATOMIC_RELAXED);
	st->events = __atomic_load_n(&s->stats.events, __ATOMIC_RELAXED);
}

void uffd_server_free(struct uffd_server *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nfds; i++)
		close(s->fds[i]);
	if (s->evfd >= 0)
		close(s->evfd);
	if (s->zero)
		munmap(s->zero, PAGE_SIZE_4K);
	pthread_mutex_destroy(&s->lock);
	free(s->fds);
	free(s->pend);
	free(s);
}

static void wake_page(int fd, uint64_t addr)
{
	struct uffdio_range r = { .start = addr, .len = PAGE_SIZE_4K };

	ioctl(fd, UFFDIO_WAKE, &r);
}

/* Resolve one MISSING fault.  0 resolved, 1 raced/retry (woken), -ESRCH gone, -errno. */
static int resolve(struct uffd_server *s, int fd, uint64_t addr, uint32_t flags)
{
	int err;

	if (flags & UFFD_PAGEFAULT_FLAG_WP) {
		/* synchronous write-protect fault: just lift the protection */
		struct uffdio_writeprotect w = { .range = { .start = addr, .len = PAGE_SIZE_4K } };

		err = ioctl(fd, UFFDIO_WRITEPROTECT, &w) < 0 ? -errno : 0;
	} else if ((flags & UFFD_PAGEFAULT_FLAG_WRITE) && (s->flags & UFFD_SRV_COPY)) {
		struct uffdio_copy c = {
			.dst = addr, .src = (uint64_t)(uintptr_t)s->zero, .len = PAGE_SIZE_4K,
		};

		err = ioctl(fd, UFFDIO_COPY, &c) < 0 ? -errno : 0;
	} else {
		struct uffdio_zeropage z = { .range = { .start = addr, .len = PAGE_SIZE_4K } };

		err = ioctl(fd, UFFDIO_ZEROPAGE, &z) < 0 ? -errno : 0;
	}
	switch (err) {
	case 0:
		return 0;
	case -EEXIST:
		/* another thread's fault on this page was resolved first */
		wake_page(fd, addr);
		STAT_INC(s, raced);
		return 1;
	case -EAGAIN:	/* the layout is changing (event pending): fault again later */
	case -ENOENT:	/* no registered VMA there any more */
		wake_page(fd, addr);
		STAT_INC(s, retried);
		return 1;
	case -ENOSPC:	/* older kernels said this for "mm gone" */
	case -ESRCH:
		return -ESRCH;
	default:
		wake_page(fd, addr);
		return err;
	}
}

static int deliver_event(struct uffd_server *s, int fd, struct uffd_event *ev)
{
	int keep = 1;

	if (s->ops.event)
		keep = s->ops.event(s->ctx, fd, ev);
	return keep;
}

/* Mark @fd as gone: report it and drop it (the serving thread owns the fds). */
static void fd_gone(struct uffd_server *s, int fd, uint64_t ts)
{
	struct uffd_event ev = { .kind = UFFD_EV_GONE, .ts_ns = ts };

	deliver_event(s, fd, &ev);
	pthread_mutex_lock(&s->lock);
	drop_fd_locked(s, fd);
	pthread_mutex_unlock(&s->lock);
}

/* Read and handle everything pending on @fd.  Returns messages handled, -ESRCH, -errno. */
static int serve_fd(struct uffd_server *s, int fd)
{
	struct uffd_msg msg[MSG_BATCH];
	int handled = 0;

	for (;;) {
		ssize_t n = read(fd, msg, sizeof(msg));
		uint64_t ts;
		int cnt;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return handled;
			return -errno;
		}
		if (n == 0)
			return handled;
		ts = clock_mono_ns();
		cnt = (int)(n / (ssize_t)sizeof(msg[0]));
		STAT_INC(s, reads);
		for (int i = 0; i < cnt; i++) {
			struct uffd_msg *m = &msg[i];
			struct uffd_event ev = { .ts_ns = ts };

			handled++;
			switch (m->event) {
			case UFFD_EVENT_PAGEFAULT: {
				struct uffd_fault f = {
					.addr = m->arg.pagefault.address & ~(PAGE_SIZE_4K - 1),
					.ts_ns = ts,
					.tid = m->arg.pagefault.feat.ptid,
					.flags = (uint32_t)m->arg.pagefault.flags,
				};
				int r;

				STAT_INC(s, faults);
				r = resolve(s, fd, f.addr, f.flags);
				if (r == -ESRCH)
					return -ESRCH;
				if (r == 0) {
					STAT_INC(s, resolved);
					if (s->ops.fault)
						s->ops.fault(s->ctx, fd, &f);
				}
				break;
			}
			case UFFD_EVENT_FORK:
				STAT_INC(s, events);
				ev.kind = UFFD_EV_FORK;
				ev.fork.fd = (int)m->arg.fork.ufd;
				if (deliver_event(s, fd, &ev) == 1 && uffd_server_add(s, ev.fork.fd))
					close(ev.fork.fd);
				break;
			case UFFD_EVENT_REMAP:
				STAT_INC(s, events);
				ev.kind = UFFD_EV_REMAP;
				ev.remap.from = m->arg.remap.from;
				ev.remap.to = m->arg.remap.to;
				ev.remap.len = m->arg.remap.len;
				deliver_event(s, fd, &ev);
				break;
			case UFFD_EVENT_REMOVE:
			case UFFD_EVENT_UNMAP:
				STAT_INC(s, events);
				ev.kind = m->event == UFFD_EVENT_REMOVE ? UFFD_EV_REMOVE : UFFD_EV_UNMAP;
				ev.range.start = m->arg.remove.start;
				ev.range.end = m->arg.remove.end;
				deliver_event(s, fd, &ev);
				break;
			default:
				break;
			}
		}
		if (n < (ssize_t)sizeof(msg))
			return handled;
	}
}

static void apply_pending_locked(struct uffd_server *s)
{
	for (int i = 0; i < s->npend; i++)
		drop_fd_locked(s, s->pend[i]);
	s->npend = 0;
}

int uffd_server_poll(struct uffd_server *s, int timeout_ms)
{
	struct pollfd stackp[16], *p = stackp;
	uint64_t deadline = 0, cnt;
	int n, total = 0, err = 0;
	ssize_t rn;

	if (!s)
		return -EINVAL;
	if (__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
		return -ECANCELED;
	pthread_mutex_lock(&s->lock);
	apply_pending_locked(s);
	n = s->nfds;
	if (!n) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	if (n + 1 > (int)(sizeof(stackp) / sizeof(stackp[0]))) {
		p = calloc((size_t)n + 1, sizeof(*p));
		if (!p) {
			pthread_mutex_unlock(&s->lock);
			return -ENOMEM;
		}
	}
	for (int i = 0; i < n; i++)
		p[i] = (struct pollfd){ .fd = s->fds[i], .events = POLLIN };
	p[n] = (struct pollfd){ .fd = s->evfd, .events = POLLIN };
	s->in_round = true;
	pthread_mutex_unlock(&s->lock);

	if (s->flags & UFFD_SRV_BUSY_POLL) {
		if (timeout_ms >= 0)
			deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
		for (;;) {
			for (int i = 0; i < n; i++) {
				int r;

				if (p[i].fd < 0)
					continue;
				r = serve_fd(s, p[i].fd);
				if (r == -ESRCH) {
					fd_gone(s, p[i].fd, clock_mono_ns());
					p[i].fd = -1;
				} else if (r > 0) {
					total += r;
				}
			}
			if (total || __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
				break;
			rn = read(s->evfd, &cnt, sizeof(cnt));
			if (rn > 0)
				break;	/* add/remove: let the caller start a new round */
			if (timeout_ms >= 0 && clock_mono_ns() >= deadline)
				break;
			for (int k = 0; k < 64; k++)
				arch_cpu_relax();
		}
		goto out;
	}

	for (;;) {
		int r = poll(p, (nfds_t)n + 1, timeout_ms);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto out;
		}
		if (r == 0) {
			/* idle: make sure the processes are still there (uffds never HUP) */
			for (int i = 0; i < n; i++)
				if (uffd_alive(p[i].fd) == 0)
					fd_gone(s, p[i].fd, clock_mono_ns());
			goto out;
		}
		break;
	}
	if (p[n].revents & POLLIN)
		rn = read(s->evfd, &cnt, sizeof(cnt));
	for (int i = 0; i < n; i++) {
		int r;

		if (!(p[i].revents & (POLLIN | POLLERR)))
			continue;
		r = serve_fd(s, p[i].fd);
		if (r == -ESRCH)
			fd_gone(s, p[i].fd, clock_mono_ns());
		else if (r > 0)
			total += r;
	}
out:
	pthread_mutex_lock(&s->lock);
	s->in_round = false;
	apply_pending_locked(s);
	pthread_mutex_unlock(&s->lock);
	if (p != stackp)
		free(p);
	if (err)
		return err;
	if (__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) && !total)
		return -ECANCELED;
	return total;
}

int uffd_server_run(struct uffd_server *s)
{
	for (;;) {
		int r = uffd_server_poll(s, 250);

		if (r == -ECANCELED || r == -ENOENT)
			return 0;
		if (r < 0)
			return r;
	}
}
