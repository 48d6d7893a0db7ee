// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "lib/array.h"
#include "rec/rec_bytes.h"
#include "rec/rec_codec.h"
#include "rec/rec_writer.h"
#include "rec/rec_format.h"

/* zstd's default level: ~10x on page runs at a fraction of a millisecond per frame. */
#define REC_ZSTD_LEVEL 3

struct rec_writer {
	char *path, *old_path, *new_path;
	int fd;
	uint64_t max_size, size, start_ns, rec_id;
	uint32_t segment;
	unsigned keyframe_every, since_key;
	bool fsync_every;
	uint64_t key_bytes, delta_bytes;	/* the last keyframe's, and the deltas' since */
	uint64_t frames_in_seg;
	struct rec_encoder *enc;
	ZSTD_CCtx *zc;
	struct rbuf raw, out;
};

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= w;
	}
	return 0;
}

static int create_segment(struct rec_writer *w, const char *path, char *why, size_t whylen)
{
	int err;

	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		err = -errno;
		snprintf(why, whylen, "failed to create recording %s: %s", path, strerror(-err));
		return err;
	}
	w->size = 0;
	w->frames_in_seg = 0;
	return 0;
}

/* The header goes in with the first frame: the recording starts at that frame's time. */
static int write_header(struct rec_writer *w, char *why, size_t whylen)
{
	uint8_t h[REC_FILE_HDR_LEN] = { 0 };
	int err;

	memcpy(h, REC_MAGIC, 8);
	h[8] = REC_VERSION;
	h[10] = REC_FILE_HDR_LEN;
	rbuf_le32(h + 12, w->segment);
	rbuf_le64(h + 16, w->rec_id);
	rbuf_le64(h + 24, w->start_ns);
	rbuf_le32(h + 36, crc32(0, h, 36));
	err = write_all(w->fd, h, sizeof(h));
	if (err) {
		snprintf(why, whylen, "failed to write recording %s: %s", w->path, strerror(-err));
		return err;
	}
	w->size = sizeof(h);
	return 0;
}

int rec_writer_open(const struct rec_writer_opts *o, struct rec_writer **out, char *why,
		    size_t whylen)
{
	struct rec_writer *w = calloc(1, sizeof(*w));
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->max_size = o->max_size;
	w->fsync_every = o->fsync_every;
	w->keyframe_every = o->keyframe_every ? o->keyframe_every : REC_KEYFRAME_EVERY;
	w->path = strdup(o->path);
	if (w->path && asprintf(&w->old_path, "%s.1", o->path) < 0)
		w->old_path = NULL;
	if (w->path && asprintf(&w->new_path, "%s.new", o->path) < 0)
		w->new_path = NULL;
	w->enc = rec_encoder_new();
	if (w->enc)
		rec_encoder_record_heat(w->enc, o->heat);
	w->zc = ZSTD_createCCtx();
	if (!w->path || !w->old_path || !w->new_path || !w->enc || !w->zc) {
		rec_writer_close(w);
		return -ENOMEM;
	}
	if (getrandom(&w->rec_id, sizeof(w->rec_id), 0) != sizeof(w->rec_id))
		w->rec_id = (uint64_t)time(NULL) << 20 ^ getpid();
	/* A FILE.1 of an older recording would otherwise look like our past. */
	if (unlink(w->old_path) && errno != ENOENT) {
		err = -errno;
		snprintf(why, whylen, "failed to remove old segment %s: %s", w->old_path,
			 strerror(-err));
		rec_writer_close(w);
		return err;
	}
	err = create_segment(w, w->path, why, whylen);
	if (err) {
		rec_writer_close(w);
		return err;
	}
	*out = w;
	return 0;
}

/* Encodes and compresses f into w->out (header included). */
static int build(struct rec_writer *w, const struct json_frame *f, uint32_t flags, bool key)
{
	uint8_t *h;
	size_t bound, clen;
	uint64_t bits;
	int err;

	w->raw.len = 0;
	err = rec_encode(w->enc, f, key, flags, &w->raw);
	if (err)
		return err;
	if (w->raw.len > REC_MAX_RAW)
		return -EFBIG;
	bound = ZSTD_compressBound(w->raw.len);
	w->out.len = 0;
	rbuf_bytes(&w->out, NULL, 0);
	if (w->out.cap < REC_FRAME_HDR_LEN + bound) {	/* zstd writes into it directly */
		if (array_resize(w->out.p, REC_FRAME_HDR_LEN + bound))
			return -ENOMEM;
		w->out.cap = REC_FRAME_HDR_LEN + bound;
	}
	clen = ZSTD_compressCCtx(w->zc, w->out.p + REC_FRAME_HDR_LEN, bound, w->raw.p, w->raw.len,
				 REC_ZSTD_LEVEL);
	if (ZSTD_isError(clen))
		return -EIO;
	h = w->out.p;
	memset(h, 0, REC_FRAME_HDR_LEN);
	rbuf_le32(h, REC_FRAME_MAGIC);
	h[4] = key ? REC_KEYFRAME : REC_DELTA;
	rbuf_le64(h + 8, f->mono_ns);
	memcpy(&bits, &f->wall, sizeof(bits));
	rbuf_le64(h + 16, bits);
	rbuf_le32(h + 24, clen);
	rbuf_le32(h + 28, w->raw.len);
	rbuf_le32(h + 32, crc32(0, h + REC_FRAME_HDR_LEN, clen));
	rbuf_le32(h + 36, crc32(0, h, 36));
	w->out.len = REC_FRAME_HDR_LEN + clen;
	return 0;
}

/*
 * What a power cut may take: written frames live in the page cache until the kernel writes
 * them back (~30 s).  A keyframe (and a new segment, before it replaces FILE) is synced, so
 * at most the deltas since the last keyframe are at risk; --fsync syncs every frame.  The
 * cost is the disk's: fdatasync took 2-4 ms (at most ~10 ms) a frame here
 * (bench/rec_bench.py --only fsync), blocking only the recorder's loop.
 */
static int sync_frame(struct rec_writer *w, bool key, const char *path, char *why,
		      size_t whylen)
{
	if (!key && !w->fsync_every)
		return 0;
	if (fdatasync(w->fd)) {
		int err = -errno;

		snprintf(why, whylen, "failed to sync recording %s: %s", path, strerror(-err));
		return err;
	}
	return 0;
}

static int fail(char *why, size_t whylen, const char *what, const char *path)
{
	int err = -errno;

	snprintf(why, whylen, "failed to %s %s: %s", what, path, strerror(-err));
	return err;
}

/*
 * FILE becomes FILE.1 (dropping the older one) and a new FILE starts with `key` (a built
 * keyframe).  FILE exists at every moment, always whole: FILE.1 is a hard link made before,
 * and the new segment is written as FILE.new and renamed over FILE once its first frame is
 * in.  A crash in between leaves FILE (and maybe an unpaired FILE.1 or a stray FILE.new).
 */
static int rotate(struct rec_writer *w, char *why, size_t whylen)
{
	int old_fd = w->fd, err;

	if (unlink(w->old_path) && errno != ENOENT)
		return fail(why, whylen, "remove", w->old_path);
	if (link(w->path, w->old_path))
		return fail(why, whylen, "link", w->old_path);
	w->segment++;
	err = create_segment(w, w->new_path, why, whylen);
	if (!err)
		err = write_header(w, why, whylen);
	if (!err && (err = write_all(w->fd, w->out.p, w->out.len)))
		snprintf(why, whylen, "failed to write recording %s: %s", w->new_path,
			 strerror(-err));
	if (!err)
		err = sync_frame(w, true, w->new_path, why, whylen);
	if (!err && rename(w->new_path, w->path))
		err = fail(why, whylen, "rename", w->new_path);
	if (err) {
		if (w->fd >= 0)
			close(w->fd);
		w->fd = old_fd;		/* stopped anyway: the caller reports why */
		return err;
	}
	close(old_fd);
	return 0;
}

int rec_writer_frame(struct rec_writer *w, const struct json_frame *f, uint32_t flags,
		     char *why, size_t whylen)
{
	bool key = w->since_key == 0 || w->since_key >= w->keyframe_every ||
		   w->delta_bytes >= REC_KEY_DELTA_RATIO * w->key_bytes;
	int err;

	if (!w->size) {
		w->start_ns = f->mono_ns;
		err = write_header(w, why, whylen);
		if (err)
			return err;
	}
	err = build(w, f, flags, key);
	/* Each segment holds at most half the limit, so FILE and FILE.1 fit in it; a segment
	 * always starts with a keyframe, so dropping FILE.1 leaves FILE readable. */
	if (!err && w->max_size && w->frames_in_seg && w->size + w->out.len > w->max_size / 2) {
		key = true;
		err = build(w, f, flags, key);
		if (!err) {
			err = rotate(w, why, whylen);
			if (err)
				return err;
		}
	} else if (!err) {
		err = write_all(w->fd, w->out.p, w->out.len);
		if (err) {
			snprintf(why, whylen, "failed to write recording %s: %s", w->path,
				 strerror(-err));
			return err;
		}
		err = sync_frame(w, key, w->path, why, whylen);
		if (err)
			return err;
	}
	if (err) {
		snprintf(why, whylen, "failed to encode a frame: %s", strerror(-err));
		w->since_key = 0;
		return err;
	}
	w->size += w->out.len;
	w->frames_in_seg++;
	w->since_key = key ? 1 : w->since_key + 1;
	if (key) {
		w->key_bytes = w->out.len;
		w->delta_bytes = 0;
	} else {
		w->delta_bytes += w->out.len;
	}
	return 0;
}

void rec_writer_close(struct rec_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	rec_encoder_free(w->enc);
	ZSTD_freeCCtx(w->zc);
	rbuf_free(&w->raw);
	rbuf_free(&w->out);
	free(w->path);
	free(w->old_path);
	free(w->new_path);
	free(w);
}
