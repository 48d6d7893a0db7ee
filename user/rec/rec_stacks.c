// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rec/rec_format.h"
#include "rec/rec_stacks.h"

/* A frame's optional strings. */
#define FRAME_FUNC	(1u << 0)
#define FRAME_MODULE	(1u << 1)
#define FRAME_FILE	(1u << 2)

#define REC_MAX_FRAMES	256	/* a stack's frames (the BPF side takes 32) */

void rec_put_stacks(struct rbuf *b, struct stacks *s, size_t first)
{
	size_t n = stacks_count(s), i;

	rbuf_varint(b, first);
	rbuf_varint(b, n - first);
	for (i = first; i < n; i++) {
		const struct stack *st = stacks_get(s, i);

		rbuf_u8(b, st->unwind == UNWIND_FP);
		rbuf_varint(b, st->nframes);
		for (uint16_t k = 0; k < st->nframes; k++) {
			const struct sym_frame *f = &st->frames[k];

			rbuf_varint(b, f->addr);
			rbuf_u8(b, (f->func ? FRAME_FUNC : 0) | (f->module ? FRAME_MODULE : 0) |
				   (f->file ? FRAME_FILE : 0));
			rbuf_str(b, f->name);
			if (f->func)
				rbuf_str(b, f->func);
			if (f->module)
				rbuf_str(b, f->module);
			if (f->file) {
				rbuf_str(b, f->file);
				rbuf_varint(b, rec_zigzag(f->line));
			}
			rbuf_varint(b, f->func_start);
		}
	}
}

void rec_put_touches(struct rbuf *b, struct stacks *s, pid_t pid, uint64_t mono_ns)
{
	const struct stack_touch *t;
	uint64_t from = 0;
	size_t n, i;

	stacks_touches(s, pid, &t, &n);
	rbuf_varint(b, n);
	for (i = 0; i < n; i++) {
		rbuf_varint(b, t[i].from - from);
		rbuf_varint(b, t[i].to - t[i].from);
		rbuf_varint(b, t[i].stack);
		rbuf_varint(b, t[i].tid);
		rbuf_varint(b, rec_zigzag((int64_t)(t[i].ts - mono_ns)));
		rbuf_varint(b, rec_zigzag((int64_t)(t[i].addr - (t[i].from << 12))));
		from = t[i].from;
	}
}

static int bad(char *why, size_t whylen, const char *what)
{
	snprintf(why, whylen, "%s", what);
	return -EBADMSG;
}

static void clear_frames(struct sym_frame *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].name);
		free(f[i].func);
		free(f[i].module);
		free(f[i].file);
	}
}

/* One stack's frames into f (strings allocated); 0 or -EBADMSG. */
static int get_frames(struct rcur *c, struct sym_frame *f, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		uint8_t has;

		f[k].addr = rcur_varint(c);
		has = rcur_u8(c);
		f[k].name = rcur_str(c, REC_MAX_STR);
		if (has & FRAME_FUNC)
			f[k].func = rcur_str(c, REC_MAX_STR);
		if (has & FRAME_MODULE)
			f[k].module = rcur_str(c, REC_MAX_STR);
		if (has & FRAME_FILE) {
			int64_t line;

			f[k].file = rcur_str(c, REC_MAX_STR);
			line = rec_unzigzag(rcur_varint(c));
			f[k].line = line >= 0 && line < 1 << 30 ? (int)line : 0;
		}
		f[k].func_start = rcur_varint(c);
		if (c->bad || has > 7)
			return -EBADMSG;
	}
	return 0;
}

int rec_get_stacks(struct rcur *c, struct stacks **s, char *why, size_t whylen)
{
	uint64_t first = rcur_varint(c), n = rcur_varint(c), i;
	int err;

	/* Each stack takes at least 6 bytes (unwind, count, one frame of 4). */
	if (c->bad || n > rcur_left(c) / 6 || first != (*s ? stacks_count(*s) : 0) ||
	    first + n > STACKS_MAX)
		return bad(why, whylen, "bad stacks section");
	if (!*s && (err = stacks_new_replay(s)))
		return err;
	for (i = 0; i < n; i++) {
		struct sym_frame f[REC_MAX_FRAMES];
		struct stack st = { .frames = f };
		uint8_t unwind = rcur_u8(c);
		uint64_t nframes = rcur_varint(c);

		if (c->bad || unwind > 1 || nframes == 0 || nframes > REC_MAX_FRAMES)
			return bad(why, whylen, "bad stack in the stacks section");
		memset(f, 0, nframes * sizeof(*f));
		st.unwind = unwind ? UNWIND_FP : UNWIND_IP;
		st.nframes = nframes;
		err = get_frames(c, f, nframes);
		if (!err)
			err = stacks_append(*s, &st);
		clear_frames(f, nframes);
		if (err)
			return err == -EBADMSG ? bad(why, whylen, "bad frame in the stacks section")
					       : err;
	}
	return rcur_left(c) ? bad(why, whylen, "bad stacks section") : 0;
}

int rec_get_touches(struct rcur *c, uint64_t mono_ns, struct stack_touch **t, size_t *n,
		    char *why, size_t whylen)
{
	uint64_t cnt = rcur_varint(c), i, from = 0;
	struct stack_touch *v;

	*t = NULL;
	*n = 0;
	/* Each row takes at least 6 bytes. */
	if (c->bad || cnt > rcur_left(c) / 6)
		return bad(why, whylen, "bad first-touch stacks section");
	v = calloc(cnt ? cnt : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < cnt; i++) {
		uint64_t gap = rcur_varint(c), len = rcur_varint(c), stack = rcur_varint(c);
		uint64_t tid = rcur_varint(c);

		from += gap;
		v[i].from = from;
		v[i].to = from + len;
		v[i].stack = stack;
		v[i].tid = tid;
		v[i].ts = mono_ns + (uint64_t)rec_unzigzag(rcur_varint(c));
		v[i].addr = (from << 12) + (uint64_t)rec_unzigzag(rcur_varint(c));
		if (c->bad || gap > REC_MAX_PAGE || from >= REC_MAX_PAGE || len == 0 ||
		    len > REC_MAX_PAGE - from || stack >= STACKS_MAX || tid > UINT32_MAX) {
			free(v);
			return bad(why, whylen, "bad row in the first-touch stacks section");
		}
	}
	if (rcur_left(c)) {
		free(v);
		return bad(why, whylen, "bad first-touch stacks section");
	}
	*t = v;
	*n = cnt;
	return 0;
}
