// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/types.h>
#include "events.h"
#include "lib/page.h"
#include "kernel/fring.h"

struct fring {
	const fault_rec *recs;
	struct fring_pos *pos;
	size_t recs_len, pos_len;
	int ncpus;
	uint32_t slots;
	uint64_t *snap;			/* the last snapshot's heads */
	__u32 *tgid;			/* each CPU's process, from its last marker */
};

int fring_map(int ring_fd, int pos_fd, int ncpus, uint32_t slots, struct fring **out)
{
	struct fring *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->ncpus = ncpus;
	r->slots = slots;
	r->recs_len = page_round_up_sys((size_t)ncpus * slots * sizeof(fault_rec));
	r->pos_len = page_round_up_sys((size_t)ncpus * sizeof(struct fring_pos));
	r->snap = calloc(ncpus, sizeof(*r->snap));
	r->tgid = calloc(ncpus, sizeof(*r->tgid));
	/* Read-only for the records: only the BPF side writes them. */
	r->recs = mmap(NULL, r->recs_len, PROT_READ, MAP_SHARED, ring_fd, 0);
	r->pos = mmap(NULL, r->pos_len, PROT_READ | PROT_WRITE, MAP_SHARED, pos_fd, 0);
	if (!r->snap || !r->tgid || r->recs == MAP_FAILED || r->pos == MAP_FAILED) {
		err = r->snap && r->tgid ? -errno : -ENOMEM;
		fring_unmap(r);
		return err;
	}
	*out = r;
	return 0;
}

void fring_unmap(struct fring *r)
{
	if (!r)
		return;
	if (r->recs && r->recs != MAP_FAILED)
		munmap((void *)r->recs, r->recs_len);
	if (r->pos && r->pos != MAP_FAILED)
		munmap(r->pos, r->pos_len);
	free(r->snap);
	free(r->tgid);
	free(r);
}

size_t fring_stamp_bytes(const struct fring *r)
{
	return (size_t)r->ncpus * sizeof(__u32);
}

void fring_snapshot(struct fring *r)
{
	for (int c = 0; c < r->ncpus; c++)
		r->snap[c] = __atomic_load_n(&r->pos[c].head, __ATOMIC_ACQUIRE);
}

/* CPU c's records from its tail up to `upto`; the tail is published once, at the end (the
 * producer reuses a slot only below it). */
static int drain_cpu(struct fring *r, int c, uint64_t upto, fring_fn fn, void *ctx, int *n)
{
	const fault_rec *ring = r->recs + (size_t)c * r->slots;
	uint64_t tail = r->pos[c].tail;		/* only this thread writes it */
	int err = 0;

	while (tail < upto) {
		fault_rec rec = ring[tail & (r->slots - 1)];
		struct ev_fault ev = {
			.kind = EV_FAULT, .flags = (__u8)(rec & FR_FLAGS), .cpu = (__u16)c,
			.tgid = r->tgid[c], .addr = rec & ~(__u64)0xfff,
		};

		tail++;
		if (rec & FR_MARK) {
			r->tgid[c] = (__u32)(rec >> 32);
			continue;
		}
		if (*n < INT_MAX)
			(*n)++;
		err = fn(ctx, &ev, sizeof(ev));
		if (err < 0)
			break;
	}
	__atomic_store_n(&r->pos[c].tail, tail, __ATOMIC_RELEASE);
	return err;
}

int fring_drain_snapshot(struct fring *r, fring_fn fn, void *ctx)
{
	int n = 0, err;

	for (int c = 0; c < r->ncpus; c++) {
		err = drain_cpu(r, c, r->snap[c], fn, ctx, &n);
		if (err < 0)
			return err;
	}
	return n;
}

/*
 * A stamp holds the low 32 bits of each head.  Stamps of records from different CPUs need
 * not rise in ring order (each read its heads after its own reservation), so one may lie
 * below what is already taken: that CPU has nothing more to give before the record.  A
 * head is never more than `slots` (<= 2^16) ahead of the tail, so the signed difference of
 * the low bits is exact.
 */
int fring_drain_stamp(struct fring *r, const void *stamp, fring_fn fn, void *ctx)
{
	int n = 0, err;

	for (int c = 0; c < r->ncpus; c++) {
		uint64_t tail = r->pos[c].tail;
		__u32 h;
		int32_t ahead;

		memcpy(&h, (const char *)stamp + c * sizeof(h), sizeof(h));
		ahead = (int32_t)(h - (__u32)tail);
		if (ahead <= 0)
			continue;
		/* The head was published before the stamp was read: its record is complete. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		err = drain_cpu(r, c, tail + (uint32_t)ahead, fn, ctx, &n);
		if (err < 0)
			return err;
	}
	return n;
}
