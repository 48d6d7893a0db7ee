/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Frame payloads (doc/recording-format.md, "Payload"): a json_frame to bytes and back.
 *
 * The encoder remembers, per process, the bytes of its counters and of its layout (comm,
 * mappings, runs) in the previous frame; a delta frame carries only the parts whose bytes
 * changed.  The decoder keeps the model of the previous frame and rebuilds struct procs with
 * the model API, so the JSON writer and the UI read a replayed frame as they read the engine.
 * The encoder is rec_codec_encode.c, the decoder rec_codec_decode.c; what both agree on
 * beyond rec_format.h is in rec_codec_int.h.
 */
#ifndef MEVITOP_REC_CODEC_H
#define MEVITOP_REC_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include "out/json.h"
#include "rec/rec_bytes.h"

struct rec_encoder;

struct rec_encoder *rec_encoder_new(void);
/* Heat goes into the frames too (record --heat). */
void rec_encoder_record_heat(struct rec_encoder *enc, bool on);
void rec_encoder_free(struct rec_encoder *enc);
/* Appends the payload of f to out; keyframe: every process in full.  flags: REC_FLAG_*. */
int rec_encode(struct rec_encoder *enc, const struct json_frame *f, bool keyframe,
	       uint32_t flags, struct rbuf *out);

struct rec_decoder;

struct rec_decoder *rec_decoder_new(void);
void rec_decoder_free(struct rec_decoder *dec);
/* Forgets the previous frame (before a keyframe; after an error). */
void rec_decoder_reset(struct rec_decoder *dec);
/* Decodes one payload, the frame of CLOCK_MONOTONIC mono_ns, on top of the previous frame.
 * On success the frame (valid until the next call) is in *f and its REC_FLAG_* in *flags;
 * on error returns -EBADMSG (or -ENOMEM) with the reason in why, and the decoder is reset. */
int rec_decode(struct rec_decoder *dec, const uint8_t *p, size_t len, bool keyframe,
	       uint64_t mono_ns, struct json_frame *f, uint32_t *flags, char *why, size_t whylen);

#endif
