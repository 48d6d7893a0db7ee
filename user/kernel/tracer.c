// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "mevitop.skel.h"
#include "lib/log.h"
#include "lib/page.h"
#include "syscalls.h"
#include "kernel/procfs.h"
#include "kernel/fault_sampler.h"
#include "kernel/fring.h"
#include "kernel/perf_release.h"
#include "kernel/taskiter.h"
#include "kernel/tracer.h"

struct tracer {
	struct mevitop_bpf *skel;
	struct ring_buffer *rb;		/* only for its epoll fd (tracer_wait) */
	unsigned long *ring_cons;	/* the events ring's consumer page (read-write) */
	const unsigned long *ring_prod;	/* its producer page, then the data mapped twice */
	const char *ring_data;		/* ring_prod's data, a page on */
	size_t ring_size, ring_publish;	/* bytes; publish the position this often */
	tracer_event_fn fn;
	void *ctx;
	int ncpus;
	__u64 *percpu;			/* scratch for per-CPU map values */
	struct chunk_slot *slots, *slots_seen;	/* per-CPU chunk slots: now, last look */
	volatile __u64 *targets;	/* mmap of the target bitmap */
	size_t targets_words, targets_len;
	volatile __u64 *layout;		/* mmap of the layout-changed bitmap (same size) */
	volatile struct rss_val *rss;	/* mmap of the rss slots */
	size_t rss_len;
	bool rss_hooked;		/* the rss_stat hook loads: t->rss is mapped */
	struct bpf_link **links;
	size_t nlinks;
	bool release_in_child;		/* perf events' last close by a child (not disabled) */
	struct fault_sampler *sampler;	/* sample mode's --stacks */
	struct taskiter *tasks;		/* the per-refresh pass, or NULL */
	struct fring *fring;		/* trace mode's per-CPU fault rings, or NULL */
	uint32_t fring_slots;		/* records a CPU; 0: no rings */
	size_t stamp_bytes;		/* the stamp after every events record */
};

#define CHUNK_BATCH 4096

/*
 * The events ring is read here, not by libbpf's ring_buffer__consume: libbpf publishes the
 * consumer position after every record, and while the engine drains, each of those stores
 * takes the cache line from the faulting CPU, whose reserve and commit both read it (trace
 * mode, fault loop: 57 -> 51 ns of the fault program's run time, bpf_stats; doc/overhead.md).
 * The same records are applied in the same order; the position is published every
 * RING_PUBLISH_BYTES (an eighth of a smaller ring) and at the end of a drain, so the producer
 * sees space freed at most that much later (64 KiB of the default 8 MiB).
 */
#define RING_PUBLISH_BYTES (64 << 10)

/*
 * A fault ring per CPU holds as many records as the events ring would, shared out, within
 * bounds: 65,536 records (512 KiB) is ~80 ms of one CPU faulting flat out, eight drains;
 * 4,096 still two.  A fuller ring counts its faults lost and the engine rescans their processes.
 */
#define FRING_MIN_SLOTS 4096u
#define FRING_MAX_SLOTS 65536u

static uint32_t fring_slots(size_t ring_bytes, int ncpus)
{
	uint64_t want = ring_bytes / sizeof(fault_rec) / (ncpus > 0 ? ncpus : 1);
	uint32_t slots = FRING_MIN_SLOTS;

	while (slots < FRING_MAX_SLOTS && (uint64_t)slots * 2 <= want)
		slots *= 2;
	return slots;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;

	return t->fn(t->ctx, data, size);
}

/* Programs for one hook and attach point; NULL-terminated. */
static void hook_programs(struct mevitop_bpf *s, enum hook h, enum attach a,
			  struct bpf_program **out, size_t max)
{
	size_t n = 0;

#define ADD(p) do { if (n < max - 1) out[n++] = s->progs.p; } while (0)
	switch (h) {
	case HOOK_FAULT:
		if (a == AT_TP_BTF)
			ADD(btf_fault_user);
		else if (a == AT_TP)
			ADD(tp_fault_user);
		else if (a == AT_FENTRY)
			ADD(fentry_fault);
		else if (a == AT_KPROBE)
			ADD(kprobe_fault);
		break;
	case HOOK_KFAULT:
		if (a == AT_TP_BTF)
			ADD(btf_fault_kernel);
		else if (a == AT_TP)
			ADD(tp_fault_kernel);
		break;
	case HOOK_SYSCALLS:
		if (a == AT_TP_BTF_RAW_SYSCALLS) {
			ADD(btf_sys_exit);
		} else if (a == AT_TP_RAW_SYSCALLS) {
			ADD(tp_raw_sys_exit);
		} else if (a == AT_TP_PER_SYSCALL) {
#define ADD_SC(name) ADD(tp_exit_##name);
			MEVITOP_SYSCALL_LIST(ADD_SC)
#undef ADD_SC
		}
		break;
	case HOOK_FORK:
		if (a == AT_TP_BTF)
			ADD(btf_fork);
		else if (a == AT_TP)
			ADD(tp_fork);
		break;
	case HOOK_EXEC:
		if (a == AT_TP_BTF)
			ADD(btf_exec);
		else if (a == AT_TP)
			ADD(tp_exec);
		break;
	case HOOK_EXIT:
		if (a == AT_TP_BTF)
			ADD(btf_exit);
		else if (a == AT_TP)
			ADD(tp_exit);
		break;
	case HOOK_RSS:
		if (a == AT_TP_BTF)
			ADD(btf_rss_stat);
		else if (a == AT_TP)
			ADD(tp_rss_stat);
		break;
	case HOOK_LAYOUT:
		if (a == AT_TP_BTF_MMAP_LOCK)
			ADD(btf_mmap_lock_released);
		break;
	case HOOK_COUNT:
		break;
	}
#undef ADD
	out[n] = NULL;
}

/* A per-syscall tracepoint may be missing on some kernels or architectures. */
static bool tp_section_exists(const struct features *f, struct bpf_program *p)
{
	const char *sec = bpf_program__section_name(p);
	char path[256];

	if (strncmp(sec, "tp/", 3))
		return true;
	snprintf(path, sizeof(path), "%s/events/%s/id", f->tracefs_path, sec + 3);
	return access(path, R_OK) == 0;
}

/* Open's first stage: the skeleton's rodata and map sizes from o, and which programs load
 * (the hooks f chose).  Before the load. */
static void configure(struct tracer *t, const struct features *f, const struct tracer_opts *o)
{
	struct bpf_program *progs[64], *p;
	int h, i;

	t->skel->rodata->cfg_filter = o->filter;
	t->skel->rodata->cfg_self_tgid = o->self;
	t->skel->rodata->cfg_sample = o->sample;
	t->skel->rodata->cfg_wakeup_bytes = o->wakeup_bytes;
	t->skel->rodata->cfg_follow_children = o->follow_children;
	t->skel->rodata->cfg_all_proc_events = o->all_proc_events;
	t->skel->rodata->cfg_stacks = o->stacks;
	t->skel->rodata->cfg_stack_interval_ns = o->stack_interval_ns;
	t->skel->rodata->cfg_stacks_only = o->stacks && o->stacks_only;
	if (!o->stacks)		/* its LRU map is preallocated: keep it small when unused */
		bpf_map__set_max_entries(t->skel->maps.stack_chunks, 1);
	/* Chunk mode's map is a preallocated hash: 5.8 MB of kernel memory at 65,536
	 * entries, allocated and zeroed at the skeleton's load, and unused in other modes. */
	if (!o->sample)
		bpf_map__set_max_entries(t->skel->maps.chunks, 1);
	else if (o->chunk_map_entries)
		bpf_map__set_max_entries(t->skel->maps.chunks, o->chunk_map_entries);
	t->targets_words = (procfs_pid_max() + 63) / 64;	/* one bit per pid */
	bpf_map__set_max_entries(t->skel->maps.targets, t->targets_words);
	bpf_map__set_max_entries(t->skel->maps.layout_dirty, t->targets_words);
	if (o->ringbuf_bytes)
		bpf_map__set_max_entries(t->skel->maps.events, o->ringbuf_bytes);
	if (o->fault_rings && !o->sample && !(o->stacks && o->stacks_only) &&
	    (f->hook[HOOK_FAULT] == AT_TP_BTF || f->hook[HOOK_FAULT] == AT_TP) &&
	    t->ncpus <= FRING_MAX_CPUS) {
		t->fring_slots = fring_slots(bpf_map__max_entries(t->skel->maps.events), t->ncpus);
		t->stamp_bytes = t->ncpus * sizeof(__u32);
		t->skel->rodata->cfg_fring_slots = t->fring_slots;
		t->skel->rodata->cfg_stamp_cpus = t->ncpus;
		bpf_map__set_max_entries(t->skel->maps.fring, t->ncpus * t->fring_slots);
		bpf_map__set_max_entries(t->skel->maps.fring_pos, t->ncpus);
	}

	t->rss_hooked = f->hook[HOOK_RSS] != AT_NONE;
	bpf_object__for_each_program(p, t->skel->obj)
		bpf_program__set_autoload(p, false);
	for (h = 0; h < HOOK_COUNT; h++) {
		hook_programs(t->skel, h, f->hook[h], progs, 64);
		for (i = 0; progs[i]; i++)
			if (tp_section_exists(f, progs[i]))
				bpf_program__set_autoload(progs[i], true);
	}

	if (o->stack_sample_period)
		bpf_program__set_autoload(t->skel->progs.stacks_fault_sample, true);
	if (o->task_iter) {
		bpf_program__set_autoload(t->skel->progs.dump_tasks, true);
		t->skel->rodata->cfg_ncpus = t->ncpus;
	}
}

/* After the load: the arrays shared with the BPF side, mapped.  0 or -errno. */
static int map_arrays(struct tracer *t, char *why, size_t whylen)
{
	int err;

	t->targets_len = page_round_up_sys(t->targets_words * sizeof(__u64));
	t->targets = mmap(NULL, t->targets_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			  bpf_map__fd(t->skel->maps.targets), 0);
	t->layout = mmap(NULL, t->targets_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 bpf_map__fd(t->skel->maps.layout_dirty), 0);
	/* Without the rss_stat hook (the default) nothing writes the slots: 640 KiB of
	 * mevitop's RSS were mapped for nothing. */
	if (t->rss_hooked) {
		t->rss_len = page_round_up_sys(RSS_SLOTS * sizeof(struct rss_val));
		t->rss = mmap(NULL, t->rss_len, PROT_READ, MAP_SHARED,
			      bpf_map__fd(t->skel->maps.rss), 0);
	}
	if (t->targets == MAP_FAILED || t->layout == MAP_FAILED || t->rss == MAP_FAILED) {
		err = -errno;
		snprintf(why, whylen, "failed to map BPF arrays: %s", strerror(-err));
		return err;
	}
	if (t->fring_slots) {
		err = fring_map(bpf_map__fd(t->skel->maps.fring), bpf_map__fd(t->skel->maps.fring_pos),
				t->ncpus, t->fring_slots, &t->fring);
		if (err) {
			snprintf(why, whylen, "failed to map the fault rings: %s", strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The events ring as the kernel lays it out for user space (kernel/bpf/ringbuf.c): the
 * consumer page, then the producer page and the data twice, so a record never wraps. */
static int map_ring(struct tracer *t)
{
	size_t pg = sysconf(_SC_PAGESIZE);
	int fd = bpf_map__fd(t->skel->maps.events);

	t->ring_size = bpf_map__max_entries(t->skel->maps.events);
	t->ring_publish = t->ring_size / 8 < RING_PUBLISH_BYTES ? t->ring_size / 8
							       : RING_PUBLISH_BYTES;
	t->ring_cons = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	t->ring_prod = mmap(NULL, pg + 2 * t->ring_size, PROT_READ, MAP_SHARED, fd, pg);
	t->ring_data = (const char *)t->ring_prod + pg;
	return t->ring_cons == MAP_FAILED || t->ring_prod == MAP_FAILED ? -errno : 0;
}

/* Attaches every loaded program but the two started on their own (the fault sampler's and
 * the task iterator).  0 or -errno. */
static int attach_all(struct tracer *t, char *why, size_t whylen)
{
	struct bpf_program *p;
	int err;

	t->links = calloc(64, sizeof(*t->links));
	if (!t->links)
		return -ENOMEM;
	bpf_object__for_each_program(p, t->skel->obj) {
		struct bpf_link *l;

		if (!bpf_program__autoload(p) || p == t->skel->progs.stacks_fault_sample ||
		    p == t->skel->progs.dump_tasks)
			continue;
		l = bpf_program__attach(p);
		if (!l) {
			err = -errno;
			snprintf(why, whylen, "failed to attach %s (%s): %s",
				 bpf_program__name(p), bpf_program__section_name(p),
				 strerror(-err));
			return err;
		}
		if (t->nlinks == 64) {
			bpf_link__destroy(l);
			return -E2BIG;
		}
		t->links[t->nlinks++] = l;
		log_debug("attached %s", bpf_program__section_name(p));
	}
	return 0;
}

/* open → configure → load → map the arrays → attach → the sampler, the iterator, the ring. */
int tracer_open(const struct features *f, const struct tracer_opts *o, tracer_event_fn fn,
		void *ctx, struct tracer **out, char *why, size_t whylen)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	t->fn = fn;
	t->ctx = ctx;
	t->release_in_child = !(f->disabled & DIS_DETACH_CHILD);
	t->ncpus = libbpf_num_possible_cpus();
	t->percpu = calloc(t->ncpus > 0 ? t->ncpus : 1, sizeof(*t->percpu));
	t->slots = calloc(t->ncpus > 0 ? t->ncpus : 1, sizeof(*t->slots));
	t->slots_seen = calloc(t->ncpus > 0 ? t->ncpus : 1, sizeof(*t->slots_seen));
	if (t->ncpus <= 0 || !t->percpu || !t->slots || !t->slots_seen) {
		err = -ENOMEM;
		goto fail;
	}
	t->skel = mevitop_bpf__open();
	if (!t->skel) {
		err = -errno;
		snprintf(why, whylen, "failed to open BPF skeleton: %s", strerror(-err));
		goto fail;
	}
	configure(t, f, o);
	err = mevitop_bpf__load(t->skel);
	if (err) {
		snprintf(why, whylen, "failed to load BPF programs: %s (run with -vv for the "
			 "verifier log)", strerror(-err));
		goto fail;
	}
	err = map_arrays(t, why, whylen);
	if (!err)
		err = attach_all(t, why, whylen);
	if (err)
		goto fail;
	if (o->stack_sample_period) {
		err = fault_sampler_start(bpf_program__fd(t->skel->progs.stacks_fault_sample),
					  o->stack_sample_period, o->stack_duty_on_ms,
					  o->stack_duty_every_ms, &t->sampler, why, whylen);
		if (err)
			goto fail;
	}
	if (o->task_iter) {
		err = taskiter_open(t->skel->progs.dump_tasks, &t->tasks);
		if (err) {
			snprintf(why, whylen, "failed to attach the task iterator: %s",
				 strerror(-err));
			goto fail;
		}
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), on_sample, t, NULL);
	if (!t->rb) {
		err = -errno;
		snprintf(why, whylen, "failed to create ring buffer: %s", strerror(-err));
		goto fail;
	}
	err = map_ring(t);
	if (err) {
		snprintf(why, whylen, "failed to map the ring buffer: %s", strerror(-err));
		goto fail;
	}
	*out = t;
	return 0;
fail:
	tracer_close(t);
	return err;
}

static void *destroy_link(void *arg)
{
	bpf_link__destroy(arg);
	return NULL;
}

static bool perf_link(struct bpf_link *l)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return !bpf_obj_get_info_by_fd(bpf_link__fd(l), &info, &len) &&
	       info.type == BPF_LINK_TYPE_PERF_EVENT;
}

/*
 * Detaching a program attached to a tracepoint through perf waits for RCU grace periods
 * (~40 ms a link here); one after the other, the per-syscall tracepoints made `q` take a
 * second or two.  Their last closes are left to a grandchild (perf_release.c) unless
 * --disable detach_child; without it, or if that fails, they are detached from parallel
 * threads, whose waits share grace periods (~0.55 s for trace mode's 14).
 */
static void destroy_links(struct bpf_link **links, size_t n, bool in_child)
{
	pthread_t tids[64];
	bool started[64] = { false };
	int keep[64], hold;
	size_t i, nkeep = 0;

	for (i = 0; in_child && i < n && i < 64; i++)
		if (perf_link(links[i]))
			keep[nkeep++] = bpf_link__fd(links[i]);
	if (nkeep && !perf_release_begin(keep, nkeep, &hold)) {
		for (i = 0; i < n; i++)
			bpf_link__destroy(links[i]);	/* the perf links' closes: not the last */
		perf_release_end(hold);
		return;
	}
	for (i = 0; i < n && i < 64; i++)
		started[i] = pthread_create(&tids[i], NULL, destroy_link, links[i]) == 0;
	for (i = 0; i < n && i < 64; i++) {
		if (started[i])
			pthread_join(tids[i], NULL);
		else
			bpf_link__destroy(links[i]);
	}
}

void tracer_close(struct tracer *t)
{
	if (!t)
		return;
	fault_sampler_stop(t->sampler);	/* before the program goes */
	taskiter_close(t->tasks);
	ring_buffer__free(t->rb);
	if (t->ring_cons && t->ring_cons != MAP_FAILED)
		munmap(t->ring_cons, sysconf(_SC_PAGESIZE));
	if (t->ring_prod && t->ring_prod != MAP_FAILED)
		munmap((void *)t->ring_prod, sysconf(_SC_PAGESIZE) + 2 * t->ring_size);
	destroy_links(t->links, t->nlinks, t->release_in_child);
	free(t->links);
	free(t->percpu);
	free(t->slots);
	free(t->slots_seen);
	fring_unmap(t->fring);
	if (t->targets && t->targets != MAP_FAILED)
		munmap((void *)t->targets, t->targets_len);
	if (t->layout && t->layout != MAP_FAILED)
		munmap((void *)t->layout, t->targets_len);
	if (t->rss && t->rss != MAP_FAILED)
		munmap((void *)t->rss, t->rss_len);
	mevitop_bpf__destroy(t->skel);
	free(t);
}

bool tracer_fault_rings(const struct tracer *t)
{
	return t->fring != NULL;
}

struct taskiter *tracer_tasks(struct tracer *t)
{
	return t->tasks;
}

int tracer_add_target(struct tracer *t, pid_t tgid)
{
	if ((size_t)tgid / 64 >= t->targets_words)
		return -ERANGE;
	/* Atomic on the shared mapping: BPF sets children's bits concurrently at fork. */
	__atomic_fetch_or(&t->targets[tgid / 64], 1ULL << (tgid % 64), __ATOMIC_SEQ_CST);
	return 0;
}

int tracer_del_target(struct tracer *t, pid_t tgid)
{
	if ((size_t)tgid / 64 >= t->targets_words)
		return -ERANGE;
	__atomic_fetch_and(&t->targets[tgid / 64], ~(1ULL << (tgid % 64)), __ATOMIC_SEQ_CST);
	return 0;
}

bool tracer_is_target(struct tracer *t, pid_t tgid)
{
	if ((size_t)tgid / 64 >= t->targets_words)
		return false;
	return (t->targets[tgid / 64] >> (tgid % 64)) & 1;
}

int tracer_wait(struct tracer *t, int timeout_ms)
{
	struct epoll_event ev;
	int n;

	n = epoll_wait(ring_buffer__epoll_fd(t->rb), &ev, 1, timeout_ms);
	return n < 0 ? (errno == EINTR ? 0 : -errno) : n;
}

/* As ring_buffer__consume: every record available, the newly produced ones included, until
 * a busy (reserved, not yet submitted) one; a record whose callback returns < 0 is consumed
 * and that value returned.  Otherwise the number of records.  With the fault rings, each
 * record's stamp first brings in the faults before it (fring.h); the faults after the last
 * record, once the ring is seen empty with nothing reserved. */
int tracer_consume(struct tracer *t)
{
	const char *data = t->ring_data;
	unsigned long cons = __atomic_load_n(t->ring_cons, __ATOMIC_RELAXED), published = cons;
	unsigned long prod;
	int n = 0, err = 0;

	for (;;) {
		/* The heads before the look: a record reserved after it stamps no lower. */
		if (t->fring)
			fring_snapshot(t->fring);
		prod = __atomic_load_n(t->ring_prod, __ATOMIC_ACQUIRE);
		if (cons >= prod)
			break;
		while (cons < prod) {
			const __u32 *hdr = (const __u32 *)(data + (cons & (t->ring_size - 1)));
			__u32 len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
			const char *rec = (const char *)hdr + BPF_RINGBUF_HDR_SZ;
			unsigned long next;
			bool live;

			if (len & BPF_RINGBUF_BUSY_BIT)
				goto out;
			live = !(len & BPF_RINGBUF_DISCARD_BIT);
			len &= ~BPF_RINGBUF_DISCARD_BIT;
			next = cons + ((len + BPF_RINGBUF_HDR_SZ + 7) & ~7UL);
			if (live && t->fring && len >= t->stamp_bytes) {	/* every record is */
				len -= t->stamp_bytes;
				err = fring_drain_stamp(t->fring, rec + len, t->fn, t->ctx);
				if (err < 0)
					goto out;	/* the record stays: its faults first */
				n = n > INT_MAX - err ? INT_MAX : n + err;
			}
			cons = next;
			if (live) {
				err = t->fn(t->ctx, rec, len);
				if (err < 0)
					goto out;
				if (n < INT_MAX)
					n++;
			}
			if (cons - published >= t->ring_publish) {
				__atomic_store_n(t->ring_cons, cons, __ATOMIC_RELEASE);
				published = cons;
			}
		}
	}
	if (t->fring) {
		err = fring_drain_snapshot(t->fring, t->fn, t->ctx);
		if (err > 0)
			n = n > INT_MAX - err ? INT_MAX : n + err;
	}
out:
	__atomic_store_n(t->ring_cons, cons, __ATOMIC_RELEASE);
	return err < 0 ? err : n;
}

static uint64_t sum_percpu(struct tracer *t, struct bpf_map *map, __u32 idx)
{
	__u64 *vals = t->percpu;
	uint64_t sum = 0;
	int i;

	if (bpf_map__lookup_elem(map, &idx, sizeof(idx), vals, t->ncpus * sizeof(*vals), 0))
		return 0;
	for (i = 0; i < t->ncpus; i++)
		sum += vals[i];
	return sum;
}

uint64_t tracer_lost(struct tracer *t, uint64_t per_kind[EV_KIND_MAX])
{
	uint64_t total = 0, v;
	__u32 k;

	for (k = 0; k < EV_KIND_MAX; k++) {
		v = sum_percpu(t, t->skel->maps.lost, k);
		if (per_kind)
			per_kind[k] = v;
		total += v;
	}
	return total;
}

uint64_t tracer_overflows(struct tracer *t)
{
	uint64_t total = 0;
	__u32 k;

	for (k = 0; k < OVF_SLOTS; k++)
		total += sum_percpu(t, t->skel->maps.overflow, k);
	return total;
}

void tracer_drain_lost_tgids(struct tracer *t, tracer_tgid_fn fn, void *ctx)
{
	int fd = bpf_map__fd(t->skel->maps.lost_tgid);
	__u32 key, next, *prev = NULL;
	__u32 batch[1024];
	size_t n = 0, i;
	__u64 v;

	/* Collect first, then delete: deleting while iterating restarts the walk. */
	while (n < 1024 && bpf_map_get_next_key(fd, prev, &next) == 0) {
		batch[n++] = next;
		key = next;
		prev = &key;
	}
	for (i = 0; i < n; i++) {
		if (bpf_map_lookup_and_delete_elem(fd, &batch[i], &v) &&
		    (bpf_map_lookup_elem(fd, &batch[i], &v) || bpf_map_delete_elem(fd, &batch[i])))
			continue;
		fn(ctx, batch[i], v);
	}
}

int tracer_drain_layout(struct tracer *t, tracer_tgid_fn fn, void *ctx)
{
	size_t i;
	int n = 0;

	/* A plain read skips the (almost all) zero words; the swap takes the bits BPF set
	 * so far, and a release after it sets its bit again for the next refresh. */
	for (i = 0; i < t->targets_words; i++) {
		__u64 w;

		if (!t->layout[i])
			continue;
		w = __atomic_exchange_n(&t->layout[i], 0, __ATOMIC_SEQ_CST);
		while (w) {
			int b = __builtin_ctzll(w);

			w &= w - 1;
			fn(ctx, (pid_t)(i * 64 + b), 1);
			n++;
		}
	}
	return n;
}

uint64_t tracer_layout_unowned(struct tracer *t)
{
	return sum_percpu(t, t->skel->maps.layout_unowned, 0);
}

int tracer_read_rss(struct tracer *t, pid_t tgid, struct rss_val *v)
{
	const volatile struct rss_val *slot;

	if (!t->rss)
		return -ENOENT;		/* no rss_stat hook */
	slot = &t->rss[tgid & (RSS_SLOTS - 1)];
	v->tgid = slot->tgid;
	v->updates = slot->updates;
	for (int i = 0; i < MEVITOP_NR_RSS; i++)
		v->count[i] = slot->count[i];
	return v->tgid == (__u32)tgid ? 0 : -ENOENT;
}

int tracer_read_chunk_slots(struct tracer *t, tracer_chunk_fn fn, void *ctx)
{
	struct chunk_slot *v = t->slots;
	__u32 zero = 0;
	int i, n = 0;

	if (bpf_map__lookup_elem(t->skel->maps.chunk_slot, &zero, sizeof(zero), v,
				 t->ncpus * sizeof(*v), 0))
		return -errno;
	for (i = 0; i < t->ncpus; i++) {
		struct chunk_slot *last = &t->slots_seen[i];
		struct chunk_key k = { .tgid = v[i].tgid, .chunk = v[i].chunk };
		struct chunk_val d;

		if (!v[i].faults)
			continue;
		/* Only what changed since the last look: the slot stays until the CPU moves on. */
		if (last->tgid == v[i].tgid && last->chunk == v[i].chunk) {
			if (last->faults == v[i].faults)
				continue;
			d.faults = v[i].faults > last->faults ? v[i].faults - last->faults : v[i].faults;
		} else {
			d.faults = v[i].faults;
		}
		*last = v[i];
		fn(ctx, &k, &d);
		n++;
	}
	return n;
}

int tracer_drain_chunks(struct tracer *t, tracer_chunk_fn fn, void *ctx)
{
	int fd = bpf_map__fd(t->skel->maps.chunks);
	static struct chunk_key keys[CHUNK_BATCH];
	static struct chunk_val vals[CHUNK_BATCH];
	struct chunk_key key, next, *prev = NULL;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u64 in = 0, out = 0;
	bool first = true;
	int total = 0, err;
	__u32 n, i;

	/* One syscall per CHUNK_BATCH entries (Linux 5.6+); per key otherwise. */
	for (;;) {
		n = CHUNK_BATCH;
		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, keys, vals, &n,
						      &opts);
		if (err && errno != ENOENT)
			break;
		for (i = 0; i < n; i++)
			fn(ctx, &keys[i], &vals[i]);
		total += n;
		if (err)	/* ENOENT: the walk is complete */
			return total;
		in = out;
		first = false;
	}
	if (errno != EINVAL && errno != ENOTSUP && errno != EOPNOTSUPP)
		return -errno;
	n = 0;
	while (n < CHUNK_BATCH && bpf_map_get_next_key(fd, prev, &next) == 0) {
		keys[n++] = next;
		key = next;
		prev = &key;
	}
	for (i = 0; i < n; i++) {
		if (bpf_map_lookup_and_delete_elem(fd, &keys[i], &vals[i]))
			continue;
		fn(ctx, &keys[i], &vals[i]);
		total++;
	}
	return total;
}

bool tracer_sampler_stats(struct tracer *t, struct fault_sampler_stats *out)
{
	if (!t->sampler)
		return false;
	fault_sampler_stats(t->sampler, out);
	return true;
}
