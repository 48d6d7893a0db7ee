// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's record rules (user/engine/rules.c) and batch end (scan.c), without a kernel.
 *
 * A scripted kernel holds, per process, one slot per page of a small window: mapped or
 * not, permissions, anonymous or file, resident or not.  Each scripted operation (mmap,
 * a fault, munmap, mremap, MADV_DONTNEED, brk, fork, exec, exit) changes that world as
 * the kernel would and emits the record the BPF side would emit; the engine applies the
 * records and runs its batch end against the world through struct engine_source (layout
 * and pages read from the slots).  After each batch every page of the model must equal
 * the world's, and where a rule claims to be exact on its own (munmap, MADV_DONTNEED,
 * mremap moving pages, anonymous faults) the model must be right before any scan, and
 * the batch end must not have scanned for it.  MEVITOP_TEST_SEED replays the random run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/engine_int.h"
#include "rng.h"
#include "syscalls.h"
#include "kernel/uapi_mm.h"

#define BASE	0x7f0000ULL	/* page number of the window's first page */
#define N	2048		/* pages in the window (8 MiB: several PMDs) */
#define NPROC	8
#define NTHREAD	8

/* --- the scripted kernel --- */

struct wpage {
	uint32_t map;		/* 0: unmapped; else the mapping's id (splits keep it) */
	uint32_t perms;		/* MP_* */
	bool file;		/* a private file mapping (else anonymous), page index below */
	bool heap;
	uint64_t fpage;		/* file page this address maps */
	bool resident;
};

struct wproc {
	pid_t pid;
	bool alive;
	uint64_t brk_start;	/* bytes */
	struct wpage pg[N];
};

static struct world {
	struct wproc procs[NPROC];
	struct { pid_t tid, tgid; } threads[NTHREAD];
	size_t nthreads;
	uint32_t next_map;
	uint64_t scanned;	/* pages the engine read from "pagemap" */
} W;

static struct engine *E;

static struct wproc *wfind(pid_t pid)
{
	for (int i = 0; i < NPROC; i++)
		if (W.procs[i].pid == pid)
			return &W.procs[i];
	return NULL;
}

static struct wproc *wnew(pid_t pid)
{
	for (int i = 0; i < NPROC; i++) {
		if (!W.procs[i].pid) {
			memset(&W.procs[i], 0, sizeof(W.procs[i]));
			W.procs[i].pid = pid;
			W.procs[i].alive = true;
			return &W.procs[i];
		}
	}
	fail_msg("world: too many processes");
	return NULL;
}

static struct wpage *wpg(struct wproc *w, uint64_t page)
{
	assert_true(page >= BASE && page < BASE + N);
	return &w->pg[page - BASE];
}

/* --- struct engine_source over the world --- */

static bool s_true(void *ctx, pid_t pid) { return true; }
static int s_add(void *ctx, pid_t pid) { return 0; }
static void s_del(void *ctx, pid_t pid) {}
static bool s_passes(void *ctx, pid_t pid, const char *comm) { return true; }
static void s_forget(void *ctx, pid_t pid) {}

static int s_read_tgid(void *ctx, pid_t tid, pid_t *tgid)
{
	for (size_t i = 0; i < W.nthreads; i++) {
		if (W.threads[i].tid == tid) {
			*tgid = W.threads[i].tgid;
			return 0;
		}
	}
	*tgid = tid;
	return wfind(tid) ? 0 : -ESRCH;
}

static int s_pidfd_target(void *ctx, pid_t pid, int fd, pid_t *target)
{
	return -EBADF;
}

static int s_live_thread(void *ctx, pid_t pid, pid_t *tid)
{
	struct wproc *w = wfind(pid);

	if (!w || !w->alive)
		return -ESRCH;
	*tid = pid;
	return 0;
}

/* Consecutive pages of one mapping id and one set of attributes make one entry. */
static int s_read_layout(void *ctx, pid_t pid, maps_cb cb, void *arg)
{
	struct wproc *w = wfind(pid);
	char path[64];
	int i = 0, j, err;

	if (!w || !w->alive)
		return -ESRCH;
	while (i < N) {
		struct wpage *a = &w->pg[i];

		if (!a->map) {
			i++;
			continue;
		}
		for (j = i + 1; j < N; j++) {
			struct wpage *b = &w->pg[j];

			if (b->map != a->map || b->perms != a->perms || b->file != a->file ||
			    b->heap != a->heap || (a->file && b->fpage != a->fpage + (j - i)))
				break;
		}
		snprintf(path, sizeof(path), "%s", a->heap ? "[heap]" :
			 a->file ? "/fake/file" : "");
		struct maps_entry me = {
			.start = (BASE + i) << PAGE_SHIFT_4K, .end = (BASE + j) << PAGE_SHIFT_4K,
			.offset = a->file ? a->fpage << PAGE_SHIFT_4K : 0,
			.ino = a->file ? 42 : 0, .perms = a->perms, .path = path,
		};
		err = cb(&me, arg);
		if (err)
			return err;
		i = j;
	}
	return 0;
}

static int s_read_vmflags(void *ctx, pid_t pid, vmflags_cb cb, void *arg) { return 0; }

static int s_read_start_brk(void *ctx, pid_t pid, uint64_t *brk)
{
	struct wproc *w = wfind(pid);

	if (!w)
		return -ESRCH;
	*brk = w->brk_start;
	return 0;
}

static int s_read_comm(void *ctx, pid_t pid, char *comm, size_t len)
{
	snprintf(comm, len, "wl%d", pid);
	return 0;
}

static int s_read_uid(void *ctx, pid_t pid, uid_t *uid)
{
	*uid = 0;
	return 0;
}

static uint64_t wrss(const struct wproc *w)
{
	uint64_t n = 0;

	for (int i = 0; i < N; i++)
		n += w->pg[i].map && w->pg[i].resident;
	return n;
}

static int s_read_counters(void *ctx, pid_t pid, struct proc_counters *c)
{
	struct wproc *w = wfind(pid);

	if (!w || !w->alive)
		return -ESRCH;
	memset(c, 0, sizeof(*c));
	c->rss = wrss(w);
	c->start_time = 1000 + pid;
	c->state = 'S';
	return 0;
}

static int s_read_rss(void *ctx, pid_t pid, uint64_t *rss)
{
	struct wproc *w = wfind(pid);

	if (!w || !w->alive)
		return -ESRCH;
	*rss = wrss(w);
	return 0;
}

static int s_open_pages(void *ctx, pid_t pid)
{
	struct wproc *w = wfind(pid);

	return w && w->alive ? pid : -ESRCH;
}

/* Runs of resident pages, as PAGEMAP_SCAN reports them (pages outside the window: none). */
static int s_scan_pages(void *ctx, int fd, uint64_t start, uint64_t end, pagemap_run_cb cb,
			void *arg)
{
	struct wproc *w = wfind(fd);
	uint64_t pg, run = 0;
	bool in = false;

	if (!w || !w->alive)
		return -ESRCH;
	W.scanned += end - start;
	for (pg = start; pg <= end; pg++) {
		bool res = pg < end && pg >= BASE && pg < BASE + N && w->pg[pg - BASE].map &&
			   w->pg[pg - BASE].resident;

		if (res && !in)
			run = pg;
		else if (!res && in)
			cb(run, pg, PMC_PRESENT, arg);
		in = res;
	}
	return 0;
}

static void s_close_pages(void *ctx, int fd) {}

static const struct engine_source world_source = {
	.is_target = s_true, .add_target = s_add, .del_target = s_del, .passes = s_passes,
	.forget = s_forget, .read_tgid = s_read_tgid, .pidfd_target = s_pidfd_target,
	.live_thread = s_live_thread, .read_layout = s_read_layout,
	.read_vmflags = s_read_vmflags, .read_start_brk = s_read_start_brk,
	.read_comm = s_read_comm, .read_uid = s_read_uid, .read_counters = s_read_counters,
	.read_rss = s_read_rss, .open_pages = s_open_pages, .scan_pages = s_scan_pages,
	.close_pages = s_close_pages,
};

/* --- records, and the world changing with them --- */

static void feed(const void *rec, size_t size)
{
	engine_apply_record(E, rec, size);
}

static void syscall_rec(pid_t pid, uint32_t nr, int64_t ret, uint64_t a0, uint64_t a1,
			uint64_t a2, uint64_t a3)
{
	struct ev_syscall ev = {
		.kind = EV_SYSCALL, .tgid = pid, .tid = pid, .nr = nr, .ret = ret,
		.args = { a0, a1, a2, a3 },
	};

	feed(&ev, sizeof(ev));
}

static void proc_rec(uint8_t kind, pid_t pid, pid_t ppid, uint8_t flags)
{
	struct ev_proc ev = { .kind = kind, .flags = flags, .tgid = pid, .tid = pid, .ptgid = ppid };

	snprintf(ev.comm, sizeof(ev.comm), "wl%d", pid);
	feed(&ev, sizeof(ev));
}

static uint32_t perms_of(int prot)
{
	return (prot & PROT_READ ? MP_READ : 0) | (prot & PROT_WRITE ? MP_WRITE : 0) |
	       (prot & PROT_EXEC ? MP_EXEC : 0);
}

/* mmap(MAP_FIXED) of n pages at page: anonymous, or private file pages from fpage. */
static void w_mmap(pid_t pid, uint64_t page, uint64_t n, int prot, bool file, uint64_t fpage)
{
	struct wproc *w = wfind(pid);
	uint32_t id = ++W.next_map;

	for (uint64_t i = 0; i < n; i++)
		*wpg(w, page + i) = (struct wpage){ .map = id, .perms = perms_of(prot), .file = file,
						    .fpage = fpage + i };
	syscall_rec(pid, SYS_MMAP, (int64_t)(page << PAGE_SHIFT_4K), page << PAGE_SHIFT_4K,
		    n << PAGE_SHIFT_4K, prot,
		    MAP_PRIVATE | MAP_FIXED | (file ? 0 : MAP_ANONYMOUS));
}

/* A user fault that succeeds (the test only scripts valid accesses, or says otherwise). */
static void w_fault(pid_t pid, uint64_t page, bool write)
{
	struct wproc *w = wfind(pid);
	struct wpage *p = wpg(w, page);
	struct ev_fault ev = {
		.kind = EV_FAULT, .flags = write ? EVF_WRITE : 0, .tgid = pid, .tid = pid,
		.addr = (page << PAGE_SHIFT_4K) + 123,
	};

	if (p->map && (p->perms & (write ? MP_WRITE : MP_READ)))
		p->resident = true;	/* else SIGSEGV: nothing changes */
	feed(&ev, sizeof(ev));
}

static void w_munmap(pid_t pid, uint64_t page, uint64_t n)
{
	struct wproc *w = wfind(pid);

	for (uint64_t i = 0; i < n; i++)
		*wpg(w, page + i) = (struct wpage){ 0 };
	syscall_rec(pid, SYS_MUNMAP, 0, page << PAGE_SHIFT_4K, n << PAGE_SHIFT_4K, 0, 0);
}

static void w_dontneed(pid_t pid, uint64_t page, uint64_t n)
{
	struct wproc *w = wfind(pid);

	for (uint64_t i = 0; i < n; i++)
		wpg(w, page + i)->resident = false;
	syscall_rec(pid, SYS_MADVISE, 0, page << PAGE_SHIFT_4K, n << PAGE_SHIFT_4K,
		    MADV_DONTNEED, 0);
}

/* mremap(old, on pages -> nn pages) to dst (dst == old: in place).  The moved pages keep
 * their state, growth is not resident; DONTUNMAP leaves the old range mapped, empty. */
static void w_mremap(pid_t pid, uint64_t old, uint64_t on, uint64_t nn, uint64_t dst,
		     bool dontunmap)
{
	struct wproc *w = wfind(pid);
	struct wpage moved[N], tmpl = *wpg(w, old);
	uint64_t keep = on < nn ? on : nn, i;
	int flags = dst != old ? MREMAP_MAYMOVE | MREMAP_FIXED : 0;

	for (i = 0; i < on; i++) {
		moved[i] = *wpg(w, old + i);
		if (dontunmap)
			wpg(w, old + i)->resident = false;
		else
			*wpg(w, old + i) = (struct wpage){ 0 };
	}
	for (i = 0; i < nn; i++) {
		struct wpage g = tmpl;

		if (i < keep) {
			g = moved[i];
		} else {
			g.resident = false;
			g.fpage = tmpl.fpage + i;
		}
		*wpg(w, dst + i) = g;
	}
	if (dontunmap)
		flags |= MREMAP_DONTUNMAP;
	syscall_rec(pid, SYS_MREMAP, (int64_t)(dst << PAGE_SHIFT_4K), old << PAGE_SHIFT_4K,
		    on << PAGE_SHIFT_4K, nn << PAGE_SHIFT_4K, flags);
}

/* brk to end (pages): the heap grows (pages not resident) or shrinks. */
static void w_brk(pid_t pid, uint64_t end)
{
	struct wproc *w = wfind(pid);
	uint64_t start = w->brk_start >> PAGE_SHIFT_4K;

	for (uint64_t pg = start; pg < BASE + N; pg++) {
		struct wpage *g = wpg(w, pg);

		if (pg < end && !g->heap)
			*g = (struct wpage){ .map = 1000000, .perms = MP_READ | MP_WRITE, .heap = true };
		else if (pg >= end && g->heap)
			*g = (struct wpage){ 0 };
	}
	syscall_rec(pid, SYS_BRK, (int64_t)(end << PAGE_SHIFT_4K), end << PAGE_SHIFT_4K, 0, 0, 0);
}

/* fork: anonymous pages are shared copy-on-write (resident in both), file PTEs are not
 * copied (the child faults them in again). */
static void w_fork(pid_t parent, pid_t child)
{
	struct wproc *p = wfind(parent), *c = wnew(child);

	c->brk_start = p->brk_start;
	for (int i = 0; i < N; i++) {
		c->pg[i] = p->pg[i];
		if (c->pg[i].file)
			c->pg[i].resident = false;
	}
	proc_rec(EV_FORK, child, parent, 0);
}

/* exec: a new address space, a text mapping whose first pages the loader read, a stack. */
static void w_exec(pid_t pid)
{
	struct wproc *w = wfind(pid);
	uint32_t text = ++W.next_map, stack = ++W.next_map;

	if (!w)		/* the walk execs only processes it made; and -O2 -Warray-bounds asks */
		abort();
	memset(w->pg, 0, sizeof(w->pg));
	w->brk_start = 0;
	for (int i = 0; i < 64; i++)
		w->pg[i] = (struct wpage){ .map = text, .perms = MP_READ | MP_EXEC, .file = true,
					   .fpage = i, .resident = i < 5 };
	for (int i = N - 32; i < N; i++)
		w->pg[i] = (struct wpage){ .map = stack, .perms = MP_READ | MP_WRITE,
					   .resident = i >= N - 3 };
	proc_rec(EV_EXEC, pid, 0, 0);
}

static void w_exit(pid_t pid)
{
	wfind(pid)->alive = false;
	proc_rec(EV_EXIT, pid, 0, 0);
}

/* --- checks --- */

/* Every page of pid's model against the world: mapped or not, resident or not. */
static void check_proc(pid_t pid, const char *when)
{
	struct wproc *w = wfind(pid);
	struct proc *p;

	engine_faults_flush(E);		/* as a reader sees it: after the drain */
	p = engine_find(E, pid);

	if (!p)
		fail_msg("%s: pid %d not in the model", when, pid);
	assert_true(p->ready);
	for (int i = 0; i < N; i++) {
		struct mapping *m = model_find(p, BASE + i);
		enum page_state st = model_page_state(p, BASE + i);
		bool res = w->pg[i].map && w->pg[i].resident;

		if (!!m != !!w->pg[i].map)
			fail_msg("%s: pid %d page %d: %s in the model, %s in the world", when, pid,
				 i, m ? "mapped" : "unmapped", w->pg[i].map ? "mapped" : "unmapped");
		if (m && m->perms != w->pg[i].perms)
			fail_msg("%s: pid %d page %d: perms %x, world %x", when, pid, i, m->perms,
				 w->pg[i].perms);
		if ((st == PS_RESIDENT) != res)
			fail_msg("%s: pid %d page %d: %s in the model, %s in the world", when, pid,
				 i, model_page_state_name(st), res ? "resident" : "not resident");
	}
}

/* As the engine's drain ends: the faults held back as a run, then what the records asked. */
static void batch_end(void)
{
	engine_faults_flush(E);
	scan_flush_pending(E);
}

/* The batch end and the check; exact: this batch needed no page read. */
static void step(pid_t pid, const char *when, bool exact)
{
	uint64_t before = W.scanned;

	batch_end();
	check_proc(pid, when);
	if (exact && W.scanned != before)
		fail_msg("%s: %" PRIu64 " pages scanned for a rule that is exact", when,
			 W.scanned - before);
}

static int setup(void **state)
{
	struct engine_opts o = { .mode = MODE_TRACE };
	struct features f = { .thp = THP_NEVER, .pagemap_scan = true };

	memset(&W, 0, sizeof(W));
	E = calloc(1, sizeof(*E));
	assert_non_null(E);
	assert_int_equal(table_init(E, &o, &f, &world_source, &W), 0);
	E->now_ns = 1;
	return 0;
}

static int teardown(void **state)
{
	table_fini(E);
	free(E);
	return 0;
}

/* A process the engine has not seen (started before the hooks): its first record makes it
 * modelled from the world at the batch end. */
static void start_proc(pid_t pid)
{
	struct wproc *w = wnew(pid);

	w->brk_start = (BASE + 1024) << PAGE_SHIFT_4K;
	for (int i = 0; i < 16; i++)
		w->pg[i] = (struct wpage){ .map = ++W.next_map, .perms = MP_READ | MP_WRITE,
					   .resident = i % 3 == 0 };
	w_fault(pid, BASE + 1, true);	/* the record of a pid not yet known */
	batch_end();
	check_proc(pid, "unknown pid modelled");
}

/* --- the cases --- */

static void test_unknown_pid(void **state)
{
	start_proc(100);
	assert_int_equal(model_page_state(engine_find(E, 100), BASE + 1), PS_RESIDENT);
}

static void test_anon_faults_exact(void **state)
{
	start_proc(100);
	w_mmap(100, BASE + 100, 50, PROT_READ | PROT_WRITE, false, 0);
	for (int i = 0; i < 50; i += 7)
		w_fault(100, BASE + 100 + i, i % 2);
	check_proc(100, "anon faults, before the batch end");
	step(100, "anon faults", true);
	/* A write to a read-only mapping is SIGSEGV: no page. */
	w_mmap(100, BASE + 200, 4, PROT_READ, false, 0);
	w_fault(100, BASE + 201, true);
	step(100, "write fault on a read-only mapping", false);
}

static void test_munmap_split(void **state)
{
	start_proc(100);
	w_mmap(100, BASE + 100, 64, PROT_READ | PROT_WRITE, false, 0);
	for (int i = 0; i < 64; i++)
		w_fault(100, BASE + 100 + i, true);
	step(100, "populated", false);
	w_munmap(100, BASE + 120, 10);
	check_proc(100, "munmap of the middle, before the batch end");
	step(100, "munmap of the middle", true);
	assert_int_equal(model_count_maps(engine_find(E, 100)) >= 2, 1);
}

static void test_madv_dontneed(void **state)
{
	start_proc(100);
	w_mmap(100, BASE + 300, 32, PROT_READ | PROT_WRITE, false, 0);
	for (int i = 0; i < 32; i++)
		w_fault(100, BASE + 300 + i, true);
	step(100, "populated", false);
	w_dontneed(100, BASE + 305, 20);
	check_proc(100, "MADV_DONTNEED, before the batch end");
	step(100, "MADV_DONTNEED", true);
	/* Touched again: each fault makes its page resident again. */
	w_fault(100, BASE + 310, false);
	step(100, "fault after MADV_DONTNEED", true);
}

static void test_mremap_move_grow(void **state)
{
	start_proc(100);
	w_mmap(100, BASE + 100, 40, PROT_READ | PROT_WRITE, false, 0);
	for (int i = 0; i < 40; i += 3)
		w_fault(100, BASE + 100 + i, true);
	step(100, "populated", false);
	/* Moved and grown: the pages travel, the growth is empty. */
	w_mremap(100, BASE + 100, 40, 70, BASE + 600, false);
	check_proc(100, "mremap move+grow, before the batch end");
	step(100, "mremap move+grow", false);
	/* Grown in place. */
	w_mremap(100, BASE + 600, 70, 90, BASE + 600, false);
	check_proc(100, "mremap grow in place, before the batch end");
	step(100, "mremap grow in place", false);
	/* Shrunk in place: the tail is unmapped. */
	w_mremap(100, BASE + 600, 90, 20, BASE + 600, false);
	check_proc(100, "mremap shrink, before the batch end");
	step(100, "mremap shrink", false);
	/* MREMAP_DONTUNMAP: the old range stays mapped, empty. */
	w_mremap(100, BASE + 600, 20, 20, BASE + 900, true);
	check_proc(100, "mremap DONTUNMAP, before the batch end");
	step(100, "mremap DONTUNMAP", false);
}

static void test_brk(void **state)
{
	uint64_t heap;

	start_proc(100);
	heap = wfind(100)->brk_start >> PAGE_SHIFT_4K;
	w_brk(100, heap + 40);
	for (int i = 0; i < 40; i += 5)
		w_fault(100, heap + i, true);
	check_proc(100, "brk growth, before the batch end");
	step(100, "brk growth", true);
	w_brk(100, heap + 12);
	check_proc(100, "brk shrink, before the batch end");
	step(100, "brk shrink", true);
}

static void test_file_fault_window(void **state)
{
	struct wproc *w;

	start_proc(100);
	w_mmap(100, BASE + 512, 256, PROT_READ, true, 0);
	step(100, "file mapping", false);
	/* A read fault maps cached neighbours too (fault-around, large folios): the engine
	 * must scan for them, and the world says which. */
	w = wfind(100);
	for (int i = 0; i < 16; i++)
		wpg(w, BASE + 512 + 40 + i)->resident = true;
	w_fault(100, BASE + 512 + 47, false);
	step(100, "file read fault with fault-around", false);
}

/* Faults at consecutive pages are applied as one run (rules.c).  Across mappings of other
 * permissions and an unmapped gap the model ends as page by page; every fault counts, in
 * the counters and in the heat; and a file run over a PMD boundary scans both PMDs'
 * windows (a window only for the run's last page would miss the first PMD's neighbours). */
static void test_fault_runs(void **state)
{
	struct wproc *w;
	struct proc *p;
	uint64_t before;

	start_proc(100);
	w_mmap(100, BASE + 100, 10, PROT_READ | PROT_WRITE, false, 0);
	w_mmap(100, BASE + 110, 10, PROT_READ, false, 0);
	w_mmap(100, BASE + 130, 10, PROT_READ | PROT_WRITE, false, 0);	/* 120..129: a gap */
	w_mmap(100, BASE + 1500, 100, PROT_READ, true, 0);		/* over BASE + 1536 */
	step(100, "mapped", false);
	p = engine_find(E, 100);
	before = p->faults;
	for (int i = 0; i < 40; i++)
		w_fault(100, BASE + 100 + i, true);
	check_proc(100, "a write run over four mappings and a gap");
	assert_int_equal(p->faults - before, 40);
	assert_true(heat_range(&p->heat, BASE + 100, BASE + 140, E->now_ns) >= 39.5f);
	step(100, "a write run", false);

	w = wfind(100);
	for (int i = 1500; i < 1600; i++)
		wpg(w, BASE + i)->resident = true;	/* all cached: fault-around maps them */
	for (int i = 1530; i < 1540; i++)
		w_fault(100, BASE + i, false);
	step(100, "a file read run over a PMD boundary", false);
}

static void test_fork_then_exec(void **state)
{
	start_proc(100);
	w_mmap(100, BASE + 100, 30, PROT_READ | PROT_WRITE, false, 0);
	w_mmap(100, BASE + 200, 30, PROT_READ, true, 0);
	for (int i = 0; i < 30; i += 2) {
		w_fault(100, BASE + 100 + i, true);
		w_fault(100, BASE + 200 + i, false);
	}
	step(100, "parent populated", false);
	w_fork(100, 101);
	batch_end();
	check_proc(101, "forked child");
	check_proc(100, "parent after fork");
	/* The child execs in the same batch as more faults of its parent. */
	w_fault(100, BASE + 101, true);
	w_exec(101);
	batch_end();
	check_proc(101, "child after exec");
	check_proc(100, "parent after the child's exec");
	/* Fork and exec in one batch, then the child's own records. */
	w_fork(100, 102);
	w_exec(102);
	w_mmap(102, BASE + 400, 8, PROT_READ | PROT_WRITE, false, 0);
	w_fault(102, BASE + 402, true);
	batch_end();
	check_proc(102, "fork+exec+mmap in one batch");
}

static void test_thread_fork_ignored(void **state)
{
	struct ev_proc ev = { .kind = EV_FORK, .flags = EVP_MAYBE_THREAD, .tgid = 150, .tid = 150,
			      .ptgid = 100 };

	start_proc(100);
	W.threads[W.nthreads++] = (typeof(W.threads[0])){ 150, 100 };
	feed(&ev, sizeof(ev));
	batch_end();
	assert_null(engine_find(E, 150));
}

static void test_exit_keeps_tombstone(void **state)
{
	struct proc *p;

	start_proc(100);
	w_mmap(100, BASE + 100, 10, PROT_READ | PROT_WRITE, false, 0);
	w_fault(100, BASE + 105, true);
	step(100, "before exit", true);
	w_exit(100);
	batch_end();
	p = engine_find(E, 100);
	assert_non_null(p);
	assert_true(p->exited);
	/* The last picture stays as it was. */
	wfind(100)->alive = true;	/* only so check_proc can compare */
	check_proc(100, "tombstone");
	/* A record of a new process that reused the pid replaces the tombstone. */
	memset(wfind(100)->pg, 0, sizeof(wfind(100)->pg));
	for (int i = 0; i < 4; i++)
		wfind(100)->pg[i] = (struct wpage){ .map = ++W.next_map, .perms = MP_READ,
						    .resident = true };
	w_fault(100, BASE + 2, false);
	batch_end();
	assert_false(engine_find(E, 100)->exited);
	check_proc(100, "pid reused");
}

/* A pend of nothing lists nothing: listed with no bits, the next pend of the same process
 * linked it to itself, and the batch end spun on it for ever (chunk mode, an exec flood). */
static void test_pend_nothing(void **state)
{
	struct proc *p;

	(void)state;
	start_proc(100);
	batch_end();
	p = engine_find(E, 100);
	assert_non_null(p);
	assert_null(E->pending);
	table_pend(E, p, 0);
	assert_null(E->pending);
	table_pend(E, p, PEND_SCAN);
	assert_ptr_equal(E->pending, p);
	assert_null(p->pending_next);
	batch_end();			/* returns, and the list is empty again */
	assert_null(E->pending);
}

/* Seeded random sequences on one process: after every batch the model is the world. */
static void test_random_sequences(void **state)
{
	char when[96];
	int op, round;

	rng_seed("test_random_sequences");
	start_proc(100);
	for (round = 0; round < 400; round++) {
		int nops = 1 + rng_under(6);

		for (op = 0; op < nops; op++) {
			uint64_t at = BASE + 32 + rng_under(N - 32 - 256), n = 1 + rng_under(128);
			struct wproc *w = wfind(100);

			switch (rng_under(7)) {
			case 0:
				w_mmap(100, at, n, rng_under(4) ? PROT_READ | PROT_WRITE : PROT_READ,
				       rng_under(3) == 0, rng_under(100));
				break;
			case 1:
				w_munmap(100, at, n);
				break;
			case 2:
				if (wpg(w, at)->map && !wpg(w, at)->heap)
					w_dontneed(100, at, 1 + rng_under(8));
				break;
			case 3: {
				/* mremap of a whole mapping (the kernel's rule: one VMA). */
				uint64_t s = at, e = at, dst = BASE + 32 + rng_under(N - 32 - 256);
				uint64_t nn;

				if (!wpg(w, at)->map || wpg(w, at)->heap)
					break;
				while (s > BASE && wpg(w, s - 1)->map == wpg(w, at)->map &&
				       wpg(w, s - 1)->perms == wpg(w, at)->perms &&
				       wpg(w, s - 1)->file == wpg(w, at)->file)
					s--;
				while (e + 1 < BASE + N && wpg(w, e + 1)->map == wpg(w, at)->map &&
				       wpg(w, e + 1)->perms == wpg(w, at)->perms &&
				       wpg(w, e + 1)->file == wpg(w, at)->file)
					e++;
				nn = 1 + rng_under(e - s + 32);
				if (e - s + 1 > 256 || nn > 256 || (dst < e + 1 && dst + nn > s))
					break;
				if (rng_under(3) == 0) {
					/* In place: growth needs the pages after it free. */
					for (dst = e + 1; dst < s + nn; dst++)
						if (dst >= BASE + N || wpg(w, dst)->map)
							break;
					if (dst < s + nn)
						break;
					dst = s;
				}
				/* whatever the destination held is unmapped by MREMAP_FIXED */
				w_mremap(100, s, e - s + 1, nn, dst, false);
				break;
			}
			case 4: {
				/* A run (a loop filling a buffer), over whatever lies there. */
				bool write = rng_under(2);

				for (uint64_t k = 0; k < n; k++)
					w_fault(100, at + k, write);
				break;
			}
			default:
				for (int k = 0; k < 8; k++)
					w_fault(100, at + rng_under(n), rng_under(2));
				break;
			}
		}
		snprintf(when, sizeof(when), "random round %d", round);
		check_proc(100, when);	/* every rule above is exact before any scan */
		step(100, when, false);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unknown_pid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_anon_faults_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_munmap_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_madv_dontneed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mremap_move_grow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_brk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_fault_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fault_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_then_exec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_fork_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_keeps_tombstone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pend_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_sequences, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
