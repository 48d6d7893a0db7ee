/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the encoder (rec_codec_encode.c) and the decoder (rec_codec_decode.c) agree on beyond
 * rec_format.h's constants: the order of the statistics in a frame and the code of a run's
 * state.  Both are part of the format (doc/recording-format.md, "Payload").
 */
#ifndef MEVITOP_REC_CODEC_INT_H
#define MEVITOP_REC_CODEC_INT_H

#include <stddef.h>
#include <stdint.h>
#include "out/json.h"

/*
 * The order of the statistics in a frame.  The per-kind arrays hold the record kinds of the
 * format's first version (0..5); what came later is appended, so older files (fewer values)
 * read as zeroes and older readers skip them.
 */
#define REC_KINDS 6
#define N_STAT_U64 (8 + 2 * REC_KINDS + 6)
#define N_STAT_F64 4

/* The i-th statistic's field in s, or NULL past the ones this version knows. */
uint64_t *rec_stat_u64(struct engine_stats *s, size_t i);
double *rec_stat_f64(struct engine_stats *s, size_t i);

/*
 * The states a run can take, coded relative to the state its pages had before (a layout:
 * not resident): code k is the k-th of the other three states in the order resident,
 * not resident, swapped, untracked.  Pages moving in and out of RAM -- nearly every change
 * -- are all code 0, which zstd then stores in almost nothing.  Inline: the encoder codes
 * every run.
 */
static const enum page_state rec_state_order[] = { PS_RESIDENT, PS_NOT_RESIDENT, PS_SWAPPED,
						   PS_UNTRACKED };

/* The state code takes a page in state old to, or PS_COUNT for a code > 2. */
static inline enum page_state rec_state_after(enum page_state old, uint8_t code)
{
	for (size_t i = 0; i < PS_COUNT; i++) {
		if (rec_state_order[i] == old)
			continue;
		if (!code--)
			return rec_state_order[i];
	}
	return PS_COUNT;	/* code > 2: the caller refuses it */
}

static inline uint8_t rec_state_code(enum page_state old, enum page_state st)
{
	uint8_t code = 0;

	for (size_t i = 0; rec_state_order[i] != st; i++)
		code += rec_state_order[i] != old;
	return code;
}

#endif
