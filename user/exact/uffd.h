/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uffd.h - userfaultfd helpers for mevitop's exact mode.
 *
 *  - uffd_probe(): what the kernel offers (or why userfaultfd is unavailable);
 *  - uffd_inject(): create a userfaultfd *inside* a seized target, take it over with
 *    pidfd_getfd() and close the target's copy, so only mevitop holds it: if mevitop
 *    dies the fd closes, every registration goes away and the target runs on;
 *  - a fault server: a building block the engine runs in a thread.  It reads messages
 *    in batches, resolves MISSING faults (UFFDIO_ZEROPAGE for reads, UFFDIO_COPY of a
 *    zero page or UFFDIO_ZEROPAGE for writes), reports each first touch and passes the
 *    non-cooperative events (FORK, REMAP, REMOVE, UNMAP) on, in the order read.
 *
 * Serve before you let the target run: with the EVENT_* features the target blocks in
 * fork(), mremap(), munmap() and madvise(DONTNEED) of a registered range until the event
 * is read, and a thread that touches a registered page waits for us (a stopped or
 * debugged monitor stalls it; a dead monitor does not: its fd closes and everything
 * is unregistered).
 *
 * Functions return 0 (or a count) or -errno.  uffd_why() returns a sentence about the
 * last failure in the calling thread ("failed to create userfaultfd in process 12: ...").
 */
#ifndef MEVITOP_UFFD_H
#define MEVITOP_UFFD_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/userfaultfd.h>
#include "exact/arch.h"

struct inj;
struct uffd_caps;

/* Feature bits newer than Debian 12's <linux/userfaultfd.h> (Linux 6.1). */
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED	(1 << 13)
#endif
#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON		(1 << 14)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC		(1 << 15)
#endif
#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE		(1 << 16)
#endif

/* What exact mode asks for by default (masked with what the kernel has). */
#define UFFD_EXACT_FEATURES	(UFFD_FEATURE_EVENT_FORK | UFFD_FEATURE_EVENT_REMAP | \
				 UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_UNMAP | \
				 UFFD_FEATURE_THREAD_ID)

/* Last failure explanation of the calling thread ("" if none). */
const char *uffd_why(void);

/*
 * Create a local userfaultfd and report every feature the kernel offers in *features.
 * -ENOSYS: no userfaultfd in this kernel; -EPERM: not permitted (vm.unprivileged_userfaultfd
 * is 0 and we lack CAP_SYS_PTRACE; /dev/userfaultfd is tried as well).
 */
int uffd_probe(uint64_t *features);

/*
 * Give the seized target @in a userfaultfd that only we hold: remote
 * userfaultfd(O_CLOEXEC|O_NONBLOCK), pidfd_getfd() into *local_fd, remote close() (or the
 * /dev/userfaultfd handoff, see uffd_set_caps()).
 * UFFDIO_API (@want_features & what the kernel offers) is issued from our process on the
 * stolen fd; if that is refused, from the target with a scratch page mapped and unmapped
 * again.  Nothing is left in the target.  *got_features: the features now enabled.
 * On the local path the target's copy is closed inside the injected call itself
 * (inj_syscall_fd), so a monitor killed at any moment leaves no fd behind.  The remote
 * path (forced, or when the local UFFDIO_API is refused) keeps the copy open across
 * several calls: a monitor killed then leaves one inert fd with no registrations.
 */
int uffd_inject(struct inj *in, uint64_t want_features, int *local_fd, uint64_t *got_features);

/*
 * How uffd_inject() creates the target's userfaultfd (kernel/uffd_caps.h, probed once by
 * kfeatures.c with the --disable switches applied): the userfaultfd() syscall if allowed,
 * falling back to the /dev/userfaultfd handoff (exact/uffd_dev.h) where the target lacks
 * CAP_SYS_PTRACE (EPERM), or the handoff alone.  Unset, uffd_inject() probes itself.
 */
void uffd_set_caps(const struct uffd_caps *c);
enum uffd_create { UFFD_CREATE_NONE, UFFD_CREATE_SYSCALL, UFFD_CREATE_DEV };
/* The way the last successful uffd_inject() in this process took. */
enum uffd_create uffd_last_create(void);

/* Which path issues UFFDIO_API in uffd_inject() (a switch so tests cover both). */
enum uffd_api_path {
	UFFD_API_AUTO,		/* local, remote if the local one is refused */
	UFFD_API_LOCAL,		/* only from our process */
	UFFD_API_REMOTE,	/* only from the target (scratch page) */
};
void uffd_set_api_path(enum uffd_api_path path);
/* The path the last successful uffd_inject() in this process used (LOCAL or REMOTE). */
enum uffd_api_path uffd_last_api_path(void);

/* The end of user space: a range up to it covers every address a process can map. */
#define UFFD_USER_END	ARCH_USER_END

/* UFFDIO_REGISTER [start, start+len) with @mode (UFFDIO_REGISTER_MODE_*); *ioctls if not NULL. */
int uffd_register(int fd, uint64_t start, uint64_t len, uint64_t mode, uint64_t *ioctls);
int uffd_unregister(int fd, uint64_t start, uint64_t len);
/* UFFDIO_WRITEPROTECT on/off (for WP and WP_ASYNC registrations). */
int uffd_writeprotect(int fd, uint64_t start, uint64_t len, bool wp);
/* Is the process behind @fd still there?  1 yes, 0 its mm is gone, -errno. */
int uffd_alive(int fd);

/* ---- the fault server ---- */

struct uffd_fault {
	uint64_t addr;		/* page-aligned faulting address */
	uint64_t ts_ns;		/* CLOCK_MONOTONIC when the message was read */
	uint32_t tid;		/* faulting thread (0 without UFFD_FEATURE_THREAD_ID) */
	uint32_t flags;		/* UFFD_PAGEFAULT_FLAG_WRITE / _WP / _MINOR */
};

enum uffd_event_kind {
	UFFD_EV_FORK = 1,	/* the target forked: fork.fd is the child's uffd (ours) */
	UFFD_EV_REMAP,		/* mremap moved [from, from+len) to [to, to+len); the kernel
				 * then sends UFFD_EV_UNMAP for the (now empty) source range */
	UFFD_EV_REMOVE,		/* madvise(DONTNEED/REMOVE) zapped [start, end) */
	UFFD_EV_UNMAP,		/* munmap (or mremap shrink) of [start, end) */
	UFFD_EV_GONE,		/* the process behind this fd exited; the fd is closed next */
};

struct uffd_event {
	enum uffd_event_kind kind;
	uint64_t ts_ns;
	union {
		struct { int fd; } fork;
		struct { uint64_t from, to, len; } remap;
		struct { uint64_t start, end; } range;
	};
};

struct uffd_server_ops {
	/* One call per first touch that we resolved (races resolved elsewhere are not reported). */
	void (*fault)(void *ctx, int fd, const struct uffd_fault *f);
	/*
	 * Events in the order read.  For UFFD_EV_FORK return 1 to have the server also serve
	 * the child's fd (it then owns it), 0 if the callback kept or closed it.  If no event
	 * callback is set, forked children are served.
	 */
	int (*event)(void *ctx, int fd, const struct uffd_event *ev);
};

/* Resolve write faults with UFFDIO_COPY of a zero page instead of UFFDIO_ZEROPAGE, whose
 * retried write then has to copy-on-write the zero page (no extra trap, ~1 us more). */
#define UFFD_SRV_COPY		(1u << 0)
/* Spin on the fds instead of sleeping in poll() (costs a CPU; see bench/uffd_bench.c). */
#define UFFD_SRV_BUSY_POLL	(1u << 1)

struct uffd_server_stats {
	uint64_t reads;		/* read() calls that returned messages */
	uint64_t faults;	/* page fault messages */
	uint64_t resolved;	/* faults we resolved (= reported) */
	uint64_t raced;		/* already resolved (EEXIST): woken */
	uint64_t retried;	/* EAGAIN/ENOENT: woken to fault again */
	uint64_t events;	/* non-cooperative events */
};

struct uffd_server;

int uffd_server_new(const struct uffd_server_ops *ops, void *ctx, unsigned flags,
		    struct uffd_server **out);
/* Serve @fd too (any thread; the server owns it from now on and closes it). */
int uffd_server_add(struct uffd_server *s, int fd);
/* One round: wait up to @timeout_ms (-1 forever) and handle what is there.  Returns the
 * number of messages handled, 0 on timeout, -ECANCELED once stopped, -ENOENT if no fd. */
int uffd_server_poll(struct uffd_server *s, int timeout_ms);
/* Loop until uffd_server_stop() or until no fd is left; returns 0 or -errno. */
int uffd_server_run(struct uffd_server *s);
/* Make run()/poll() return; async-signal-safe, any thread. */
void uffd_server_stop(struct uffd_server *s);
int uffd_server_nr_fds(struct uffd_server *s);
void uffd_server_get_stats(struct uffd_server *s, struct uffd_server_stats *st);
/* Close every fd and free (NULL is fine).  Call after the serving thread returned. */
void uffd_server_free(struct uffd_server *s);

#endif /* MEVITOP_UFFD_H */
