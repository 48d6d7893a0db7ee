// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the fault rings' reader (user/kernel/fring.c): the records of memfds laid
 * out as the BPF arrays are, written here the way bpf/faults.bpf.c writes them.  What the
 * integration tests cannot reach quickly: a stamp below what is already taken, a head
 * whose low 32 bits wrap, a drain stopped half way (markers included), and which process
 * each record belongs to.  The order against the real kernel's records is checked by
 * tests/integration/test_accuracy.py (test_faults_on_two_cpus_around_remaps).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/types.h>

#include "events.h"
#include "kernel/fring.h"

#define NCPUS 2
#define SLOTS 8u

struct rings {
	int ring_fd, pos_fd;
	fault_rec *recs;
	struct fring_pos *pos;
	struct fring *r;
};

/* What the engine would have been given: (cpu, tgid, page, flags), in order. */
struct seen {
	struct { int cpu; __u32 tgid; __u64 addr; __u8 flags; } ev[64];
	int n, stop_after;		/* stop_after > 0: fn returns -1 on that record */
};

static int on_fault(void *ctx, const void *data, size_t size)
{
	struct seen *s = ctx;
	const struct ev_fault *ev = data;

	assert_int_equal(size, sizeof(*ev));
	assert_int_equal(ev->kind, EV_FAULT);
	assert_true(s->n < 64);
	s->ev[s->n].cpu = ev->cpu;
	s->ev[s->n].tgid = ev->tgid;
	s->ev[s->n].addr = ev->addr;
	s->ev[s->n].flags = ev->flags;
	s->n++;
	return s->stop_after && s->n == s->stop_after ? -1 : 0;
}

static void open_rings(struct rings *g, __u64 start)
{
	size_t pg = sysconf(_SC_PAGESIZE);

	g->ring_fd = memfd_create("fring", 0);
	g->pos_fd = memfd_create("fring_pos", 0);
	assert_true(g->ring_fd >= 0 && g->pos_fd >= 0);
	assert_int_equal(ftruncate(g->ring_fd, pg), 0);
	assert_int_equal(ftruncate(g->pos_fd, pg), 0);
	g->recs = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, g->ring_fd, 0);
	g->pos = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, g->pos_fd, 0);
	assert_true(g->recs != MAP_FAILED && g->pos != MAP_FAILED);
	for (int c = 0; c < NCPUS; c++)
		g->pos[c].head = g->pos[c].tail = start;
	assert_int_equal(fring_map(g->ring_fd, g->pos_fd, NCPUS, SLOTS, &g->r), 0);
	assert_int_equal(fring_stamp_bytes(g->r), NCPUS * sizeof(__u32));
}

static void close_rings(struct rings *g)
{
	size_t pg = sysconf(_SC_PAGESIZE);

	fring_unmap(g->r);
	munmap(g->recs, pg);
	munmap(g->pos, pg);
	close(g->ring_fd);
	close(g->pos_fd);
}

/* bpf/faults.bpf.c's fring_push, for CPU c: false when full. */
static bool push(struct rings *g, int c, __u32 tgid, __u64 addr, __u8 flags)
{
	struct fring_pos *p = &g->pos[c];
	bool mark = p->last_tgid != tgid;
	__u64 head = p->head;

	if (head + mark - p->tail >= SLOTS)
		return false;
	if (mark) {
		g->recs[c * SLOTS + (head & (SLOTS - 1))] = ((__u64)tgid << 32) | FR_MARK;
		p->last_tgid = tgid;
		head++;
	}
	g->recs[c * SLOTS + (head & (SLOTS - 1))] = (addr & ~0xfffULL) | (flags & FR_FLAGS);
	p->head = head + 1;
	return true;
}

/* An events record's stamp, as rec_submit writes it. */
static void stamp(const struct rings *g, __u32 out[NCPUS])
{
	for (int c = 0; c < NCPUS; c++)
		out[c] = (__u32)g->pos[c].head;
}

static void test_stamp_splits_the_faults(void **state)
{
	struct rings g;
	struct seen s = { 0 };
	__u32 st[NCPUS];

	(void)state;
	open_rings(&g, 0);
	assert_true(push(&g, 0, 100, 0x1000, EVF_WRITE));
	assert_true(push(&g, 1, 200, 0x7000, 0));
	assert_true(push(&g, 0, 100, 0x2fff, EVF_PRESENT));	/* the offset is dropped */
	stamp(&g, st);				/* an events record here */
	assert_true(push(&g, 1, 200, 0x8000, EVF_INSTR));
	assert_true(push(&g, 0, 300, 0x3000, 0));	/* another process: a marker first */
	/* Before the record: the three faults before the stamp, CPU by CPU. */
	assert_int_equal(fring_drain_stamp(g.r, st, on_fault, &s), 3);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.ev[0].cpu, 0);
	assert_int_equal(s.ev[0].tgid, 100);
	assert_int_equal(s.ev[0].addr, 0x1000);
	assert_int_equal(s.ev[0].flags, EVF_WRITE);
	assert_int_equal(s.ev[1].tgid, 100);
	assert_int_equal(s.ev[1].addr, 0x2000);
	assert_int_equal(s.ev[1].flags, EVF_PRESENT);
	assert_int_equal(s.ev[2].cpu, 1);
	assert_int_equal(s.ev[2].tgid, 200);
	assert_int_equal(s.ev[2].addr, 0x7000);
	/* The same stamp again (or an older one, from a record of another CPU): nothing. */
	assert_int_equal(fring_drain_stamp(g.r, st, on_fault, &s), 0);
	/* After the record, at the end of the drain: the rest. */
	fring_snapshot(g.r);
	assert_int_equal(fring_drain_snapshot(g.r, on_fault, &s), 2);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.ev[3].cpu, 0);
	assert_int_equal(s.ev[3].tgid, 300);
	assert_int_equal(s.ev[3].addr, 0x3000);
	assert_int_equal(s.ev[4].cpu, 1);
	assert_int_equal(s.ev[4].tgid, 200);
	assert_int_equal(s.ev[4].flags, EVF_INSTR);
	/* Every record taken, markers included: the tails say so to the producer. */
	assert_int_equal(g.pos[0].tail, g.pos[0].head);
	assert_int_equal(g.pos[1].tail, g.pos[1].head);
	close_rings(&g);
}

static void test_a_full_ring_takes_nothing_more(void **state)
{
	struct rings g;
	struct seen s = { 0 };
	int i;

	(void)state;
	open_rings(&g, 0);
	/* A marker and 7 faults fill 8 slots; the 8th fault is refused (counted lost). */
	for (i = 0; i < 7; i++)
		assert_true(push(&g, 0, 5, 0x1000 * (i + 1), 0));
	assert_false(push(&g, 0, 5, 0x9000, 0));
	/* A new process needs room for its marker as well. */
	fring_snapshot(g.r);
	assert_int_equal(fring_drain_snapshot(g.r, on_fault, &s), 7);
	for (i = 0; i < 6; i++)
		assert_true(push(&g, 0, 5, 0x10000, 0));
	assert_true(push(&g, 0, 6, 0x20000, 0));	/* marker + fault: the last 2 slots */
	assert_false(push(&g, 0, 6, 0x21000, 0));
	fring_snapshot(g.r);
	assert_int_equal(fring_drain_snapshot(g.r, on_fault, &s), 7);
	assert_int_equal(s.ev[13].tgid, 6);
	assert_int_equal(s.ev[12].tgid, 5);
	close_rings(&g);
}

static void test_a_stopped_drain_resumes_where_it_stopped(void **state)
{
	struct rings g;
	struct seen s = { .stop_after = 2 };
	__u32 st[NCPUS];

	(void)state;
	open_rings(&g, 0);
	assert_true(push(&g, 0, 1, 0x1000, 0));
	assert_true(push(&g, 0, 2, 0x2000, 0));	/* stops here: marker 2 is already taken */
	assert_true(push(&g, 0, 2, 0x3000, 0));
	stamp(&g, st);
	assert_int_equal(fring_drain_stamp(g.r, st, on_fault, &s), -1);
	assert_int_equal(s.n, 2);
	s.stop_after = 0;
	assert_int_equal(fring_drain_stamp(g.r, st, on_fault, &s), 1);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.ev[2].tgid, 2);	/* the marker's process, kept across the stop */
	assert_int_equal(s.ev[2].addr, 0x3000);
	close_rings(&g);
}

static void test_heads_past_32_bits(void **state)
{
	struct rings g;
	struct seen s = { 0 };
	__u32 st[NCPUS];
	int i;

	(void)state;
	open_rings(&g, 0xfffffffdULL);	/* the stamps' low 32 bits wrap below */
	for (i = 0; i < 5; i++)
		assert_true(push(&g, 1, 9, 0x1000 * (i + 1), 0));
	stamp(&g, st);
	assert_true(st[1] < 0x10);		/* wrapped */
	assert_int_equal(fring_drain_stamp(g.r, st, on_fault, &s), 5);
	assert_int_equal(s.ev[4].addr, 0x5000);
	assert_int_equal(g.pos[1].tail, 0xfffffffdULL + 6);
	close_rings(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stamp_splits_the_faults),
		cmocka_unit_test(test_a_full_ring_takes_nothing_more),
		cmocka_unit_test(test_a_stopped_drain_resumes_where_it_stopped),
		cmocka_unit_test(test_heads_past_32_bits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
