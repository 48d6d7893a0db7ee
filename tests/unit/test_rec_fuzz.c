// SPDX-License-Identifier: GPL-2.0
/*
 * The recording reader against hostile input (user/rec/).
 *
 * Random models (seeded) are recorded by the real writer into real files; each file must
 * replay to exactly the JSON its frames printed live (round trip).  Then, many times over:
 *  - the file's bytes are mutated (bit flips, bytes set to extremes, cuts, inserted and
 *    deleted bytes): rec_open and loading every frame must end in success or a clean error;
 *  - a frame's decompressed payload is mutated and given straight to the decoder, past the
 *    checksums and zstd, so the structure parser itself meets lies: huge counts and lengths,
 *    pids and runs out of order, overlapping mappings;
 *  - hand-made payloads that are each one such lie must be refused.
 * Under ASan/UBSan any overflow, leak or undefined behaviour fails the test.
 * MEVITOP_TEST_SEED=<n> replays a run; the seed in use is always printed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "out/json.h"
#include "model/model.h"
#include "rec/rec_bytes.h"
#include "rec/rec_codec.h"
#include "rec/rec_reader.h"
#include "rec/rec_writer.h"
#include "rec/rec_format.h"
#include "stacks/stacks.h"

static uint64_t rng;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return n ? next() % n : 0;
}

#define NFRAMES 40
#define MONO(k) (1000000000ULL + (k) * 50000000ULL)	/* frame k's time */

struct model_frame {
	struct proc *procs[4];
	size_t bytes[4];
	size_t n;
};

#define HEAT_STAMP (1ULL << 50)

/* A process with a few mappings and random runs; pids and layout drift between frames. */
static struct proc *random_proc(pid_t pid)
{
	struct proc *p = proc_new(pid);
	uint64_t at = 0x1000 + below(0x1000);
	size_t nm = 1 + below(6), i;

	assert_non_null(p);
	snprintf(p->comm, sizeof(p->comm), "wl%d", pid);
	p->ready = true;
	p->faults = below(1000);
	p->fault_rate = below(100) / 4.0;
	p->exited = below(8) == 0;
	p->ppid = below(3) ? 1 + below(200) : 0;	/* a parent, often one of the others */
	for (i = 0; i < nm; i++) {
		uint64_t len = 1 + below(300), s = at, j;
		struct mapping_attrs a = { .perms = below(16), .kind = below(MK_COUNT),
					   .offset = below(2) ? below(1 << 20) << 12 : 0,
					   .path = below(2) ? "/usr/lib/libfuzz.so" : NULL };

		assert_int_equal(model_map_keep(p, s, s + len, &a), 0);
		for (j = 0; j < (i == 0 ? 64u : 4u); j++) {
			uint64_t rs = s + below(len), re = rs + 1 + below(s + len - rs);

			model_set_state(p, rs, re, 1 + below(3));
		}
		at = s + len + below(3) * below(100);	/* adjacent or apart */
	}
	/* Heat stamped after every frame: it does not decay, so replay must give it exactly. */
	for (i = below(3) ? below(40) : 0; i > 0; i--)
		heat_add(&p->heat, 0x1000 + below(0x2000), below(50) / 8.0f, HEAT_STAMP);
	return p;
}

static void make_model(struct model_frame *m, int frame)
{
	m->n = 1 + below(4);
	for (size_t i = 0; i < m->n; i++) {
		m->procs[i] = random_proc(100 + i * 7 + (frame % 5 == 0 && i == 1));
		m->bytes[i] = below(100000);
	}
}

static void free_model(struct model_frame *m)
{
	for (size_t i = 0; i < m->n; i++)
		proc_free(m->procs[i]);
}

/* Exact mode's first touches for the frames that have them (every third). */
static struct first_touch touches[NFRAMES][8];

static struct json_frame as_frame(struct model_frame *m, int k)
{
	struct json_frame f = { .mono_ns = MONO(k), .wall = 1.7e9 + k,
				.mode = "sample", .interval_ms = 50, .engine_bytes = 1234,
				.nprocs = m->n, .procs = m->procs, .proc_bytes = m->bytes, .n = m->n };

	if (k % 3 == 0) {
		f.has_touches = true;
		f.touches = touches[k];
		f.ntouches = k % 9;
		f.touches_dropped = k % 2;
	}

	f.stats.events = k;
	f.stats.interval_scale = 1;
	f.stats.cpu_pct = 0.25;
	return f;
}

static char *json_of(const struct json_frame *f)
{
	struct json_opts jo = { .maps = true };
	char *s = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&s, &len);

	assert_non_null(out);
	assert_int_equal(json_frame_write(out, f, &jo), 0);
	fclose(out);
	return s;
}

/* --stacks: a table that grows now and then, and random first touches each frame. */
static struct stacks *fuzz_stacks;

static void add_stack(int k)
{
	struct sym_frame fr[3];
	struct stack st = { .nframes = 1 + below(3), .unwind = below(2) ? UNWIND_FP : UNWIND_IP,
			    .frames = fr };
	char name[3][32], func[3][32];

	for (int i = 0; i < 3; i++) {
		snprintf(name[i], sizeof(name[i]), "fn%d_%d+0x%x", k, i, (unsigned)below(256));
		snprintf(func[i], sizeof(func[i]), "fn%d_%d", k, i);
		fr[i] = (struct sym_frame){ .addr = 0x400000 + below(1 << 20), .name = name[i],
					    .func = below(2) ? func[i] : NULL,
					    .module = below(2) ? "libfuzz.so" : NULL,
					    .file = below(2) ? "fuzz.c" : NULL, .line = below(900),
					    .func_start = below(2) ? 0x400000 : 0 };
	}
	assert_int_equal(stacks_append(fuzz_stacks, &st), 0);
}

static void fuzz_touches(struct model_frame *m, int k)
{
	if (k == 0 || !below(4))
		add_stack(k);
	stacks_clear_touches(fuzz_stacks);
	for (size_t i = 0; i < m->n; i++) {
		const struct mapping *mp = model_first(m->procs[i]);
		uint64_t len = mapping_end(mp) - mapping_start(mp), at = mapping_start(mp);
		struct stack_touch t[3];
		size_t n = below(4);

		for (size_t j = 0; j < n; j++) {
			uint64_t from = at + below(len / 3 + 1);

			if (from >= mapping_end(mp))
				from = mapping_end(mp) - 1;
			t[j] = (struct stack_touch){ from, from + 1 + below(mapping_end(mp) - from),
						     below(stacks_count(fuzz_stacks)),
						     below(2) ? 7 : 0, 1000000000ULL + below(1ULL << 34),
						     (from << 12) + below(4096) };
			at = t[j].to < mapping_end(mp) ? t[j].to : mapping_end(mp) - 1;
		}
		assert_int_equal(stacks_set_touches(fuzz_stacks, m->procs[i]->pid, t, n), 0);
	}
}

static char path[64];
static int patches, relayouts;
static char *expect[NFRAMES];
static struct rbuf payloads[NFRAMES];	/* each frame as a keyframe */
static struct rbuf deltas[NFRAMES];	/* ... and as a delta on the frame before */

/* Writes a recording of NFRAMES random frames (some repeated, so deltas are small) and keeps
 * each frame's JSON and raw payload. */
static void write_recording(void)
{
	struct rec_writer_opts o = { .path = path, .keyframe_every = 7, .heat = true };
	struct rec_encoder *enc = rec_encoder_new(), *denc = rec_encoder_new();
	struct rec_writer *w;
	struct model_frame m = { 0 };
	char why[256];

	assert_int_equal(rec_writer_open(&o, &w, why, sizeof(why)), 0);
	rec_encoder_record_heat(enc, true);
	rec_encoder_record_heat(denc, true);
	for (int k = 0; k < NFRAMES; k++)
		for (int i = 0; i < 8; i++)
			/* Times not in order (a fast variant's scan), threads unknown (0). */
			touches[k][i] = (struct first_touch){
				100 + below(30), below(3) ? 100 + below(40) : 0,
				0x7f0000000000ULL + below(1 << 30), 1000000000ULL + below(1ULL << 40),
				below(2) };
	for (int k = 0; k < NFRAMES; k++) {
		struct json_frame f;

		if (k == 0 || !below(4)) {
			free_model(&m);
			make_model(&m, k);
		} else if (below(3)) {
			/* A few pages of the first mapping change: the delta is a patch. */
			struct proc *p = m.procs[below(m.n)];
			struct mapping *mp = model_first(p);
			uint64_t s = mapping_start(mp) + below(mapping_end(mp) - mapping_start(mp));

			model_set_state(p, s, s + 1 + below(mapping_end(mp) - s), below(PS_COUNT));
			if (!below(4))
				p->ppid = below(2);	/* reparented (to 1) or unknown */
			if (below(2))
				heat_add(&p->heat, s, 1.0f, HEAT_STAMP);
			if (!below(4))
				heat_prune(&p->heat, HEAT_STAMP);	/* blocks disappear */
			if (below(2)) {
				/* ... and a mapping is added: a patch on a new layout. */
				struct mapping_attrs a = { .perms = 3, .kind = MK_ANON };
				struct mapping *last = mp;

				while (model_next(last))
					last = model_next(last);
				s = mapping_end(last) + below(4);
				assert_int_equal(model_map_keep(p, s, s + 1 + below(20), &a), 0);
				model_set_state(p, s, s + 1, 1 + below(3));
				relayouts++;
			}
			patches++;
		}
		fuzz_touches(&m, k);
		f = as_frame(&m, k);
		f.stacks = fuzz_stacks;
		expect[k] = json_of(&f);
		assert_int_equal(rec_writer_frame(w, &f, REC_FLAG_MAPS, why, sizeof(why)), 0);
		payloads[k].len = 0;
		assert_int_equal(rec_encode(enc, &f, true, REC_FLAG_MAPS, &payloads[k]), 0);
		assert_int_equal(rec_encode(denc, &f, k == 0, REC_FLAG_MAPS, &deltas[k]), 0);
	}
	free_model(&m);
	rec_writer_close(w);
	rec_encoder_free(enc);
	rec_encoder_free(denc);
}

/* Opens a file and loads every frame, in order and then at random; any outcome but a crash
 * is fine, but a successful load must produce valid output. */
static size_t read_all(const char *p, bool must_open)
{
	struct rec_reader *r;
	char why[512];
	size_t i, ok = 0;

	if (rec_open(p, &r, why, sizeof(why))) {
		assert_false(must_open);
		assert_true(why[0] != 0);
		return 0;
	}
	for (i = 0; i < rec_frames(r); i++) {
		struct json_frame f;
		uint32_t flags;

		if (rec_load(r, i, &f, &flags, why, sizeof(why)))
			break;
		free(json_of(&f));
		ok++;
	}
	for (int k = 0; k < 5 && rec_frames(r); k++) {
		struct json_frame f;
		uint32_t flags;

		rec_load(r, below(rec_frames(r)), &f, &flags, why, sizeof(why));
	}
	rec_close(r);
	return ok;
}

static void test_round_trip(void **state)
{
	struct rec_reader *r;
	char why[256];

	assert_int_equal(rec_open(path, &r, why, sizeof(why)), 0);
	assert_int_equal(rec_frames(r), NFRAMES);
	assert_null(rec_warning(r));
	/* In order, then backwards (each a seek through its keyframe). */
	for (int pass = 0; pass < 2; pass++) {
		for (int j = 0; j < NFRAMES; j++) {
			int k = pass ? NFRAMES - 1 - j : j;
			struct json_frame f;
			uint32_t flags;
			char *got;

			assert_int_equal(rec_load(r, k, &f, &flags, why, sizeof(why)), 0);
			got = json_of(&f);
			assert_string_equal(got, expect[k]);
			free(got);
		}
	}
	rec_close(r);
}

static void test_mutated_files(void **state)
{
	FILE *in = fopen(path, "rb");
	uint8_t *good, *bad;
	long len;
	char mpath[80];

	assert_non_null(in);
	fseek(in, 0, SEEK_END);
	len = ftell(in);
	rewind(in);
	good = malloc(len);
	bad = malloc(len + 64);
	assert_int_equal(fread(good, 1, len, in), (size_t)len);
	fclose(in);
	snprintf(mpath, sizeof(mpath), "%s.m", path);
	for (int it = 0; it < 600; it++) {
		long n = len, k, muts = 1 + below(4);

		memcpy(bad, good, len);
		for (k = 0; k < muts; k++) {
			long at = below(n);

			switch (below(6)) {
			case 0: bad[at] ^= 1 << below(8); break;
			case 1: bad[at] = below(2) ? 0xff : 0; break;
			case 2: n = below(n + 1); break;
			case 3: if (n < len + 63) { memmove(bad + at + 1, bad + at, n - at); n++; } break;
			case 4: if (n > 1) { memmove(bad + at, bad + at + 1, n - at - 1); n--; } break;
			case 5: memset(bad + at, 0xff, n - at < 8 ? n - at : 8); break;
			}
			if (!n)
				break;
		}
		FILE *out = fopen(mpath, "wb");

		assert_non_null(out);
		fwrite(bad, 1, n, out);
		fclose(out);
		read_all(mpath, false);
	}
	unlink(mpath);
	free(good);
	free(bad);
}

static void decode_some(const uint8_t *p, size_t n)
{
	struct rec_decoder *d = rec_decoder_new();
	struct json_frame f;
	uint32_t flags;
	char why[256];

	/* As a keyframe, then as a delta on top of a real frame. */
	if (!rec_decode(d, p, n, true, 0, &f, &flags, why, sizeof(why)))
		free(json_of(&f));
	assert_int_equal(rec_decode(d, payloads[0].p, payloads[0].len, true, 0, &f, &flags, why,
				    sizeof(why)), 0);
	if (!rec_decode(d, p, n, false, 0, &f, &flags, why, sizeof(why)))
		free(json_of(&f));
	rec_decoder_free(d);
}

/* Each delta on the keyframe before it decodes to its frame; mutated, to anything but a
 * crash (patches against a real base meet lies here). */
static void test_mutated_deltas(void **state)
{
	for (int it = 0; it < 3000; it++) {
		bool mutate = it >= NFRAMES - 1;	/* first every delta as written */
		int k = mutate ? 1 + (int)below(NFRAMES - 1) : it + 1;
		struct rec_decoder *d = rec_decoder_new();
		const struct rbuf *src = &deltas[k];
		size_t n = src->len;
		uint8_t *p = malloc(n + 1);
		struct json_frame f;
		uint32_t flags;
		char why[256];

		memcpy(p, src->p, n);
		if (mutate)
			for (int m = 1 + below(3); m-- && n;) {
				size_t at = below(n);

				switch (below(3)) {
				case 0: p[at] ^= 1 << below(8); break;
				case 1: p[at] = below(256); break;
				case 2: n = below(n + 1); break;
				}
			}
		assert_int_equal(rec_decode(d, payloads[k - 1].p, payloads[k - 1].len, true, MONO(k - 1), &f,
					    &flags, why, sizeof(why)), 0);
		if (!rec_decode(d, p, n, false, MONO(k), &f, &flags, why, sizeof(why))) {
			char *got = json_of(&f);

			if (!mutate) {
				/* The unmutated delta: exactly its frame, but for the times
				 * (they are in the frame header, not the payload). */
				f.mono_ns = MONO(k);
				f.wall = 1.7e9 + k;
				free(got);
				got = json_of(&f);
				assert_string_equal(got, expect[k]);
			}
			free(got);
		} else {
			assert_true(mutate);
		}
		free(p);
		rec_decoder_free(d);
	}
}

static void test_mutated_payloads(void **state)
{
	for (int it = 0; it < 4000; it++) {
		const struct rbuf *src = &payloads[below(NFRAMES)];
		size_t n = src->len, k, muts = 1 + below(3);
		uint8_t *p = malloc(n + 16);

		memcpy(p, src->p, n);
		for (k = 0; k < muts && n; k++) {
			size_t at = below(n);

			switch (below(5)) {
			case 0: p[at] ^= 1 << below(8); break;
			case 1: p[at] = below(2) ? 0xff : 0x80; break;
			case 2: n = below(n + 1); break;
			case 3: p[at] = below(256); break;
			/* A varint that claims a huge value. */
			case 4: memset(p + at, 0xff, n - at < 9 ? n - at : 9); break;
			}
		}
		decode_some(p, n);
		free(p);
	}
}

/* One frame's header fields, then the given process entries. */
static void header(struct rbuf *b, uint64_t nentries)
{
	rbuf_varint(b, REC_FLAG_MAPS);
	rbuf_varint(b, 0);		/* no u64 stats */
	rbuf_varint(b, 0);		/* no f64 stats */
	rbuf_varint(b, 1);		/* interval scale */
	rbuf_str(b, "sample");
	rbuf_varint(b, 1000);
	rbuf_varint(b, 0);
	rbuf_varint(b, nentries);
	rbuf_str(b, NULL);
	rbuf_varint(b, nentries);
}

/* maps: {gap, len} per mapping; runs: {gap, len - 1, code} per run of the run block. */
static void proc_entry(struct rbuf *b, uint64_t pid_delta, const uint64_t *maps, size_t nmaps,
		       const uint64_t *runs, size_t nruns)
{
	struct rbuf gaps = { 0 }, lens = { 0 };

	rbuf_varint(b, pid_delta);
	rbuf_u8(b, REC_TAG_COUNTERS | REC_TAG_LAYOUT);
	rbuf_u8(b, 0);
	rbuf_varint(b, 0);
	rbuf_f64(b, 0);
	rbuf_varint(b, 0);
	rbuf_str(b, "x");
	rbuf_varint(b, 0);
	rbuf_varint(b, 0);
	rbuf_varint(b, nmaps);
	for (size_t i = 0; i < nmaps; i++, maps += 2) {
		rbuf_varint(b, maps[0]);
		rbuf_varint(b, maps[1]);
		for (int k = 0; k < 7; k++)
			rbuf_varint(b, 0);
		rbuf_str(b, NULL);
	}
	for (size_t i = 0; i < nruns; i++) {
		rbuf_varint(&gaps, runs[3 * i]);
		rbuf_varint(&lens, runs[3 * i + 1]);
	}
	rbuf_varint(b, nruns);
	rbuf_varint(b, gaps.len);
	rbuf_bytes(b, gaps.p, gaps.len);
	rbuf_varint(b, lens.len);
	rbuf_bytes(b, lens.p, lens.len);
	for (size_t i = 0; i < nruns; i++)
		rbuf_u8(b, runs[3 * i + 2]);
	rbuf_free(&gaps);
	rbuf_free(&lens);
}

static void frame_end(struct rbuf *b)
{
	rbuf_varint(b, 0);	/* no frame sections */
}

static int decode_buf(struct rbuf *b)
{
	struct rec_decoder *d = rec_decoder_new();
	struct json_frame f;
	uint32_t flags;
	char why[256];
	int err = rec_decode(d, b->p, b->len, true, 0, &f, &flags, why, sizeof(why));

	rec_decoder_free(d);
	rbuf_free(b);
	return err;
}

/* One process with the given mappings and runs: 0 or -EBADMSG. */
static int decode_one(const uint64_t *maps, size_t nmaps, const uint64_t *runs, size_t nruns)
{
	struct rbuf b = { 0 };

	header(&b, 1);
	proc_entry(&b, 5, maps, nmaps, runs, nruns);
	frame_end(&b);
	return decode_buf(&b);
}

static void test_hostile_payloads(void **state)
{
	struct rbuf b = { 0 };
	uint64_t map[] = { 16, 10 }, two_maps[] = { 16, 10, 5, 10 };
	uint64_t ok[] = { 17, 1, 0 }, two_ok[] = { 17, 1, 0, 12, 7, 1 };
	uint64_t past_end[] = { 17, 9, 0 }, in_gap[] = { 26, 0, 0 }, under[] = { 15, 0, 0 };
	uint64_t bad_code[] = { 17, 1, 3 }, huge_gap[] = { REC_MAX_PAGE, 0, 0 };
	uint64_t across[] = { 20, 10, 0 }, empty_map[] = { 16, 0 };
	uint64_t beyond[] = { REC_MAX_PAGE - 4, 10 };
	uint64_t huge_map[] = { 0, REC_MAX_PAGE - 1 }, huge_run[] = { 0, REC_MAX_PAGE - 2, 0 };

	assert_int_equal(decode_one(map, 1, ok, 1), 0);
	assert_int_equal(decode_one(two_maps, 2, two_ok, 2), 0);
	assert_int_equal(decode_one(map, 1, past_end, 1), -EBADMSG);
	assert_int_equal(decode_one(two_maps, 2, in_gap, 1), -EBADMSG);
	assert_int_equal(decode_one(map, 1, under, 1), -EBADMSG);
	assert_int_equal(decode_one(map, 1, bad_code, 1), -EBADMSG);
	assert_int_equal(decode_one(map, 1, huge_gap, 1), -EBADMSG);
	/* A run from one mapping into the next, adjacent one. */
	{
		uint64_t adj[] = { 16, 10, 0, 10 };

		assert_int_equal(decode_one(adj, 2, across, 1), -EBADMSG);
	}
	assert_int_equal(decode_one(empty_map, 1, NULL, 0), -EBADMSG);
	assert_int_equal(decode_one(beyond, 1, NULL, 0), -EBADMSG);
	/* More state than REC_MAX_STATE_PAGES: refused before any page is stored. */
	assert_int_equal(decode_one(huge_map, 1, huge_run, 1), -EBADMSG);
	/* A run count beyond the bytes that follow, and columns that do not add up. */
	header(&b, 1);
	proc_entry(&b, 5, map, 1, NULL, 0);
	b.len -= 3;			/* the empty run block: 0, 0, 0 */
	rbuf_varint(&b, 1000000);
	rbuf_varint(&b, 0);
	rbuf_varint(&b, 0);
	frame_end(&b);
	assert_int_equal(decode_buf(&b), -EBADMSG);
	header(&b, 1);
	proc_entry(&b, 5, map, 1, NULL, 0);
	b.len -= 3;
	rbuf_varint(&b, 1);		/* one run, but two gaps */
	rbuf_varint(&b, 2);
	rbuf_u8(&b, 17);
	rbuf_u8(&b, 0);
	rbuf_varint(&b, 1);
	rbuf_u8(&b, 0);
	rbuf_u8(&b, 0);
	frame_end(&b);
	assert_int_equal(decode_buf(&b), -EBADMSG);
	/* Pids out of order (a zero delta repeats a pid). */
	header(&b, 2);
	proc_entry(&b, 5, map, 1, ok, 1);
	proc_entry(&b, 0, map, 1, ok, 1);
	frame_end(&b);
	assert_int_equal(decode_buf(&b), -EBADMSG);
	/* A count far beyond the bytes that follow. */
	header(&b, 1000000000);
	assert_int_equal(decode_buf(&b), -EBADMSG);
	/* Sections: unknown kinds are skipped; one longer than the payload is refused. */
	header(&b, 1);
	proc_entry(&b, 5, map, 1, ok, 1);
	rbuf_varint(&b, 1);
	rbuf_varint(&b, 999);
	rbuf_varint(&b, 2);
	rbuf_u8(&b, 1);
	rbuf_u8(&b, 2);
	assert_int_equal(decode_buf(&b), 0);
	header(&b, 1);
	proc_entry(&b, 5, map, 1, ok, 1);
	rbuf_varint(&b, 1);
	rbuf_varint(&b, 999);
	rbuf_varint(&b, 3);
	rbuf_u8(&b, 1);
	assert_int_equal(decode_buf(&b), -EBADMSG);
	/* First touches: well formed; then a pid 0, a write flag 2, a count beyond the bytes. */
	{
		uint64_t rows[][5] = { { 7, 7, 0x1000, 1, 5 }, { 0, 7, 0x1000, 1, 5 },
				       { 7, 7, 0x1000, 2, 5 } };
		int want[] = { 0, -EBADMSG, -EBADMSG };

		for (int r = 0; r < 3; r++) {
			struct rbuf body = { 0 };

			rbuf_varint(&body, 1);
			rbuf_varint(&body, 0);
			for (int k = 0; k < 5; k++)
				if (k == 3)
					rbuf_u8(&body, rows[r][k]);
				else
					rbuf_varint(&body, rows[r][k]);
			header(&b, 1);
			proc_entry(&b, 5, map, 1, ok, 1);
			rbuf_varint(&b, 1);
			rbuf_varint(&b, REC_SECTION_TOUCHES);
			rbuf_varint(&b, body.len);
			rbuf_bytes(&b, body.p, body.len);
			rbuf_free(&body);
			assert_int_equal(decode_buf(&b), want[r]);
		}
		header(&b, 1);
		proc_entry(&b, 5, map, 1, ok, 1);
		rbuf_varint(&b, 1);
		rbuf_varint(&b, REC_SECTION_TOUCHES);
		rbuf_varint(&b, 3);
		rbuf_varint(&b, 100);
		rbuf_varint(&b, 0);
		rbuf_u8(&b, 0);
		assert_int_equal(decode_buf(&b), -EBADMSG);
	}
	/* A parent section: a pid; then one beyond REC_MAX_PID, and a byte too many. */
	{
		uint64_t parents[][2] = { { 1, 4000 }, { 1, REC_MAX_PID + 1ULL }, { 2, 4000 } };
		int want[] = { 0, -EBADMSG, -EBADMSG };

		for (int r = 0; r < 3; r++) {
			struct rbuf body = { 0 };
			size_t at;

			rbuf_varint(&body, parents[r][1]);
			if (parents[r][0] == 2)
				rbuf_u8(&body, 0);
			header(&b, 1);
			at = b.len;
			proc_entry(&b, 5, map, 1, ok, 1);
			b.p[at + 1] |= REC_TAG_SECTIONS;	/* after the 1-byte pid delta */
			rbuf_varint(&b, 1);
			rbuf_varint(&b, REC_SECTION_PARENT);
			rbuf_varint(&b, body.len);
			rbuf_bytes(&b, body.p, body.len);
			rbuf_free(&body);
			frame_end(&b);
			assert_int_equal(decode_buf(&b), want[r]);
		}
	}
	/* Trailing garbage. */
	header(&b, 1);
	proc_entry(&b, 5, map, 1, ok, 1);
	frame_end(&b);
	rbuf_u8(&b, 0);
	assert_int_equal(decode_buf(&b), -EBADMSG);
	/* A delta entry with no earlier state, in a keyframe. */
	header(&b, 1);
	rbuf_varint(&b, 5);
	rbuf_u8(&b, 0);
	frame_end(&b);
	assert_int_equal(decode_buf(&b), -EBADMSG);
}

/* One page of a fragmented 40 MiB mapping changes: the delta is a patch of a few bytes, and
 * decodes to exactly the changed model. */
static void test_patch_delta(void **state)
{
	struct model_frame m = { .n = 1 };
	struct rec_encoder *enc = rec_encoder_new();
	struct rec_decoder *dec = rec_decoder_new();
	struct mapping_attrs a = { .perms = 3, .kind = MK_ANON };
	struct rbuf key = { 0 }, delta = { 0 };
	struct json_frame f, got;
	uint32_t flags;
	char why[256], *want, *have;

	m.procs[0] = proc_new(42);
	m.procs[0]->ready = true;
	assert_int_equal(model_map_keep(m.procs[0], 0x1000, 0x1000 + 10240, &a), 0);
	for (uint64_t pg = 0; pg < 10240; pg += 20)
		model_set_state(m.procs[0], 0x1000 + pg, 0x1000 + pg + 10, PS_RESIDENT);
	f = as_frame(&m, 0);
	assert_int_equal(rec_encode(enc, &f, true, REC_FLAG_MAPS, &key), 0);
	model_set_page(m.procs[0], 0x1000 + 5005, PS_SWAPPED);
	f = as_frame(&m, 1);
	assert_int_equal(rec_encode(enc, &f, false, REC_FLAG_MAPS, &delta), 0);
	assert_true(key.len > 1000);
	assert_true(delta.len < 120);
	assert_int_equal(rec_decode(dec, key.p, key.len, true, 0, &got, &flags, why, sizeof(why)), 0);
	assert_int_equal(rec_decode(dec, delta.p, delta.len, false, 0, &got, &flags, why,
				    sizeof(why)), 0);
	got.mono_ns = f.mono_ns;
	got.wall = f.wall;
	want = json_of(&f);
	have = json_of(&got);
	assert_string_equal(have, want);
	free(want);
	free(have);
	rbuf_free(&key);
	rbuf_free(&delta);
	free_model(&m);
	rec_encoder_free(enc);
	rec_decoder_free(dec);
}

int main(void)
{
	const char *env = getenv("MEVITOP_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_patch_delta),
		cmocka_unit_test(test_mutated_files),
		cmocka_unit_test(test_mutated_payloads),
		cmocka_unit_test(test_mutated_deltas),
		cmocka_unit_test(test_hostile_payloads),
	};
	int rc;

	printf("test_rec_fuzz: MEVITOP_TEST_SEED=%" PRIu64 "\n", seed);
	rng = seed;
	snprintf(path, sizeof(path), "/tmp/mevitop-rec-fuzz-%d", getpid());
	assert_int_equal(stacks_new_replay(&fuzz_stacks), 0);
	write_recording();
	printf("test_rec_fuzz: %d frames changed by a few pages, %d of them with a new mapping\n",
	       patches, relayouts);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(path);
	stacks_free(fuzz_stacks);
	for (int k = 0; k < NFRAMES; k++) {
		free(expect[k]);
		rbuf_free(&payloads[k]);
		rbuf_free(&deltas[k]);
	}
	return rc;
}
