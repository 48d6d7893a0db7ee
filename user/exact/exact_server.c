// SPDX-License-Identifier: GPL-2.0
/*
 * exact_server.c - exact mode's fault servers: their threads (which never take the engine
 * lock), the record ring they fill for the engine side, and the hand-over of a new
 * userfaultfd to them.  exact.c starts them; exact_int.h says who owns what.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include "lib/clock.h"
#include "exact/exact_int.h"
#include "kernel/procfs.h"
#include "lib/log.h"
#include "exact/stage.h"

/* ---- the record ring: the server produces, the engine side consumes ---- */

static bool q_push_one(struct exact *x, const struct xrec *r, bool event)
{
	uint32_t head = atomic_load_explicit(&x->ring.head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&x->ring.tail, memory_order_acquire);
	uint32_t room = XQ_SIZE - (event ? 0 : XQ_EVENT_RESERVE);

	if (head - tail >= room) {
		if (!event)
			atomic_fetch_add_explicit(&x->ring.dropped, 1, memory_order_relaxed);
		atomic_store_explicit(&x->ring.overflow, true, memory_order_release);
		return false;
	}
	x->ring.recs[head & (XQ_SIZE - 1)] = *r;
	atomic_store_explicit(&x->ring.head, head + 1, memory_order_release);
	return true;
}

/* Several servers push into one ring: a spin lock held for a copy. */
static bool q_push(struct exact *x, const struct xrec *r, bool event)
{
	bool ok;

	if (x->srv.n == 1)
		return q_push_one(x, r, event);
	pthread_spin_lock(&x->ring.lock);
	ok = q_push_one(x, r, event);
	pthread_spin_unlock(&x->ring.lock);
	return ok;
}

static uint32_t fd_to_id(struct exact *x, int fd)
{
	if (fd < 0 || fd >= FD_TABLE)
		return 0;
	return atomic_load_explicit(&x->srv.fd_id[fd], memory_order_acquire);
}

/* ---- the fault server (its thread never takes the engine lock) ---- */

static __thread int my_server = -1;	/* the index of the server whose thread this is */

/*
 * Steering: with a server pinned to each CPU (see SRV_PERCPU_MAX), every fault wakes every
 * server waiting on the userfaultfd, and the faulting thread pays for waking the ones on
 * other CPUs - an IPI to a halted vCPU, ~5 us here, half of what a first touch costs
 * (bench/run_bench.py --only exact: 7.35x with two servers, 3.5x with one on the faulting
 * CPU).  So only the servers of the CPUs faults come from wait on the userfaultfds; the
 * others park.  Where a fault came from is read after it is served, every STEER_EVERY
 * faults, as the CPU the faulting thread last ran on (/proc/TID/stat: it has just been
 * woken there).  A fault from a CPU whose server is parked is still served, by a server
 * elsewhere (slowly), and wakes the parked one at the next look; every STEER_WINDOW looks,
 * the servers of CPUs no look found park.  A wrong look (a thread id of another pid
 * namespace, a thread that moved) costs speed only: a server of a CPU just seen always
 * waits.
 */
#define STEER_EVERY	64
#define STEER_WINDOW	4

static void steer_wake(struct exact *x, int j)
{
	uint64_t bit = 1ull << j;

	if (atomic_load(&x->srv.active) & bit)
		return;
	pthread_mutex_lock(&x->srv.park_lock);
	atomic_fetch_or(&x->srv.active, bit);
	pthread_cond_broadcast(&x->srv.park_cond);
	pthread_mutex_unlock(&x->srv.park_lock);
	atomic_fetch_add_explicit(&x->srv.steered, 1, memory_order_relaxed);
}

static void steer(struct exact *x, pid_t tid)
{
	uint64_t bit, seen, old;
	int cpu, j;

	if (x->srv.n < 2 || atomic_fetch_add_explicit(&x->srv.steer_faults, 1,
						      memory_order_relaxed) % STEER_EVERY)
		return;
	if (procfs_read_cpu(tid, &cpu))
		return;
	for (j = 0; j < x->srv.n && x->srv.cpu[j] != cpu; j++)
		;
	if (j == x->srv.n)
		return;		/* a CPU without a server */
	bit = 1ull << j;
	steer_wake(x, j);
	atomic_fetch_or(&x->srv.seen, bit);
	if (atomic_fetch_add(&x->srv.looks, 1) % STEER_WINDOW != STEER_WINDOW - 1)
		return;
	/* The window's end: park the servers of CPUs it did not see (this one it did). */
	seen = atomic_exchange(&x->srv.seen, 0) | bit;
	old = atomic_load(&x->srv.active);
	while ((old & ~seen) && !atomic_compare_exchange_weak(&x->srv.active, &old, old & seen))
		;
	if (old & ~seen)
		atomic_fetch_add_explicit(&x->srv.parked, (uint64_t)__builtin_popcountll(old & ~seen),
					  memory_order_relaxed);
}

/* A parked server: wait until steered back (or stopping), reaping what is gone meanwhile
 * (a zero-timeout round every 250 ms, which also serves what is pending). */
static void park_wait(struct exact *x, int me, struct uffd_server *srv)
{
	uint64_t bit = 1ull << me;

	pthread_mutex_lock(&x->srv.park_lock);
	while (!(atomic_load(&x->srv.active) & bit)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&x->srv.park_cond, &x->srv.park_lock, &ts) ==
		    ETIMEDOUT) {
			pthread_mutex_unlock(&x->srv.park_lock);
			if (uffd_server_poll(srv, 0) == -ECANCELED)
				return;
			pthread_mutex_lock(&x->srv.park_lock);
		}
	}
	pthread_mutex_unlock(&x->srv.park_lock);
}

int server_waiting(struct exact *x)
{
	uint64_t all = x->srv.n < 64 ? (1ull << x->srv.n) - 1 : ~0ull;

	return __builtin_popcountll(atomic_load(&x->srv.active) & all);
}

void server_unpark_all(struct exact *x)
{
	pthread_mutex_lock(&x->srv.park_lock);
	atomic_store(&x->srv.active, ~0ull);
	pthread_cond_broadcast(&x->srv.park_cond);
	pthread_mutex_unlock(&x->srv.park_lock);
}

static void on_fault(void *ctx, int fd, const struct uffd_fault *f)
{
	struct exact *x = ctx;
	uint64_t now = clock_mono_ns();
	struct xrec r = {
		.ts_ns = f->ts_ns,
		.a = f->addr,
		.id = fd_to_id(x, fd),
		.tid = f->tid,
		.lat_ns = now - f->ts_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)(now - f->ts_ns),
		.kind = XR_TOUCH,
		.flags = (f->flags & UFFD_PAGEFAULT_FLAG_WRITE) ? XT_WRITE : 0,
	};

	q_push(x, &r, false);
	stage_enter("fault", NULL);
	steer(x, f->tid);
}

static int make_copies(struct exact *x, int fd, uint32_t id, int skip, int copies[MAX_SRV]);
static int give_copies(struct exact *x, const int copies[MAX_SRV]);
static int on_event(void *ctx, int fd, const struct uffd_event *ev)
{
	struct exact *x = ctx;
	struct xrec r = { .ts_ns = ev->ts_ns, .id = fd_to_id(x, fd) };
	int mine, i, copies[MAX_SRV];

	switch (ev->kind) {
	case UFFD_EV_FORK:
		/* The child's userfaultfd arrived in our fd table.  Keep a copy for registering
		 * (its number stays ours whatever the server does with the original). */
		if (!x->follow_children || ev->fork.fd >= FD_TABLE)
			goto drop_child;
		mine = fcntl(ev->fork.fd, F_DUPFD_CLOEXEC, 3);
		if (mine < 0)
			goto drop_child;
		r.kind = XR_FORK;
		r.tid = atomic_fetch_add(&x->srv.next_id, 1);
		r.fd = mine;
		/* The other servers' copies are made before the engine side owns `mine`. */
		make_copies(x, ev->fork.fd, r.tid, my_server, copies);
		atomic_store_explicit(&x->srv.fd_id[ev->fork.fd], r.tid, memory_order_release);
		if (!q_push(x, &r, true)) {
			for (i = 0; i < x->srv.n; i++)
				if (copies[i] >= 0)
					close(copies[i]);
			close(mine);
			goto drop_child;
		}
		give_copies(x, copies);
		return 1;	/* this server serves it from now on, and the others too */
drop_child:
		/* Closing the only copy unregisters the child's ranges: it runs on untracked. */
		close(ev->fork.fd);
		return 0;
	case UFFD_EV_REMAP:
		r.kind = XR_REMAP;
		r.a = ev->remap.from;
		r.b = ev->remap.to;
		r.c = ev->remap.len;
		break;
	case UFFD_EV_REMOVE:
	case UFFD_EV_UNMAP:
		r.kind = ev->kind == UFFD_EV_REMOVE ? XR_REMOVE : XR_UNMAP;
		r.a = ev->range.start;
		r.b = ev->range.end;
		break;
	case UFFD_EV_GONE:
		r.kind = XR_GONE;
		break;
	default:
		return 1;
	}
	q_push(x, &r, true);
	return 1;
}

/*
 * Where the time goes (bench/run_bench.py bench_exact; FACTS.md): a first touch served by
 * mevitop costs two context switches and three system calls when the server runs on the
 * faulting thread's CPU (~8 us here), but ~40 us when a wake-up crosses to a halted vCPU,
 * and the scheduler decides which happens: one server measured 4.5x or 20x a run, at
 * random.  Steering it did not work (the server following the faulting thread's CPU,
 * SCHED_IDLE so the woken thread stays, mevitop's other threads kept away: all ~20x), nor
 * did spinning (10x: the faulting CPU halts) or SCHED_FIFO (9-17x).  What does: a server
 * pinned to each CPU, so one always sits where the fault is (8-9x, every run); the others
 * were woken too, for nothing (~6 us, paid by the faulting thread), until steering (above)
 * parked them (3.4x for a thread that stays on its CPU).  Beyond SRV_PERCPU_MAX CPUs the
 * useless wake-ups would cost more than they save: one server then.
 */
#define SRV_PERCPU_MAX	4

void *server_main(void *arg)
{
	struct srv_arg *sa = arg;
	struct exact *x = sa->x;
	struct uffd_server *srv = x->srv.servers[sa->i];
	char name[16];

	my_server = sa->i;
	snprintf(name, sizeof(name), "mevitop-uffd%d", sa->i);
	pthread_setname_np(pthread_self(), name);
	if (x->srv.n > 1) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(x->srv.cpu[sa->i], &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	for (;;) {
		int r;

		if (x->srv.n > 1 && !(atomic_load(&x->srv.active) & (1ull << sa->i)))
			park_wait(x, sa->i, srv);
		r = uffd_server_poll(srv, 250);

		if (r == -ECANCELED)
			break;
		if (r == -ENOENT) {
			/* No fd yet (or every process is gone): wait for the next one. */
			uint64_t seen = atomic_load(&x->srv.adds);

			pthread_mutex_lock(&x->ctl.lock);
			while (!x->ctl.stopping && atomic_load(&x->srv.adds) == seen)
				pthread_cond_wait(&x->ctl.cond, &x->ctl.lock);
			pthread_mutex_unlock(&x->ctl.lock);
			if (x->ctl.stopping)
				break;
			continue;
		}
		if (r < 0) {
			log_warn("userfaultfd server: %s", strerror(-r));
			usleep(10000);	/* an error: do not spin on it */
		}
	}
	return NULL;
}

/* A copy of @fd known by @id for each server but @skip (-1: all); -1 where none could be
 * made.  Returns how many were made. */
static int make_copies(struct exact *x, int fd, uint32_t id, int skip, int copies[MAX_SRV])
{
	int i, c, n = 0;

	for (i = 0; i < x->srv.n; i++) {
		copies[i] = -1;
		if (i == skip)
			continue;
		c = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (c >= FD_TABLE) {
			close(c);
			c = -1;
		}
		if (c < 0)
			continue;
		atomic_store_explicit(&x->srv.fd_id[c], id, memory_order_release);
		copies[i] = c;
		n++;
	}
	return n;
}

/* Hands each server its copy (the server owns it from then on); returns how many took it. */
static int give_copies(struct exact *x, const int copies[MAX_SRV])
{
	int i, n = 0;

	for (i = 0; i < x->srv.n; i++) {
		if (copies[i] < 0)
			continue;
		if (uffd_server_add(x->srv.servers[i], copies[i]))
			close(copies[i]);
		else
			n++;
	}
	pthread_mutex_lock(&x->ctl.lock);
	atomic_fetch_add(&x->srv.adds, 1);
	pthread_cond_broadcast(&x->ctl.cond);
	pthread_mutex_unlock(&x->ctl.lock);
	return n;
}

int server_make(struct exact *x)
{
	static const struct uffd_server_ops ops = { .fault = on_fault, .event = on_event };
	const char *env = getenv("MEVITOP_EXACT_SERVERS");
	unsigned want = env ? (unsigned)strtoul(env, NULL, 10) : 0;
	cpu_set_t set;
	int cpu, n = 0, i;

	x->srv.n = 1;
	if (x->variant == EXACT_ORDERED && sched_getaffinity(0, sizeof(set), &set) == 0) {
		for (cpu = 0; cpu < CPU_SETSIZE && n < MAX_SRV; cpu++)
			if (CPU_ISSET(cpu, &set))
				x->srv.cpu[n++] = cpu;
		if (env ? want > 1 : (n > 1 && n <= SRV_PERCPU_MAX))
			x->srv.n = env && want < (unsigned)n ? (int)want : n;
	}
	atomic_store(&x->srv.active, ~0ull);	/* all wait at first; steering parks some */
	pthread_mutex_init(&x->srv.park_lock, NULL);
	pthread_cond_init(&x->srv.park_cond, NULL);
	pthread_spin_init(&x->ring.lock, PTHREAD_PROCESS_PRIVATE);
	for (i = 0; i < x->srv.n; i++) {
		if (uffd_server_new(&ops, x, UFFD_SRV_COPY, &x->srv.servers[i]))
			return -1;
		x->srv.args[i] = (struct srv_arg){ x, i };
	}
	return 0;
}

/*
 * Hands a fresh userfaultfd of @pid to the servers (a copy each) and to the engine side,
 * which owns @fd from now on, whatever happens.  Call before the process resumes: in ordered
 * mode its faults wait for a server.
 */
int server_hand_over(struct exact *x, pid_t pid, int fd)
{
	struct adopt *a = calloc(1, sizeof(*a));
	int copies[MAX_SRV], i, spare = -1;
	uint32_t id = atomic_fetch_add(&x->srv.next_id, 1);

	/* spare: a copy of our own, if no server can take it (fd is the engine's then). */
	if (!a || make_copies(x, fd, id, -1, copies) < x->srv.n ||
	    (spare = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		for (i = 0; a && i < x->srv.n; i++)
			if (copies[i] >= 0)
				close(copies[i]);
		close(fd);	/* our only copy: every registration goes with it */
		free(a);
		return a ? -EMFILE : -ENOMEM;
	}
	a->pid = pid;
	a->id = id;
	a->fd = fd;
	/* Posted before a server can read a message of this fd, so the engine side knows the id
	 * of every record it drains (exact_track.c: drain). */
	pthread_mutex_lock(&x->ctl.lock);
	a->next = x->ctl.adopts;
	x->ctl.adopts = a;
	pthread_mutex_unlock(&x->ctl.lock);
	if (!give_copies(x, copies)) {
		/* Out of memory: nobody would serve this process's faults.  The engine side may
		 * already hold fd, so unregister everything instead. */
		char buf[32] = "65536";
		uint64_t low;

		procfs_read_file("/proc/sys/vm/mmap_min_addr", buf, sizeof(buf));
		low = page_round_up_4k(strtoull(buf, NULL, 10));
		uffd_unregister(spare, low, UFFD_USER_END - low);
		close(spare);
		return -ENOMEM;
	}
	close(spare);
	return 0;
}
