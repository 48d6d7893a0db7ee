// SPDX-License-Identifier: GPL-2.0
/* One API answer, polled or streamed (out/web_int.h): the copy under the source, the JSON
 * after it, and what that cost. */
#include <errno.h>
#include <inttypes.h>
#include <time.h>
#include "engine/engine.h"
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

/* The list's rows of frame f: this frame's shared copy (w->list), taken now by the first
 * answer of the frame.  0 or -ENOMEM (no rows kept). */
static int list_rows(struct web *w, enum web_kind kind, const struct json_frame *f)
{
	int err;

	if (w->list.key == web_snap_key(f))
		return 0;
	web_snap_free(&w->list);
	w->cost[kind].copies++;
	err = web_snap_list(f, &w->list);
	if (err)
		web_snap_free(&w->list);
	return err;
}

/* Process pid of frame f into snap: the frame's shared copy, else live the last copy if the
 * process has not changed since, else a new one (which the JSON then keeps as the
 * process's base, for the frame's other answers).  0, -ESRCH or -ENOMEM. */
static int process_copy(struct web *w, enum web_kind kind, const struct json_frame *f,
			pid_t pid, struct web_snap *snap)
{
	const struct proc *p = web_snap_find(f, pid);
	struct web_snap head;
	struct proc_shown now;

	if (p && web_deltas_share(&w->deltas, p, web_snap_key(f), snap))
		return 0;
	/* A replay's frames are decoded afresh: their generations say nothing of each other. */
	if (p && !w->src.replay) {
		model_shown(p, &now);
		web_snap_head(f, &head);
		if (web_deltas_unchanged(&w->deltas, p, &now, &head, snap)) {
			w->cost[kind].unchanged++;
			return 0;
		}
	}
	if (p)
		w->cost[kind].copies++;
	return web_snap_process(f, pid, snap);
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
	/* Held only for the copy (none when the frame's is there): the answer is written
	 * after the engine has its lock back. */
	err = pid ? process_copy(w, kind, &f, pid, &snap) : list_rows(w, kind, &f);
	w->src.release(w->src.ctx, &f);
	t_release = web_mono_ns();
	if (!err)
		err = pid ? web_json_process(&w->deltas, &snap, since, b, sent)
			  : web_json_list(&w->list, b, sent);
	web_snap_free(&snap);
	cost_add(&w->cost[kind], t0, t_release, web_mono_ns(), b->len);
	return err;
}

int web_answer_list_event(struct web *w, struct web_rows *was, struct buf *b)
{
	uint64_t t0, t_release;
	struct json_frame f;
	int err;

	err = acquire(w, WEB_EVENTS, 0, &f, &t0);
	if (err)
		return err;
	err = list_rows(w, WEB_EVENTS, &f);
	w->src.release(w->src.ctx, &f);
	t_release = web_mono_ns();
	if (!err)
		err = web_json_list_event(&w->list, was, b);
	cost_add(&w->cost[WEB_EVENTS], t0, t_release, web_mono_ns(), b->len);
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

/* An answer copied under the source and written after it: snap fills the copy from the
 * held frame (0 or -errno), json writes it without the source, drop frees it. */
struct answer_ops {
	int (*snap)(struct web *w, const struct json_frame *f, void *copy);
	void (*json)(struct web *w, void *copy, struct buf *b);
	void (*drop)(void *copy);
};

static int answer_copied(struct web *w, enum web_kind kind, double at,
			 const struct answer_ops *ops, void *copy, struct buf *b)
{
	uint64_t t0, t_release;
	struct json_frame f;
	int err;

	err = acquire(w, kind, at, &f, &t0);
	if (err)
		return err;
	err = ops->snap(w, &f, copy);
	w->src.release(w->src.ctx, &f);
	t_release = web_mono_ns();
	if (!err)
		ops->json(w, copy, b);
	ops->drop(copy);
	cost_add(&w->cost[kind], t0, t_release, web_mono_ns(), b->len);
	return err ? err : b->oom ? -ENOMEM : 0;
}

struct file_copy {
	uint64_t dev, ino;
	struct web_fsnap s;
};

static int file_snap(struct web *w, const struct json_frame *f, void *copy)
{
	struct file_copy *c = copy;

	return web_files_snap(source_fcache(w), f, c->dev, c->ino, &c->s);
}

static void file_json(struct web *w, void *copy, struct buf *b)
{
	web_files_file_json(&w->files, &((struct file_copy *)copy)->s, b);
}

static void file_drop(void *copy)
{
	web_files_snap_free(&((struct file_copy *)copy)->s);
}

int web_answer_file(struct web *w, uint64_t dev, uint64_t ino, double at, struct buf *b)
{
	static const struct answer_ops ops = { file_snap, file_json, file_drop };
	struct file_copy c = { .dev = dev, .ino = ino };

	return answer_copied(w, WEB_FILE, at, &ops, &c, b);
}

struct touch_copy {
	pid_t pid;
	struct web_tsnap s;
};

static int touch_snap(struct web *w, const struct json_frame *f, void *copy)
{
	struct touch_copy *c = copy;

	(void)w;
	return web_touch_snap(f, c->pid, &c->s);
}

static void touch_json(struct web *w, void *copy, struct buf *b)
{
	(void)w;
	web_touch_json(&((struct touch_copy *)copy)->s, b);
}

static void touch_drop(void *copy)
{
	web_touch_snap_free(&((struct touch_copy *)copy)->s);
}

int web_answer_touch(struct web *w, pid_t pid, double at, struct buf *b)
{
	static const struct answer_ops ops = { touch_snap, touch_json, touch_drop };
	struct touch_copy c = { .pid = pid };

	return answer_copied(w, WEB_TOUCH, at, &ops, &c, b);
}

struct who_copy {
	pid_t pid;
	uint64_t page, count;
	struct share_who who;
};

static int who_snap(struct web *w, const struct json_frame *f, void *copy)
{
	struct who_copy *c = copy;

	(void)f;
	return w->src.share_who(w->src.ctx, c->pid, c->page, &c->who, &c->count);
}

static void who_json(struct web *w, void *copy, struct buf *b)
{
	struct who_copy *c = copy;

	(void)w;
	json_buf_put(b, "{\"pid\": %d, \"page\": %" PRIu64 ", \"known\": %s, \"cut\": %s, "
		     "\"count\": %" PRIu64 ", \"n\": %u, \"pids\": [", (int)c->pid, c->page,
		     c->who.known ? "true" : "false", c->who.cut ? "true" : "false", c->count,
		     c->who.n);
	for (uint32_t i = 0; i < c->who.n && i < SHARE_WHO_MAX; i++)
		json_buf_put(b, "%s%d", i ? ", " : "", (int)c->who.pids[i]);
	json_buf_put(b, "], \"comm\": ");
	c->who.comm[sizeof(c->who.comm) - 1] = 0;
	json_buf_str(b, c->who.n ? c->who.comm : "");
	json_buf_put(b, "}");
}

static void who_drop(void *copy)
{
	(void)copy;		/* all in place */
}

int web_answer_who(struct web *w, pid_t pid, uint64_t page, struct buf *b)
{
	static const struct answer_ops ops = { who_snap, who_json, who_drop };
	struct who_copy c = { .pid = pid, .page = page };

	if (!w->src.share_who)
		return -ENOENT;		/* a replay: not a frame to load for nothing */
	return answer_copied(w, WEB_WHO, 0, &ops, &c, b);
}
