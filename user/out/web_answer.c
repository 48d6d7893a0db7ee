// SPDX-License-Identifier: GPL-2.0
/* One API answer, polled or streamed (out/web_int.h): the copy under the source, the JSON
 * after it, and what that cost. */
#include <errno.h>
#include <time.h>
#include "out/web_int.h"

uint64_t web_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void cost_add(struct web_cost *c, uint64_t t0, uint64_t t_release, uint64_t t_done,
		     size_t bytes)
{
	uint64_t held = t_release - t0, total = t_done - t0;

	c->n++;
	c->held_ns += held;
	c->total_ns += total;
	c->held_max_ns = held > c->held_max_ns ? held : c->held_max_ns;
	c->total_max_ns = total > c->total_max_ns ? total : c->total_max_ns;
	c->bytes += bytes;
}

/* The source's frame for one answer of `kind`, and when it was taken (*t0); a busy source
 * is counted and answered -EBUSY, any other failure -EIO. */
static int acquire(struct web *w, enum web_kind kind, double at, struct json_frame *f,
		   uint64_t *t0)
{
	int err = w->src.acquire(w->src.ctx, at, f);

	*t0 = web_mono_ns();
	if (err == -EBUSY)
		w->cost[kind].busy++;
	return !err ? 0 : err == -EBUSY ? err : -EIO;
}

int web_answer(struct web *w, enum web_kind kind, pid_t pid, uint64_t since, double at,
	       struct buf *b, struct web_sent *sent)
{
	struct web_snap snap = { 0 };
	uint64_t t0, t_release;
	struct json_frame f;
	int err;

	err = acquire(w, kind, at, &f, &t0);
	if (err)
		return err;
	/* Held only for the copy: the answer is written after the engine has its lock back. */
	err = pid ? web_snap_process(&f, pid, &snap) : web_snap_list(&f, &snap);
	w->src.release(w->src.ctx, &f);
	t_release = web_mono_ns();
	if (!err)
		err = pid ? web_json_process(&w->deltas, &snap, since, b, sent)
			  : web_json_list(&snap, b, sent);
	web_snap_free(&snap);
	cost_add(&w->cost[kind], t0, t_release, web_mono_ns(), b->len);
	return err;
}

/* The source's page cache, or NULL (none, or a source without one). */
static struct fcache *source_fcache(struct web *w)
{
	return w->src.fcache ? w->src.fcache(w->src.ctx) : NULL;
}

int web_answer_files(struct web *w, const char *sort, bool desc, const char *filter,
		     size_t limit, double at, struct buf *b)
{
	uint64_t t0, t_release;
	struct json_frame f;
	struct fcache *t;
	int err;

	err = acquire(w, WEB_FILES, at, &f, &t0);
	if (err)
		return err;
	t = source_fcache(w);
	err = web_files_list_update(&w->files, t);
	w->src.release(w->src.ctx, &f);
	t_release = web_mono_ns();
	if (!err)
		web_files_list_json(&w->files, t != NULL, sort, desc, filter, limit, b);
	cost_add(&w->cost[WEB_FILES], t0, t_release, web_mono_ns(), b->len);
	return err ? err : b->oom ? -ENOMEM : 0;
}

int web_answer_file(struct web *w, uint64_t dev, uint64_t ino, double at, struct buf *b)
{
	struct web_fsnap s;
	uint64_t t0, t_release;
	struct json_frame f;
	int err;

	err = acquire(w, WEB_FILE, at, &f, &t0);
	if (err)
		return err;
	err = web_files_snap(source_fcache(w), &f, dev, ino, &s);
	w->src.release(w->src.ctx, &f);
	t_release = web_mono_ns();
	if (!err)
		web_files_file_json(&w->files, &s, b);
	web_files_snap_free(&s);
	cost_add(&w->cost[WEB_FILE], t0, t_release, web_mono_ns(), b->len);
	return err ? err : b->oom ? -ENOMEM : 0;
}
