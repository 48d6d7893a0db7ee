// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "lib/array.h"
#include "rec/rec_bytes.h"
#include "rec/rec_codec.h"
#include "rec/rec_reader.h"
#include "rec/rec_format.h"

struct seg_hdr {
	uint32_t segment;
	uint64_t rec_id, start_ns;
};

struct rec_reader {
	int fd[2];			/* FILE.1 (or -1), FILE */
	struct rec_frame_info *frames;
	size_t n, cap;
	uint64_t start_ns;
	char warning[256];
	struct rec_decoder *dec;
	size_t at;			/* frame the decoder holds, SIZE_MAX: none */
	struct json_frame last;		/* ... as rec_decode returned it */
	uint32_t last_flags;
	uint8_t *cbuf, *rbuf;
	size_t ccap, rcap;
	ZSTD_DCtx *dz;
};

static int read_hdr(int fd, const char *path, struct seg_hdr *h, char *why, size_t whylen)
{
	uint8_t b[REC_FILE_HDR_LEN];
	ssize_t got = pread(fd, b, sizeof(b), 0);

	if (got < 0) {
		snprintf(why, whylen, "failed to read %s: %s", path, strerror(errno));
		return -errno;
	}
	if (got == 0) {
		snprintf(why, whylen, "%s is empty: not a mevitop recording", path);
		return -EBADMSG;
	}
	if ((size_t)got < 8 || memcmp(b, REC_MAGIC, 8)) {
		snprintf(why, whylen, "%s is not a mevitop recording", path);
		return -EBADMSG;
	}
	if ((size_t)got < sizeof(b)) {
		snprintf(why, whylen, "%s: the recording header is cut short", path);
		return -EBADMSG;
	}
	if (crc32(0, b, 36) != rec_le32(b + 36)) {
		snprintf(why, whylen, "%s: the recording header is damaged (checksum)", path);
		return -EBADMSG;
	}
	if ((b[8] | b[9] << 8) != REC_VERSION) {
		snprintf(why, whylen, "%s: recording format version %u, this mevitop reads only "
			 "version %u (record it again with this mevitop)", path, b[8] | b[9] << 8,
			 REC_VERSION);
		return -EPROTONOSUPPORT;
	}
	if ((b[10] | b[11] << 8) != REC_FILE_HDR_LEN) {
		snprintf(why, whylen, "%s: the recording header is damaged (length)", path);
		return -EBADMSG;
	}
	h->segment = rec_le32(b + 12);
	h->rec_id = rec_le64(b + 16);
	h->start_ns = rec_le64(b + 24);
	return 0;
}

static void warn_at(struct rec_reader *r, const char *path, uint64_t off, const char *what)
{
	if (!r->warning[0])
		snprintf(r->warning, sizeof(r->warning), "%s: the recording ends at offset %llu "
			 "(%s): frames after it are lost", path, (unsigned long long)off, what);
}

/* Indexes the frames of one segment; stops at the first one that cannot be whole. */
static int index_segment(struct rec_reader *r, int seg, const char *path)
{
	struct stat st;
	uint64_t off = REC_FILE_HDR_LEN, size;
	bool keyed = false;

	if (fstat(r->fd[seg], &st))
		return -errno;
	size = st.st_size;
	while (off < size) {
		uint8_t h[REC_FRAME_HDR_LEN];
		struct rec_frame_info fi = { 0 };
		uint64_t bits;

		if (size - off < sizeof(h)) {
			warn_at(r, path, off, "a cut-off frame header");
			break;
		}
		if (pread(r->fd[seg], h, sizeof(h), off) != (ssize_t)sizeof(h))
			return -errno ? -errno : -EIO;
		if (rec_le32(h) != REC_FRAME_MAGIC || crc32(0, h, 36) != rec_le32(h + 36)) {
			warn_at(r, path, off, "a damaged frame header");
			break;
		}
		fi.type = h[4];
		fi.seg = seg;
		fi.mono_ns = rec_le64(h + 8);
		bits = rec_le64(h + 16);
		memcpy(&fi.wall, &bits, sizeof(bits));
		fi.clen = rec_le32(h + 24);
		fi.rlen = rec_le32(h + 28);
		fi.crc = rec_le32(h + 32);
		fi.off = off + sizeof(h);
		if ((fi.type != REC_KEYFRAME && fi.type != REC_DELTA) || fi.rlen > REC_MAX_RAW ||
		    fi.clen == 0 || fi.clen > ZSTD_compressBound(fi.rlen)) {
			warn_at(r, path, off, "a frame header with impossible fields");
			break;
		}
		if (fi.clen > size - fi.off) {
			warn_at(r, path, off, "a cut-off frame");
			break;
		}
		if (r->n && fi.mono_ns < r->frames[r->n - 1].mono_ns) {
			warn_at(r, path, off, "a frame earlier than the one before it");
			break;
		}
		off = fi.off + fi.clen;
		/* Deltas before the first keyframe have nothing to apply to. */
		keyed |= fi.type == REC_KEYFRAME;
		if (!keyed)
			continue;
		if (array_reserve(r->frames, r->n, r->cap, 1024))
			return -ENOMEM;
		r->frames[r->n++] = fi;
	}
	return 0;
}

int rec_open(const char *path, struct rec_reader **out, char *why, size_t whylen)
{
	struct rec_reader *r = calloc(1, sizeof(*r));
	struct seg_hdr cur, old;
	char *old_path = NULL;
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->fd[0] = r->fd[1] = -1;
	r->at = SIZE_MAX;
	r->dec = rec_decoder_new();
	r->dz = ZSTD_createDCtx();
	if (!r->dec || !r->dz || asprintf(&old_path, "%s.1", path) < 0) {
		old_path = NULL;
		err = -ENOMEM;
		goto fail;
	}
	r->fd[1] = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd[1] < 0) {
		err = -errno;
		snprintf(why, whylen, "failed to open recording %s: %s", path, strerror(-err));
		goto fail;
	}
	err = read_hdr(r->fd[1], path, &cur, why, whylen);
	if (err)
		goto fail;
	r->start_ns = cur.start_ns;
	/* The previous segment, if the ring kept one of this recording. */
	r->fd[0] = open(old_path, O_RDONLY | O_CLOEXEC);
	if (r->fd[0] >= 0) {
		char ignore[256];

		if (read_hdr(r->fd[0], old_path, &old, ignore, sizeof(ignore)) ||
		    old.rec_id != cur.rec_id || old.segment + 1 != cur.segment) {
			close(r->fd[0]);
			r->fd[0] = -1;
		}
	}
	if (r->fd[0] >= 0) {
		err = index_segment(r, 0, old_path);
		/* A damaged older segment ends early; the newer one is still whole. */
		if (!err && r->warning[0])
			r->warning[0] = 0;
	}
	if (!err)
		err = index_segment(r, 1, path);
	if (err) {
		snprintf(why, whylen, "failed to read recording %s: %s", path, strerror(-err));
		goto fail;
	}
	if (!r->n) {
		snprintf(why, whylen, "%s: the recording holds no complete frame%s%s", path,
			 r->warning[0] ? ": " : "", r->warning);
		err = -EBADMSG;
		goto fail;
	}
	free(old_path);
	*out = r;
	return 0;
fail:
	free(old_path);
	rec_close(r);
	return err;
}

void rec_close(struct rec_reader *r)
{
	if (!r)
		return;
	for (int i = 0; i < 2; i++)
		if (r->fd[i] >= 0)
			close(r->fd[i]);
	free(r->frames);
	rec_decoder_free(r->dec);
	ZSTD_freeDCtx(r->dz);
	free(r->cbuf);
	free(r->rbuf);
	free(r);
}

size_t rec_frames(const struct rec_reader *r)
{
	return r->n;
}

const struct rec_frame_info *rec_info(const struct rec_reader *r, size_t i)
{
	return i < r->n ? &r->frames[i] : NULL;
}

uint64_t rec_start_ns(const struct rec_reader *r)
{
	return r->start_ns;
}

const char *rec_warning(const struct rec_reader *r)
{
	return r->warning[0] ? r->warning : NULL;
}

size_t rec_find(const struct rec_reader *r, uint64_t mono_ns)
{
	size_t lo = 0, hi = r->n;

	/* First frame later than mono_ns, minus one. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->frames[mid].mono_ns <= mono_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : SIZE_MAX;
}

/* A frame's buffers: exactly as large as the largest frame loaded so far. */
static int grow(uint8_t **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	if (array_resize(*p, need))
		return -ENOMEM;
	*cap = need;
	return 0;
}

static int load_one(struct rec_reader *r, size_t i, struct json_frame *f, uint32_t *flags,
		    char *why, size_t whylen)
{
	const struct rec_frame_info *fi = &r->frames[i];
	size_t got;

	if (grow(&r->cbuf, &r->ccap, fi->clen) || grow(&r->rbuf, &r->rcap, fi->rlen ? fi->rlen : 1))
		return -ENOMEM;
	if (pread(r->fd[fi->seg], r->cbuf, fi->clen, fi->off) != (ssize_t)fi->clen) {
		snprintf(why, whylen, "frame %zu: failed to read: %s", i,
			 errno ? strerror(errno) : "file shrank");
		return -EIO;
	}
	if (crc32(0, r->cbuf, fi->clen) != fi->crc) {
		snprintf(why, whylen, "frame %zu: payload damaged (checksum)", i);
		return -EBADMSG;
	}
	if (ZSTD_getFrameContentSize(r->cbuf, fi->clen) != fi->rlen) {
		snprintf(why, whylen, "frame %zu: payload size does not match its header", i);
		return -EBADMSG;
	}
	got = ZSTD_decompressDCtx(r->dz, r->rbuf, fi->rlen, r->cbuf, fi->clen);
	if (ZSTD_isError(got) || got != fi->rlen) {
		snprintf(why, whylen, "frame %zu: payload does not decompress: %s", i,
			 ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short");
		return -EBADMSG;
	}
	return rec_decode(r->dec, r->rbuf, fi->rlen, fi->type == REC_KEYFRAME, fi->mono_ns, f,
			  flags, why, whylen);
}

int rec_load(struct rec_reader *r, size_t i, struct json_frame *f, uint32_t *flags,
	     char *why, size_t whylen)
{
	size_t k = i, j;
	int err = 0;

	if (i >= r->n)
		return -ERANGE;
	if (r->at == i) {
		*f = r->last;
		*flags = r->last_flags;
		return 0;
	}
	while (k > 0 && r->frames[k].type != REC_KEYFRAME)
		k--;
	/* Continue from the frame the decoder holds when it lies between the keyframe and i. */
	j = (r->at != SIZE_MAX && r->at >= k && r->at < i) ? r->at + 1 : k;
	for (; j <= i; j++) {
		err = load_one(r, j, f, flags, why, whylen);
		if (err) {
			r->at = SIZE_MAX;
			rec_decoder_reset(r->dec);
			memset(f, 0, sizeof(*f));
			return err;
		}
		r->at = j;
	}
	/* Every frame carries the wall and monotonic time of its own drain. */
	f->mono_ns = r->frames[i].mono_ns;
	f->wall = r->frames[i].wall;
	r->last = *f;
	r->last_flags = *flags;
	return 0;
}
