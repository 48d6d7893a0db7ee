// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include <time.h>
#include "model/share.h"
#include "out/http.h"
#include "out/web_live.h"

static int live_acquire(void *ctx, double at, struct json_frame *f)
{
	struct engine *e = ctx;
	struct timespec ts;

	(void)at;		/* live: always now */
	if (engine_lock_timed(e, HTTP_LOCK_WAIT_MS))
		return -EBUSY;
	memset(f, 0, sizeof(*f));
	clock_gettime(CLOCK_REALTIME, &ts);
	f->mono_ns = engine_now_ns();
	f->tick = engine_ticks(e);	/* the answers of one tick share their copies */
	f->wall = ts.tv_sec + ts.tv_nsec / 1e9;
	f->mode = engine_mode_name(engine_mode(e));
	/* The engine's own processes, valid while its lock is held: nothing is copied. */
	f->procs = engine_procs(e, &f->n);
	f->nprocs = f->n;
	f->stacks = engine_stacks(e);	/* --stacks: the first touches, or NULL */
	return 0;
}

static void live_release(void *ctx, struct json_frame *f)
{
	(void)f;
	engine_unlock(ctx);
}

/* A new frame is a tick, its frame written: the streams hear of it from the engine's
 * drive, nothing polls. */
static void live_watch(void *ctx, void (*fn)(void *arg), void *arg)
{
	engine_on_tick(ctx, fn, arg);
}

static struct fcache *live_fcache(void *ctx)
{
	return engine_fcache(ctx);
}

/* The engine reads the pagemap entries of its other processes here: under its lock (the
 * answer acquired it), as the terminal's cursor line asks (engine_share_who keeps the
 * answer for the tick). */
static int live_share_who(void *ctx, pid_t pid, uint64_t page, struct share_who *out,
			  uint64_t *count)
{
	struct engine *e = ctx;
	struct proc *p;
	int err;

	err = engine_share_who(e, pid, page, out);
	p = err ? NULL : engine_find(e, pid);
	*count = p && p->share ? share_page_count(p->share, page) : 0;
	return err;
}

void web_live_source(struct engine *e, struct web_source *out)
{
	*out = (struct web_source){ .ctx = e, .acquire = live_acquire, .release = live_release,
				    .watch = live_watch, .fcache = live_fcache,
				    .share_who = live_share_who };
}
