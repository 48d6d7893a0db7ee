// SPDX-License-Identifier: GPL-2.0
/* The page cache walk and the filemap tracepoint counts (fcache_bpf.h, bpf/fcache.bpf.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kernel/fcache_bpf.h"
#include "kernel/kfeatures.h"
#include "lib/log.h"
#include "fcache.skel.h"

#define TAKE_BATCH 4096
/*
 * The walk's ring: fcache_bpf_walk() drains it after every firing, and a firing writes one
 * record of at most FC_RECS_PER_CALL records (56 KiB), so it never holds more than one.
 * 128 KiB, not the 1 MiB the BPF side declares: libbpf maps a ring's data twice, and the
 * reader's position goes round all of it, so the 1 MiB ring was 2 MiB of mevitop's RSS
 * (issue 24: memory at 5,000 processes).  A record that finds no room is written again
 * after the drain (st.full), never lost.
 */
#define WALK_RING_BYTES (128u << 10)
_Static_assert(FC_RECS_PER_CALL * sizeof(struct fc_rec) + 8 <= WALK_RING_BYTES / 2,
	       "the walk's ring holds a firing's record twice over");

struct walk_ctx {
	fcbpf_rec_fn fn;
	void *ctx;
	int err;
};

struct fcbpf {
	struct fcache_bpf *skel;
	struct bpf_link *walk;
	struct bpf_link *info;		/* NULL: names and memcgs from the kernel unavailable */
	struct bpf_link *add, *del;
	struct bpf_link *dirty;		/* NULL: dirtied pages not counted */
	struct ring_buffer *out;
	struct walk_ctx wctx;		/* the walk under way (on_batch's context) */
	int ncpus;
	struct fc_key *keys;		/* TAKE_BATCH */
	struct fc_delta *vals;		/* TAKE_BATCH * ncpus */
	unsigned int walks, full_walks;	/* walks made so far, and full ones of them */
	unsigned int cut_after, cut_first, cut_count;	/* MEVITOP_TEST_WALK_CUT */
	bool cut_full;			/* ... counting full walks only */
};

uint64_t fcache_bpf_dev(uint32_t kdev)
{
	return makedev(kdev >> 20, kdev & 0xfffff);
}

/* Ring buffer records are whole batches of struct fc_rec. */
static int on_batch(void *ctx, void *data, size_t len)
{
	struct walk_ctx *w = ctx;
	size_t off;

	for (off = 0; off + sizeof(struct fc_rec) <= len; off += sizeof(struct fc_rec)) {
		struct fc_rec r;

		memcpy(&r, (char *)data + off, sizeof(r));
		w->err = w->fn(w->ctx, &r);
		if (w->err)
			return w->err;
	}
	return 0;
}

void fcache_bpf_close(struct fcbpf *b)
{
	if (!b)
		return;
	bpf_link__destroy(b->dirty);
	bpf_link__destroy(b->add);
	bpf_link__destroy(b->del);
	bpf_link__destroy(b->walk);
	bpf_link__destroy(b->info);
	ring_buffer__free(b->out);
	fcache_bpf__destroy(b->skel);
	free(b->keys);
	free(b->vals);
	free(b);
}

/*
 * Testing only (doc/testing.md), so the tests see what a cut walk and a lost delta leave:
 * MEVITOP_TEST_WALK_CUT=K,FIRST,COUNT[,full] cuts every superblock after K inodes with pages
 * in walks FIRST .. FIRST+COUNT-1, counted from 1 (with ",full", full walks only: the shmem
 * walks are left whole); MEVITOP_TEST_FC_DELTAS=N makes the delta table N inodes.  Anything
 * malformed leaves them off.
 */
static void test_switches(struct fcbpf *b, bool tracepoints)
{
	const char *env = getenv("MEVITOP_TEST_WALK_CUT");
	char full[8] = "";
	unsigned int n;

	if (env) {
		int got = sscanf(env, "%u,%u,%u,%7s", &b->cut_after, &b->cut_first, &b->cut_count,
				 full);

		b->cut_full = got == 4 && !strcmp(full, "full");
		if (got < 3 || (got == 4 && !b->cut_full))
			b->cut_after = 0;
	}
	env = getenv("MEVITOP_TEST_FC_DELTAS");
	if (tracepoints && env && sscanf(env, "%u", &n) == 1 && n)
		bpf_map__set_max_entries(b->skel->maps.fc_deltas, n);
}

/* MEVITOP_TEST_WALK_CUT's K for the walk starting now, or 0. */
static unsigned int test_cut_after(struct fcbpf *b, int mode)
{
	unsigned int nth;

	b->walks++;
	b->full_walks += mode == FC_WALK_ALL;
	nth = b->cut_full ? b->full_walks : b->walks;
	if (nth < b->cut_first || nth - b->cut_first >= b->cut_count ||
	    (b->cut_full && mode != FC_WALK_ALL))
		return 0;
	return b->cut_after;
}

int fcache_bpf_open(unsigned int hooks, struct fcbpf **out, char *why, size_t whylen)
{
	bool tracepoints = hooks & FCBPF_FILEMAP;
	struct fcbpf *b = calloc(1, sizeof(*b));
	int err;

	if (!b)
		return -ENOMEM;
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus <= 0) {
		err = b->ncpus ? b->ncpus : -EINVAL;
		goto fail;
	}
	b->keys = calloc(TAKE_BATCH, sizeof(*b->keys));
	b->vals = calloc((size_t)TAKE_BATCH * b->ncpus, sizeof(*b->vals));
	if (!b->keys || !b->vals) {
		err = -ENOMEM;
		goto fail;
	}
	b->skel = fcache_bpf__open();
	if (!b->skel) {
		err = -errno;
		snprintf(why, whylen, "failed to open the page cache BPF skeleton: %s",
			 strerror(-err));
		goto fail;
	}
	bpf_map__set_max_entries(b->skel->maps.fc_out, WALK_RING_BYTES);
	if (!tracepoints) {
		bpf_program__set_autoload(b->skel->progs.fc_add, false);
		bpf_program__set_autoload(b->skel->progs.fc_del, false);
		bpf_map__set_max_entries(b->skel->maps.fc_deltas, 1);
	}
	if (!tracepoints || !(hooks & FCBPF_DIRTY))
		bpf_program__set_autoload(b->skel->progs.fc_dirty, false);
	test_switches(b, tracepoints);
	err = fcache_bpf__load(b->skel);
	if (err) {
		snprintf(why, whylen, "failed to load the page cache BPF programs: %s (run with "
			 "-vv for the verifier log)", strerror(-err));
		goto fail;
	}
	b->walk = bpf_program__attach(b->skel->progs.fc_walk);
	b->out = b->walk ? ring_buffer__new(bpf_map__fd(b->skel->maps.fc_out), on_batch,
					    &b->wctx, NULL) : NULL;
	if (!b->out) {
		err = -errno;
		snprintf(why, whylen, "failed to attach the page cache walk: %s", strerror(-err));
		goto fail;
	}
	/* Optional: without it names come from handles and processes only, memcg stays null. */
	b->info = bpf_program__attach(b->skel->progs.fc_info);
	if (tracepoints) {
		b->add = bpf_program__attach(b->skel->progs.fc_add);
		b->del = b->add ? bpf_program__attach(b->skel->progs.fc_del) : NULL;
		if (!b->del) {
			err = -errno;
			snprintf(why, whylen, "failed to attach the filemap tracepoints: %s",
				 strerror(-err));
			goto fail;
		}
		/* Optional: without it the largest rows' dirty counts are refreshed by time
		 * (files_rows.c), as with --disable dirty_tp. */
		if (hooks & FCBPF_DIRTY) {
			b->dirty = bpf_program__attach(b->skel->progs.fc_dirty);
			if (!b->dirty)
				log_note("dirtied pages are not counted (writeback_dirty_folio: %s)",
					 strerror(errno));
		}
	}
	*out = b;
	return 0;
fail:
	fcache_bpf_close(b);
	return err;
}

unsigned int fcache_bpf_hooks(const struct features *f)
{
	return FCBPF_FILEMAP | (f->dirty_tp ? FCBPF_DIRTY : 0);
}

bool fcache_bpf_counts_dirtied(const struct fcbpf *b)
{
	return b && b->dirty;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int fcache_bpf_walk(struct fcbpf *b, int mode, fcbpf_rec_fn fn, void *ctx,
	       struct fcbpf_walk_stats *st)
{
	struct walk_ctx *w = &b->wctx;
	uint64_t t0 = now_ns(), last_steps = ~0ULL, last_full = 0;
	char comm[16] = "";
	int err = 0;

	w->fn = fn;
	w->ctx = ctx;
	w->err = 0;
	memset(&b->skel->bss->st, 0, sizeof(b->skel->bss->st));
	memset(st, 0, sizeof(*st));
	b->skel->bss->walk_mode = mode;
	b->skel->bss->test_cut_after = test_cut_after(b, mode);
	/* The tracepoint fires on every rename; keeping the name changes nothing else. */
	if (prctl(PR_GET_NAME, comm) < 0)
		return -errno;
	b->skel->bss->walk_tgid = getpid();
	while (!b->skel->bss->st.done) {
		if (prctl(PR_SET_NAME, comm) < 0) {
			err = -errno;
			break;
		}
		st->calls++;
		err = ring_buffer__consume(b->out);
		if (err < 0 || w->err) {
			err = w->err ? w->err : err;
			break;
		}
		err = 0;
		/* A firing that moved nowhere and was not refused for room: the walk is
		 * stuck (the program did not run). */
		if (b->skel->bss->st.steps == last_steps && b->skel->bss->st.full == last_full) {
			err = -EIO;
			break;
		}
		last_steps = b->skel->bss->st.steps;
		last_full = b->skel->bss->st.full;
	}
	b->skel->bss->walk_tgid = 0;
	if (!err && ring_buffer__consume(b->out) < 0)
		err = -EIO;
	if (!err)
		err = w->err;
	st->steps = b->skel->bss->st.steps;
	st->inodes = b->skel->bss->st.inodes;
	st->sbs = b->skel->bss->st.sbs;
	st->cuts = b->skel->bss->st.cuts;
	st->ns = now_ns() - t0;
	return err;
}

int fcache_bpf_info(struct fcbpf *b, const struct fc_info_req *req, size_t n, struct fc_info *out)
{
	char comm[16] = "";
	int err = 0;

	if (!b->info)
		return -ENOTSUP;
	if (n > FC_INFO_MAX)
		return -EINVAL;
	if (prctl(PR_GET_NAME, comm) < 0)
		return -errno;
	memcpy(b->skel->bss->info_req, req, n * sizeof(*req));
	b->skel->bss->info_n = n;
	for (size_t i = 0; i < n; i++)
		b->skel->bss->info_out[i].status = 0;
	b->skel->bss->info_tgid = getpid();
	if (prctl(PR_SET_NAME, comm) < 0)
		err = -errno;
	b->skel->bss->info_tgid = 0;
	if (!err && n && !b->skel->bss->info_out[0].status)
		err = -EIO;	/* the program did not run */
	if (!err)
		memcpy(out, b->skel->bss->info_out, n * sizeof(*out));
	return err;
}

int fcache_bpf_events(struct fcbpf *b, uint64_t *pages)
{
	__u64 *v;
	__u32 k = 0;
	int err = 0;

	*pages = 0;
	if (!b->add)
		return 0;
	v = calloc(b->ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.fc_events), &k, v))
		err = -errno;
	for (int c = 0; !err && c < b->ncpus; c++)
		*pages += v[c];
	free(v);
	return err;
}

int fcache_bpf_take(struct fcbpf *b, fcbpf_delta_fn fn, void *ctx)
{
	int fd = bpf_map__fd(b->skel->maps.fc_deltas);
	__u64 in = 0, outb = 0;
	void *inp = NULL;
	bool more = true;

	if (!b->add)
		return 0;
	while (more) {
		__u32 n = TAKE_BATCH, i;
		int c, err = bpf_map_lookup_and_delete_batch(fd, inp, &outb, b->keys, b->vals,
							     &n, NULL);

		if (err && errno != ENOENT)
			return -errno;
		more = !err;
		for (i = 0; i < n; i++) {
			struct fc_delta sum = {};
			const struct fc_delta *v = &b->vals[(size_t)i * b->ncpus];

			for (c = 0; c < b->ncpus; c++) {
				sum.adds += v[c].adds;
				sum.dels += v[c].dels;
				sum.dirtied += v[c].dirtied;
				if (v[c].ts >= sum.ts && v[c].ts) {
					sum.ts = v[c].ts;
					sum.nrpages = v[c].nrpages;
					sum.size = v[c].size;
					sum.gen = v[c].gen;
					sum.mode = v[c].mode;
					sum.inode = v[c].inode;
				}
			}
			fn(ctx, &b->keys[i], &sum);
		}
		in = outb;
		inp = &in;
	}
	return 0;
}
