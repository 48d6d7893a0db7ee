// SPDX-License-Identifier: GPL-2.0
/* The order of the statistics in a frame (rec_codec_int.h), for the encoder and the decoder. */
#include "rec/rec_codec_int.h"

uint64_t *rec_stat_u64(struct engine_stats *s, size_t i)
{
	uint64_t *fixed[] = { &s->events, &s->lost, &s->reconciles, &s->drift_pages, &s->scans,
			      &s->scanned_pages, &s->maps_reads, &s->overflows };
	uint64_t *later[] = { &s->retired, &s->layout_changes, &s->layout_unowned,
			      &s->layout_hooked, &s->lost_by_kind[EV_STACK],
			      &s->events_by_kind[EV_STACK] };
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);

	_Static_assert(EV_STACK == REC_KINDS && EV_KIND_MAX == REC_KINDS + 1,
		       "a new record kind: append its counters to later[]");
	if (i < nfixed)
		return fixed[i];
	i -= nfixed;
	if (i < REC_KINDS)
		return &s->lost_by_kind[i];
	i -= REC_KINDS;
	if (i < REC_KINDS)
		return &s->events_by_kind[i];
	i -= REC_KINDS;
	return i < sizeof(later) / sizeof(later[0]) ? later[i] : NULL;
}

double *rec_stat_f64(struct engine_stats *s, size_t i)
{
	double *fixed[] = { &s->events_per_sec, &s->cpu_pct, &s->interval_s,
			    &s->maps_reads_per_sec };

	return i < sizeof(fixed) / sizeof(fixed[0]) ? fixed[i] : NULL;
}
