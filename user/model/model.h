/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The page model: per process, the mappings (an interval tree) and one state per page.
 *
 * Page states are kept as process-wide page sets (resident, swapped, untracked); a page in
 * a mapping that is in none of them is not resident.  Memory is proportional to the runs of
 * equal state for sparse layouts and about one bit per page for dense fragmented ones
 * (CRoaring containers under user/lib/pageset.c).  Mappings carry only attributes, so moving,
 * splitting or relabelling a mapping never touches page state, and mremap moves page state
 * without touching the mappings' attributes.
 *
 * The model is data only: it never reads /proc, talks to the kernel or calls ncurses.  The
 * engine fills it; the UI and the JSON writer read it under model_lock().
 */
#ifndef MEVITOP_MODEL_H
#define MEVITOP_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/itree.h"
#include "lib/page.h"
#include "lib/pageset.h"
#include "lib/map_perms.h"
#include "model/share.h"

enum page_state {
	PS_NOT_RESIDENT,
	PS_RESIDENT,
	PS_SWAPPED,
	PS_UNTRACKED,
	PS_COUNT,
};

enum map_kind {
	MK_ANON,	/* private anonymous */
	MK_HEAP,	/* [heap] (brk) */
	MK_STACK,	/* [stack] */
	MK_FILE,	/* a file */
	MK_SHMEM,	/* shared anonymous, memfd, SysV shm, tmpfs */
	MK_VDSO,
	MK_VVAR,
	MK_VSYSCALL,
	MK_OTHER,	/* other [special] mappings */
	MK_COUNT,
};

/* struct mapping.flags */
#define MF_THP		(1u << 0)	/* a fault may map a whole PMD (THP eligible) */
#define MF_GROWSDOWN	(1u << 1)	/* grows down on faults below it (the main stack) */
#define MF_HUGETLB	(1u << 2)
#define MF_LOCKED	(1u << 3)	/* mlock'ed: new pages are populated at once */
#define MF_NEEDS_NAME	(1u << 4)	/* file mapping whose path is not known yet */
#define MF_NOHUGEPAGE	(1u << 5)	/* MADV_NOHUGEPAGE */
#define MF_HUGEPAGE	(1u << 6)	/* MADV_HUGEPAGE */
#define MF_UFFD		(1u << 7)	/* exact mode: registered with userfaultfd */
#define MF_PFNMAP	(1u << 8)	/* VM_PFNMAP/VM_IO: raw PFNs, pagemap never shows them */

struct mapping {
	struct itree_node node;		/* [start page, last page] */
	uint64_t offset;		/* file offset in bytes */
	uint64_t ino;
	/* Packed (a mapping is 80 bytes, not 104: 5,000 processes have ~140,000 of them):
	 * Linux's dev_t is 12 + 20 bits (MINORBITS); the tree node keeps its colour in a
	 * pointer's spare bit. */
	uint32_t dev_major : 12, dev_minor : 20;
	uint32_t perms : 8;		/* MP_READ | MP_WRITE | MP_EXEC | MP_SHARED */
	uint32_t kind : 8;		/* enum map_kind */
	uint32_t flags : 16;		/* MF_* */
	const char *path;		/* NULL for anonymous mappings; lib/strpool.h's */
};
_Static_assert(sizeof(struct mapping) == 80, "struct mapping is packed (see above)");

static inline uint64_t mapping_start(const struct mapping *m)
{
	return m->node.start;	/* page number */
}

static inline uint64_t mapping_end(const struct mapping *m)
{
	return m->node.last + 1;	/* page number, exclusive */
}

/* Heat: recent fault activity per block of pages, decaying exponentially. */
#define HEAT_BLOCK_SHIFT 4		/* 16 pages (64 KiB) per block */
#define HEAT_HALF_LIFE_NS 2000000000ULL

struct heat_entry {
	uint64_t block;			/* page >> HEAT_BLOCK_SHIFT, +1 (0 = empty) */
	float value;
	uint64_t stamp_ns;
};

struct heat {
	struct heat_entry *slots;
	uint32_t cap, used;
	/* One more on each change of the table (heat.c's, which owns it; never reset): a view
	 * that kept a copy tells from it alone that the heat is the same (model_shown). */
	uint64_t gen;
};

struct proc {
	pid_t pid;
	pid_t ppid;			/* the parent (fork record or /proc/PID/stat), 0 unknown */
	char comm[16];
	uid_t uid;
	struct itree maps;
	struct pageset *set[PS_COUNT];	/* set[PS_NOT_RESIDENT] is unused (NULL) */
	uint64_t mapped_pages;
	uint64_t brk_start;		/* heap start (bytes), 0 if unknown */
	struct heat heat;
	struct share *share;		/* the last sharing pass (model/share.h), or NULL */
	/* What a walk over the mappings adds up to, kept with the generation it was made at:
	 * an idle process's refresh then walks no tree (5,000 processes: a quarter of the
	 * refresh was these walks).  model.c bumps gen on every change to the mappings or
	 * page sets; code changing p->set[] itself calls model_changed(). */
	uint64_t gen;
	struct proc_figs {
		uint64_t stamp;		/* gen + 1 when made (0: never) */
		size_t layout_bytes;	/* the mappings, their paths and the page sets */
		uint64_t anon_resident;	/* resident pages of private anonymous mappings */
		uint64_t counts_stamp;	/* the same for counts: no mapping walk for them */
		uint64_t counts[3];	/* pages in each tracked state (model_totals) */
	} figs;
	struct proc_kinds *kinds;	/* model_kinds' cache, made when first asked, or NULL */
	struct proc_fmaps *fmaps;	/* the files side's list of its mapped files, or NULL */

	/* Counters for views: cumulative, and the rate over the last interval. */
	uint64_t faults;
	uint64_t faults_prev;
	double fault_rate;

	/* Lifecycle. */
	bool exited;
	bool ready;			/* initial scan done */
	bool reported_exit;
	uint64_t exited_ns;		/* CLOCK_MONOTONIC when the exit was seen */
	/* Which process this is, beyond its pid: numbered by the table that adds it (the
	 * engine's: 1, 2, ...), kept by copies, 0 if unknown (a replay).  A view remembering a
	 * process by pid tells a new process given that pid apart by it. */
	uint64_t serial;

	/* Engine bookkeeping (the model does not interpret these). */
	struct proc *hnext;		/* pid hash chain */
	struct proc *pending_next;	/* engine's batch-end work list */
	uint32_t pending;		/* engine flags */
	void *engine;			/* engine-private per-process state */
};

/* --- mappings --- */

struct mapping_attrs {
	uint64_t offset;
	uint64_t ino;
	uint32_t dev_major, dev_minor;
	uint32_t perms;
	uint32_t flags;
	enum map_kind kind;
	const char *path;		/* copied; NULL for anonymous */
};

struct proc *proc_new(pid_t pid);
void proc_free(struct proc *p);
/* Drops every mapping and page (exec). */
void proc_reset(struct proc *p);
/* A copy of p's mappings and pages under another pid (fork). */
struct proc *proc_clone(const struct proc *p, pid_t pid);

/* Inserts [start, end) (pages), replacing whatever overlapped (MAP_FIXED semantics).  Page
 * state in the range becomes not resident. */
int model_map(struct proc *p, uint64_t start, uint64_t end, const struct mapping_attrs *a);
/* Like model_map but keeps page state (re-reading /proc/PID/maps, relabelling). */
int model_map_keep(struct proc *p, uint64_t start, uint64_t end, const struct mapping_attrs *a);
/* Forgets every mapping but keeps page states (before re-reading the layout). */
void model_clear_layout(struct proc *p);
/* Removes [start, end): mappings are trimmed or split, pages forgotten. */
void model_unmap(struct proc *p, uint64_t start, uint64_t end);
/* mremap: mappings and page states of [old, old+old_len) move to new; the part beyond
 * old_len (growth) is not resident.  keep_old leaves the old mappings in place without
 * pages (MREMAP_DONTUNMAP). */
int model_remap(struct proc *p, uint64_t old, uint64_t old_len, uint64_t new, uint64_t new_len,
		bool keep_old);
/* Changes permissions (mprotect) or flags of [start, end), splitting mappings. */
int model_protect(struct proc *p, uint64_t start, uint64_t end, uint32_t perms);
int model_set_flags(struct proc *p, uint64_t start, uint64_t end, uint32_t set, uint32_t clear);
/* Grows a mapping downward to `page` (stack growth). */
void model_grow_down(struct proc *p, struct mapping *m, uint64_t page);
/* Extends/shrinks a mapping's end (brk). */
int model_set_end(struct proc *p, struct mapping *m, uint64_t end);

struct mapping *model_find(const struct proc *p, uint64_t page);
/* First mapping that starts at or after page. */
struct mapping *model_find_ge(const struct proc *p, uint64_t page);
struct mapping *model_first(const struct proc *p);
struct mapping *model_next(const struct mapping *m);
struct mapping *model_heap(const struct proc *p);
size_t model_count_maps(const struct proc *p);

/* --- pages --- */

/* Sets every page of [start, end) to one state (clipped to nothing: caller clips). */
void model_set_state(struct proc *p, uint64_t start, uint64_t end, enum page_state s);
void model_set_page(struct proc *p, uint64_t page, enum page_state s);
enum page_state model_page_state(const struct proc *p, uint64_t page);
/* Pages of [start, end) in state s (s != PS_NOT_RESIDENT). */
uint64_t model_count(const struct proc *p, enum page_state s, uint64_t start, uint64_t end);
/* Totals over the process (mapped and each state), exact; from struct proc's figs. */
void model_totals(const struct proc *p, uint64_t counts[PS_COUNT]);

/* Replaces the states of [start, end) with a scan result: runs of present or swapped pages
 * in ascending order.  Returns how many pages changed state (drift when reconciling).  With
 * heat_now_ns, pages that became resident add to the heat (scans that stand in for faults). */
struct scan_run {
	uint64_t start, end;
	enum page_state state;
};
uint64_t model_apply_scan(struct proc *p, uint64_t start, uint64_t end,
			  const struct scan_run *runs, size_t n, uint64_t heat_now_ns);

/* Runs of one mapping that are not PS_NOT_RESIDENT, merged and sorted, clipped to [from,
 * to).  Calls fn(start, end, state) for each; stops if fn returns non-zero. */
typedef int (*model_run_fn)(uint64_t start, uint64_t end, enum page_state s, void *arg);
int model_runs(const struct proc *p, uint64_t from, uint64_t to, model_run_fn fn, void *arg);

/* The ranges of [from, to) where a's page states differ from b's (model_diff.c): fn gets
 * each with a's state, in address order; stops if fn returns non-zero.  0 or -ENOMEM.
 * Only mapped ranges have runs: clip [from, to) to mappings of both. */
int model_diff(const struct proc *a, const struct proc *b, uint64_t from, uint64_t to,
	       model_run_fn fn, void *arg);

/* The page sets of p changed behind the model's back (a decoder patching them): the
 * cached figures are made again when next asked. */
static inline void model_changed(struct proc *p)
{
	p->gen++;
}
/* Bytes of p's mappings (with their paths) and page sets; resident pages of its private
 * anonymous mappings (map_kind_private_anon).  From struct proc's figs: a walk only when
 * p changed since the last call.  The cache is written: call under the lock p is read
 * under. */
size_t model_layout_bytes(const struct proc *p);
uint64_t model_anon_resident(const struct proc *p);

/* Per kind of mapping: pages mapped (at [PS_NOT_RESIDENT]) and in each state; and the `cap`
 * mappings with the most resident pages (none with 0), most first, of equal ones the lower
 * address first.  Valid until p changes; NULL on ENOMEM.  Cached as the figs are: call
 * under the lock p is read under. */
struct model_top {
	const struct mapping *m;
	uint64_t resident;
};
struct proc_kinds {
	uint64_t stamp;			/* p->gen + 1 when counted */
	uint64_t pages[MK_COUNT][PS_COUNT];
	uint32_t cap, ntop;
	struct model_top top[];
};
const struct proc_kinds *model_kinds(const struct proc *p, uint32_t cap);

/* The files a process maps (regular and shmem), one entry per run of mappings of one file,
 * in address order: kept with the generation it was made at, so the files side's mapped_by
 * walks only the mappings of processes that changed.  path: the first mapping's (strpool),
 * valid while the mappings are, which stamp == gen + 1 guarantees. */
struct proc_fmap {
	uint64_t dev, ino;
	const char *path;
};
struct proc_fmaps {
	uint64_t stamp;			/* p->gen + 1 when made */
	uint32_t n, cap;
	struct proc_fmap v[];
};

/* --- heat --- */
void heat_add(struct heat *h, uint64_t page, float amount, uint64_t now_ns);
/* A page each of [s, e) into its block: one add per block, as heat_add a page at a time. */
void heat_add_range(struct heat *h, uint64_t s, uint64_t e, uint64_t now_ns);
/* Every page of a that is not in b, a page each into its block: a file's adds (a = now,
 * b = before) or evictions (the other way round), for the terminal's and the web's file
 * heatmaps. */
void heat_add_diff(struct heat *h, const struct pageset *a, const struct pageset *b,
		   uint64_t now_ns);
/* Sum of decayed heat over the blocks overlapping [start, end). */
float heat_range(const struct heat *h, uint64_t start, uint64_t end, uint64_t now_ns);
void heat_prune(struct heat *h, uint64_t now_ns);
void heat_free(struct heat *h);
/* heat_range over each mapping of p at once (out[i]: the i-th in address order, n of
 * them), in one pass over the heat table: a snapshot's cost stays the table's size, not
 * mappings times table.  0 or -ENOMEM. */
int model_heat_per_mapping(const struct proc *p, uint64_t now_ns, float *out, size_t n);
/* The entry of the block holding page, or NULL. */
const struct heat_entry *heat_find(const struct heat *h, uint64_t page);
/* One entry's value decayed to now_ns. */
float heat_entry_value(const struct heat_entry *e, uint64_t now_ns);
/* The block holding page holds exactly value from now_ns on (replay).  0 or -ENOMEM. */
int heat_set(struct heat *h, uint64_t page, float value, uint64_t now_ns);
/* dst (empty) becomes a copy of src.  0 or -ENOMEM (dst stays empty). */
int heat_copy(struct heat *dst, const struct heat *src);

/* --- what a view shows --- */

/*
 * What a view of p shows can have changed only if this did: a web stream copies a process
 * under the engine's lock only when the process's shown key differs from the one its last
 * copy was taken with (out/web_answer.c), and a key equal by mistake is a stale page.  So
 * it is made of what already changes on every write rather than of bumps the engine would
 * have to add on each of its paths: the generations the model keeps itself (gen: every
 * change of the mappings and page sets, scans, events and healing rescans alike, since
 * they all go through model.c or call model_changed; heat.gen: heat.c's every change), the
 * sharing pass the figures are of (one pass a process a tick: its start time names it),
 * and the few fields the engine sets itself, by value.  The time is not in it: the heat a
 * view shows decays without a write, so it is read again at each answer's time.
 */
struct proc_shown {
	uint64_t gen, heat_gen;
	uint64_t share_at_ns;		/* p->share's pass (its start) */
	pid_t ppid;
	bool share, exited;
	char comm[16];
};
/* The key of what p shows now.  Under the lock p is read under. */
void model_shown(const struct proc *p, struct proc_shown *out);
bool model_shown_same(const struct proc_shown *a, const struct proc_shown *b);

/* --- memory accounting --- */
size_t proc_bytes(const struct proc *p);

const char *map_kind_name(enum map_kind k);
const char *model_page_state_name(enum page_state s);
/* "rw-p" as in /proc/PID/maps. */
void mapping_perms_str(uint32_t perms, char out[5]);
enum map_kind map_kind_classify(const char *path, uint32_t perms, bool anon_shared);
/* Private anonymous memory: anonymous, heap, stack (shared anonymous is MK_SHMEM). */
bool map_kind_private_anon(enum map_kind k);

#endif
