// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include "model/share_figs.h"
#include "out/json_share.h"

void json_share_proc(struct buf *b, const struct proc *p)
{
	struct share_figs f;

	if (!p->share)
		return;
	share_totals(p, &f);
	json_buf_put(b, ", \"uss\": %" PRIu64 ", \"pss\": %" PRIu64 ", \"shared\": %" PRIu64
	    ", \"ksm\": %" PRIu64 ", \"sharing_at\": %.6f", f.uss, f.pss, f.shared, f.ksm,
	    p->share->at_ns / 1e9);
	if (f.thp_known)
		json_buf_put(b, ", \"thp\": %" PRIu64, f.thp);
}

static const char *const class_names[SHC_COUNT] = {
	[SHC_PRIVATE] = "1", [SHC_TWO] = "2", [SHC_FEW] = "3-8", [SHC_MANY] = "9+",
};

void json_share_mapping(struct buf *b, const struct proc *p, const struct mapping *m)
{
	uint64_t s = mapping_start(m), t = mapping_end(m), rs, re;
	struct share_figs f;
	bool first = true;
	int c;

	if (!p->share)
		return;
	share_mapping(p, m, &f);
	json_buf_put(b, ", \"uss\": %" PRIu64 ", \"pss\": %" PRIu64 ", \"shared\": %" PRIu64
	    ", \"shared_runs\": [", f.uss, f.pss, f.shared);
	/* The sharing layer: runs of each class by more than one, class after class. */
	for (c = SHC_TWO; c < SHC_COUNT; c++)
		for (rs = s; pageset_next_run(p->share->cls[c], rs, t, &rs, &re); rs = re) {
			json_buf_put(b, "%s{\"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64
			    "\", \"by\": \"%s\"}", first ? "" : ", ", rs << PAGE_SHIFT_4K,
			    re << PAGE_SHIFT_4K, class_names[c]);
			first = false;
		}
	json_buf_put(b, "]");
}

void json_share_stats(struct buf *b, bool comma, const struct share_stats *st)
{
	json_buf_put(b, "%s\"sharing\": {\"passes\": %" PRIu64 ", \"pages_read\": %" PRIu64
	    ", \"lookups\": %" PRIu64 ", \"cached\": %" PRIu64 ", \"preads\": %" PRIu64
	    ", \"tick_ms\": %.3f, \"total_ms\": %.3f"
	    ", \"tick_pages\": %" PRIu64 ", \"anon_verified\": %" PRIu64
	    ", \"self_pages\": %" PRIu64 ", \"self_entries\": %" PRIu64 ", \"self_ms\": %.3f}",
	    comma ? ", " : "", st->passes, st->pages_read, st->lookups, st->cached, st->preads,
	    st->tick_ns / 1e6, st->total_ns / 1e6, st->tick_pages, st->anon_verified,
	    st->self_pages, st->self_entries, st->self_ns / 1e6);
}
