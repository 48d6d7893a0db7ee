// SPDX-License-Identifier: GPL-2.0
/* Exact mode's counters as JSON text: "stats.exact" (exact_stats.h). */
#include <inttypes.h>
#include <stdlib.h>
#include "exact/exact_stats.h"
#include "out/json.h"
#include "out/json_buf.h"

char *exact_stats_json(const struct exact_stats *x)
{
	static const char *const hist_keys[EXACT_HIST_BUCKETS] = {
		"<1", "<2", "<4", "<8", "<16", "<32", "<64", "<128", "<256", "<512", "<1024",
		"<2048", "<4096", ">=4096",
	};
	struct buf b = { 0 };
	size_t i;

	json_buf_put(&b, "\"exact\": {\"variant\": \"%s\", \"processes\": %" PRIu64
	    ", \"registered_pages\": %" PRIu64 ", \"touches\": %" PRIu64
	    ", \"touches_interval\": %" PRIu64 ", \"touches_dropped\": %" PRIu64
	    ", \"prereg_pages\": %" PRIu64 ", \"prereg_max\": %" PRIu64 ", \"stale\": %" PRIu64
	    ", \"behind\": %" PRIu64, x->ordered ? "ordered" : "fast", x->processes,
	    x->registered_pages, x->touches, x->touches_interval, x->touches_dropped,
	    x->prereg_pages, x->prereg_max, x->stale, x->behind);
	json_buf_put(&b, ", \"events\": {\"fork\": %" PRIu64 ", \"remap\": %" PRIu64 ", \"remove\": %"
	    PRIu64 ", \"unmap\": %" PRIu64 ", \"gone\": %" PRIu64 "}", x->fork, x->remap,
	    x->remove, x->unmap, x->gone);
	json_buf_put(&b, ", \"attaches\": %" PRIu64 ", \"attach_ms_max\": %" PRIu64, x->attaches,
	    x->attach_ms_max);
	json_buf_put(&b, ", \"server\": {\"threads\": %d, \"waiting\": %d, \"steered\": %" PRIu64
	    ", \"parked\": %" PRIu64 ", \"reads\": %" PRIu64 ", \"faults\": %" PRIu64
	    ", \"resolved\": %" PRIu64 ", \"raced\": %" PRIu64 ", \"retried\": %" PRIu64 "}",
	    x->server_threads, x->server_waiting, x->steered, x->parked, x->reads, x->faults,
	    x->resolved, x->raced, x->retried);
	if (x->ordered) {
		json_buf_put(&b, ", \"latency_us_hist\": {");
		for (i = 0; i < EXACT_HIST_BUCKETS; i++)
			json_buf_put(&b, "%s\"%s\": %" PRIu64, i ? ", " : "", hist_keys[i], x->hist[i]);
		json_buf_put(&b, "}, \"latency_us_max\": %.1f", x->lat_max_ns / 1000.0);
	}
	json_buf_put(&b, ", \"first_touches\": [");
	for (i = 0; i < x->nlog; i++)
		json_put_touch(&b, &x->log[i], i > 0);
	json_buf_put(&b, "], \"first_touches_unlisted\": %" PRIu64 "}", x->unlisted);
	if (b.oom || !b.p) {
		free(b.p);
		return NULL;
	}
	return b.p;
}
