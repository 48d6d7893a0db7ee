// SPDX-License-Identifier: GPL-2.0
/*
 * The page cache, file by file (doc/pagecache.md).
 *
 * fc_walk: one pass over every superblock (sb->s_list, reached from the reader's root
 * mount) and each one's inode list (sb->s_inodes), writing a record for every inode with
 * pages in the page cache.  The page cache only holds pages of inodes in memory, and every
 * inode in memory is on its superblock's s_inodes, so the pass is complete: closed files
 * cached before mevitop started, deleted files still held, memfds and SysV segments (the
 * internal shm mount's superblock is on s_list like any other).  No lock is taken: the
 * program runs inside rcu_read_lock() (tracepoints do) and both superblocks and inodes are freed
 * after an RCU grace period, so every node read stays valid memory; an inode unlinked from
 * the list meanwhile (list_del_init points it at itself) cuts that superblock short, which
 * the record stream says (FCR_CUT) and the tracepoints below make good.
 *
 * BPF iterators (iter/task, iter/bpf_map_elem) do not load on this kind of kernel (EPERM,
 * like fentry), so the pass is driven from a tracepoint the reader fires itself:
 * task:task_rename, i.e. prctl(PR_SET_NAME) with its own name.  Each firing walks at most
 * FC_STEPS_PER_CALL list nodes and writes at most FC_RECS_PER_CALL records to a ring
 * buffer the reader drains between firings; a batch that does not fit is undone (the state
 * is restored from its copy at the batch's start) and runs again at the next firing.
 *
 * fc_add / fc_del: the filemap tracepoints, one per folio added to or deleted from a
 * file's page cache, summed per inode in a per-CPU hash (no record per page: the reader
 * takes the entries that changed at each refresh).  shmem (tmpfs, memfd, SysV) adds do
 * not fire mm_filemap_add_to_page_cache: the reader re-walks the shmem superblocks.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "fcache_rec.h"

char LICENSE[] SEC("license") = "GPL";

#define TMPFS_MAGIC_ 0x01021994

/* Set by the reader before each pass. */
__u32 walk_mode;
__u32 walk_tgid;
/* Testing only (MEVITOP_TEST_WALK_CUT, user/kernel/fcache_bpf.c): cut every superblock after
 * this many inodes with pages, as if the next one left the list under the cursor.  A real
 * cut needs an inode evicted between two firings, which no test can time. */
__u32 test_cut_after;
struct fc_walk_state st, st_saved;
struct fc_rec recs[FC_RECS_PER_CALL];

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} fc_out SEC(".maps");

/* Not preallocated: an LRU map is, and preallocating 65,536 per-CPU values is 65,536
 * per-CPU allocations at load (~60 ms of the start's CPU with 2 CPUs here, issue 24).
 * Allocated on an inode's first event after a take instead; when full, an update fails
 * and its count is lost as an LRU's eviction lost it: fc_events tells (below). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct fc_key);
	__type(value, struct fc_delta);
} fc_deltas SEC(".maps");

static __always_inline int emit(__u32 kind, __u32 dev, __u64 ino, __u64 nrpages, __u64 size,
				__u32 gen, __u16 mode, __u16 nlink, __u64 inode, __u32 xa_flags)
{
	__u32 i = st.nrec;
	struct fc_rec *r;

	if (i >= FC_RECS_PER_CALL)
		return -1;
	r = &recs[i];
	r->kind = kind;
	r->dev = dev;
	r->ino = ino;
	r->nrpages = nrpages;
	r->size = size;
	r->gen = gen;
	r->mode = mode;
	r->nlink = nlink;
	r->inode = inode;
	r->xa_flags = xa_flags;
	r->pad = 0;
	st.nrec = i + 1;
	return 0;
}

/* The superblock after sb on s_list, skipping the list head (super_blocks, which is no
 * superblock: its would-be s_root does not point back at it). */
static __always_inline void advance_sb(void)
{
	struct super_block *sb = (void *)st.cur_sb;
	int k;

	st.cur_node = 0;
	st.sb_inodes = 0;
	for (k = 0; k < 2; k++) {
		struct list_head *next = BPF_CORE_READ(sb, s_list.next);
		struct super_block *nsb;
		struct dentry *root;

		if (!next) {
			st.done = 1;
			return;
		}
		nsb = (void *)next - bpf_core_field_offset(struct super_block, s_list);
		if ((__u64)nsb == st.first_sb) {
			st.done = 1;
			return;
		}
		st.cur_sb = (__u64)nsb;
		root = BPF_CORE_READ(nsb, s_root);
		if (root && BPF_CORE_READ(root, d_sb) == nsb)
			return;
		sb = nsb;
	}
	st.done = 1;	/* two non-superblocks in a row: the list is not what we think */
}

static __always_inline bool wanted(struct super_block *sb)
{
	if (walk_mode == FC_WALK_SHMEM)
		return BPF_CORE_READ(sb, s_magic) == TMPFS_MAGIC_;
	return true;
}

static int step(__u32 i, void *ctx)
{
	struct super_block *sb = (void *)st.cur_sb;
	struct list_head *node = (void *)st.cur_node, *next;
	struct inode *inode;
	__u64 nrpages;

	if (st.done)
		return 1;
	st.steps++;
	if (!node) {
		if (!wanted(sb)) {
			advance_sb();
			return 0;
		}
		if (emit(FCR_SB, BPF_CORE_READ(sb, s_dev), BPF_CORE_READ(sb, s_magic), 0, 0, 0,
			 0, 0, (__u64)sb, 0))
			return 1;
		st.sbs++;
		st.cur_node = (__u64)BPF_CORE_READ(sb, s_inodes.next);
		if (!st.cur_node)
			advance_sb();
		return 0;
	}
	if (node == &sb->s_inodes) {
		advance_sb();
		return 0;
	}
	inode = (void *)node - bpf_core_field_offset(struct inode, i_sb_list);
	nrpages = BPF_CORE_READ(inode, i_data.nrpages);
	if (nrpages) {
		__u32 nlink = BPF_CORE_READ(inode, __i_nlink);

		if (emit(FCR_INODE, BPF_CORE_READ(sb, s_dev), BPF_CORE_READ(inode, i_ino), nrpages,
			 BPF_CORE_READ(inode, i_size), BPF_CORE_READ(inode, i_generation),
			 BPF_CORE_READ(inode, i_mode), nlink > 0xffff ? 0xffff : nlink,
			 (__u64)inode, BPF_CORE_READ(inode, i_data.i_pages.xa_flags)))
			return 1;
		st.inodes++;
		st.sb_inodes++;
	}
	next = BPF_CORE_READ(node, next);
	if (!next || next == node || (test_cut_after && st.sb_inodes >= test_cut_after)) {
		/* Unlinked from the list while we stood on it (list_del_init). */
		st.cuts++;
		if (emit(FCR_CUT, BPF_CORE_READ(sb, s_dev), st.steps, 0, 0, 0, 0, 0, (__u64)sb, 0))
			return 1;
		advance_sb();
		return 0;
	}
	st.cur_node = (__u64)next;
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(fc_walk, struct task_struct *task, const char *comm)
{
	__u32 len;

	/* Only the reader's own prctl(PR_SET_NAME) while it walks (walk_tgid) drives this. */
	if (!walk_tgid || bpf_get_current_pid_tgid() >> 32 != walk_tgid || st.done)
		return 0;
	if (!st.first_sb) {
		struct task_struct *t = bpf_get_current_task_btf();
		struct super_block *sb = BPF_CORE_READ(t, fs, root.mnt, mnt_sb);

		if (!sb) {
			st.done = 1;
			return 0;
		}
		st.first_sb = st.cur_sb = (__u64)sb;
		st.cur_node = 0;
	}
	st_saved = st;
	st.nrec = 0;
	bpf_loop(FC_STEPS_PER_CALL, step, NULL, 0);
	len = st.nrec;
	/* A bound the verifier sees (clang folds a plain comparison away): n <= 1023. */
	asm volatile("%0 &= 0x3ff" : "+r"(len));
	len *= sizeof(struct fc_rec);
	if (len && bpf_ringbuf_output(&fc_out, recs, len, BPF_RB_NO_WAKEUP)) {
		st = st_saved;		/* no room: the reader drains, this batch runs again */
		st.full++;
	}
	return 0;
}

/* --- fc_info: names and memory cgroups of inodes by address --- */

__u32 info_tgid, info_n;
struct fc_info_req info_req[FC_INFO_MAX];
struct fc_info info_out[FC_INFO_MAX];

/* The xarray walk for the first cached folio of each request, as a state machine one
 * bpf_loop drives (a bounded loop inside info_one is too much for the verifier): the slots
 * looked at depth first, shadow entries of evicted pages skipped, FC_XA_STEPS per request. */
__u32 xw_req, xw_steps, xw_idx;
__u64 xw_node;		/* 0: start at the request's xa_head */

static __always_inline void memcg_of(struct fc_info *o, struct folio *folio)
{
	__u64 md;
	struct mem_cgroup *memcg;

	if (!bpf_core_field_exists(folio->memcg_data))
		return;
	md = BPF_CORE_READ(folio, memcg_data);
	memcg = (void *)(md & ~7ULL);
	/* Page cache folios hold a plain mem_cgroup pointer (no KMEM/OBJEXTS bit). */
	if (memcg && !(md & 3)) {
		o->cgid = BPF_CORE_READ(memcg, css.cgroup, kn, id);
		if (o->cgid)
			o->flags |= FCI_F_MEMCG;
	}
}

static __always_inline int xa_next_req(void)
{
	xw_req++;
	xw_steps = xw_idx = 0;
	xw_node = 0;
	return xw_req >= info_n || xw_req >= FC_INFO_MAX;
}

static int xa_step(__u32 i, void *ctx)
{
	__u32 r = xw_req;
	struct fc_info *o;
	struct xa_node *node;
	__u64 e;

	if (r >= info_n || r >= FC_INFO_MAX)
		return 1;
	asm volatile("%0 &= 0x3f" : "+r"(r));
	o = &info_out[r];
	if (o->status != FCI_OK || xw_steps++ >= FC_XA_STEPS)
		return xa_next_req();
	if (!xw_node) {
		struct inode *inode = (void *)info_req[r].inode;

		e = (__u64)BPF_CORE_READ(inode, i_mapping, i_pages.xa_head);
		if (!e || (e & 1) || ((e & 3) == 2 && e <= 4096))
			return xa_next_req();
		if ((e & 3) != 2) {		/* one folio at index 0, no node */
			memcg_of(o, (void *)e);
			return xa_next_req();
		}
		xw_node = e - 2;
		xw_idx = 0;
		return 0;
	}
	node = (void *)xw_node;
	if (xw_idx >= 64) {			/* this node done: back to the parent's next */
		struct xa_node *parent = BPF_CORE_READ(node, parent);

		if (!parent)
			return xa_next_req();
		xw_idx = BPF_CORE_READ(node, offset) + 1;
		xw_node = (__u64)parent;
		return 0;
	}
	e = 0;
	bpf_probe_read_kernel(&e, sizeof(e), &node->slots[xw_idx & 63]);
	if (!e || (e & 1) || ((e & 3) == 2 && e <= 4096)) {
		xw_idx++;			/* empty, a shadow, a sibling or retry entry */
		return 0;
	}
	if ((e & 3) == 2) {
		xw_node = e - 2;
		xw_idx = 0;
		return 0;
	}
	memcg_of(o, (void *)e);
	return xa_next_req();
}

static int info_one(__u32 i, void *ctx)
{
	struct fc_info_req *rq;
	struct fc_info *o;
	struct inode *inode;
	struct dentry *d;
	struct hlist_node *alias;
	__u32 k;

	if (i >= FC_INFO_MAX || i >= info_n)
		return 1;
	/* A bound on the register the access uses (clang checks a copy): i <= 63. */
	asm volatile("%0 &= 0x3f" : "+r"(i));
	rq = &info_req[i];
	o = &info_out[i];
	o->flags = o->depth = o->rdev = 0;
	o->cgid = 0;
	inode = (void *)rq->inode;
	if (BPF_CORE_READ(inode, i_ino) != rq->ino || BPF_CORE_READ(inode, i_sb, s_dev) != rq->dev) {
		o->status = FCI_GONE;
		return 0;
	}
	o->status = FCI_OK;
	o->rdev = BPF_CORE_READ(inode, i_rdev);
	alias = BPF_CORE_READ(inode, i_dentry.first);
	if (!alias)
		o->flags |= FCI_F_NODENTRY;
	d = alias ? (void *)alias - bpf_core_field_offset(struct dentry, d_u.d_alias) : NULL;
	if (d && !BPF_CORE_READ(d, d_hash.pprev))
		o->flags |= FCI_F_UNHASHED;
	for (k = 0; d && k < FC_DEPTH; k++) {
		struct dentry *parent = BPF_CORE_READ(d, d_parent);
		const unsigned char *name = BPF_CORE_READ(d, d_name.name);
		long n = bpf_probe_read_kernel_str(o->comp[k], FC_COMP, name);

		if (n < 0)
			break;
		if (n == FC_COMP && BPF_CORE_READ(d, d_name.len) >= FC_COMP)
			o->flags |= FCI_F_TRUNC;
		o->depth = k + 1;
		if (!parent || parent == d) {
			o->flags |= FCI_F_ROOT;
			break;
		}
		d = parent;
	}
	return 0;
}

/* Driven like fc_walk, by the reader's own prctl(PR_SET_NAME), when info_tgid is set. */
SEC("tp_btf/task_rename")
int BPF_PROG(fc_info, struct task_struct *task, const char *comm)
{
	if (!info_tgid || bpf_get_current_pid_tgid() >> 32 != info_tgid)
		return 0;
	bpf_loop(FC_INFO_MAX, info_one, NULL, 0);
	xw_req = xw_steps = xw_idx = 0;
	xw_node = 0;
	bpf_loop(FC_INFO_MAX * (FC_XA_STEPS + 1), xa_step, NULL, 0);
	return 0;
}

/* Pages added + deleted + dirtied, every event, per CPU: the reader compares them with what it took
 * from fc_deltas, which loses counts when more inodes change in a refresh than it holds
 * (drop_caches, a big rm): a shortfall means lost counts, made good by a full walk. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} fc_events SEC(".maps");

enum fc_event { FC_ADD, FC_DEL, FC_DIRTY };

static __always_inline void account(struct folio *folio, struct address_space *mapping,
				    enum fc_event what)
{
	struct inode *host;
	struct fc_key k = {};
	struct fc_delta *v, zero = {};
	__u64 nr = 1;

	if (!mapping)
		return;
	host = mapping->host;
	if (!host)
		return;
	/* folio_nr_pages(): a large folio keeps its order in the low byte of _flags_1. */
	if (folio->flags.f & (1UL << bpf_core_enum_value(enum pageflags, PG_head)))
		nr = 1UL << (folio->_flags_1 & 0xff);
	k.ino = host->i_ino;
	k.dev = host->i_sb->s_dev;
	{
		__u32 z = 0;
		__u64 *ev = bpf_map_lookup_elem(&fc_events, &z);

		if (ev)
			*ev += nr;
	}
	v = bpf_map_lookup_elem(&fc_deltas, &k);
	if (v && v->ts && what == FC_DIRTY) {
		/* The inode's entry on this CPU has its nrpages, which dirtying does not
		 * move: the count alone (a write loop dirties page after page, ~200 ns a
		 * run with the clock read and the stores). */
		v->dirtied += nr;
		return;
	}
	if (!v) {
		bpf_map_update_elem(&fc_deltas, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&fc_deltas, &k);
		if (!v)
			return;
	}
	if (what == FC_ADD) {
		v->adds += nr;
		v->nrpages = mapping->nrpages;		/* counted before the tracepoint */
	} else if (what == FC_DEL) {
		v->dels += nr;
		v->nrpages = mapping->nrpages - nr;	/* counted after it */
	} else {
		v->dirtied += nr;
		v->nrpages = mapping->nrpages;		/* a page already cached */
	}
	v->ts = bpf_ktime_get_ns();
	v->size = host->i_size;
	v->gen = host->i_generation;
	v->mode = host->i_mode;
	v->inode = (__u64)host;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(fc_add, struct folio *folio)
{
	account(folio, folio->mapping, FC_ADD);
	return 0;
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(fc_del, struct folio *folio)
{
	account(folio, folio->mapping, FC_DEL);
	return 0;
}

/*
 * A cached page made dirty: a write or a shared mapping's store into a page already cached
 * fires neither filemap event, and cachestat's dirty count moves only here.  The kernel
 * fires it from folio_account_dirtied() in __folio_mark_dirty(), under the xarray's lock
 * and just before it sets the DIRTY mark cachestat counts, and only for a folio that was
 * clean (folio_test_set_dirty() first), so once per page dirtied.  shmem and the swap cache
 * mark nothing dirty in the xarray (noop_dirty_folio) and fire nothing.
 */
SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(fc_dirty, struct folio *folio, struct address_space *mapping)
{
	account(folio, mapping, FC_DIRTY);
	return 0;
}
