// SPDX-License-Identifier: GPL-2.0
/* The web view's frames from a recording (out/web.h's web_source): the one current at the
 * slider's time, decoded by the reader (rec_load starts at the keyframe before it). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <math.h>
#include "lib/log.h"
#include "out/web_server.h"
#include "rec/replay_web.h"

struct replay_src {
	struct rec_reader *r;
	const char *path;
	double span_s;
};

static int replay_acquire(void *ctx, double at, struct json_frame *f)
{
	struct replay_src *s = ctx;
	uint64_t t = rec_start_ns(s->r) + (uint64_t)llround(at * 1e9);
	size_t i = rec_find(s->r, t);
	uint32_t flags;
	char why[WHY_LEN];
	int err;

	if (i == SIZE_MAX)	/* before the first frame: show the first */
		i = 0;
	/* The slider's end is the last frame, whatever a double's rounding makes of it. */
	if (at >= s->span_s && rec_frames(s->r))
		i = rec_frames(s->r) - 1;
	/* libmicrohttpd answers on one thread: the reader is never asked twice at once. */
	err = rec_load(s->r, i, f, &flags, why, sizeof(why));
	if (err)
		log_warn("%s: frame %zu: %s", s->path, i, why);
	return err;
}

static void replay_release(void *ctx, struct json_frame *f)
{
	(void)ctx;
	(void)f;		/* the reader's until the next rec_load */
}

int replay_web(struct rec_reader *r, const char *path, const struct listen_addr *a)
{
	size_t n = rec_frames(r);
	struct replay_src s = {
		r, path, n ? (rec_info(r, n - 1)->mono_ns - rec_start_ns(r)) / 1e9 : 0,
	};
	struct web_source src = {
		.ctx = &s, .replay = true, .acquire = replay_acquire, .release = replay_release,
		.span_s = s.span_s,
	};
	struct web_server ws;
	sigset_t stop;
	char why[WHY_LEN];
	int sig;

	/* Blocked before the server's thread starts, so only sigwait() takes them. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	if (web_server_start(NULL, a, NULL, &src, &ws, why, sizeof(why))) {
		log_err("%s", why);
		return 1;
	}
	log_note("replaying %s (%zu frames, %.1f s): stop with Ctrl-C", path, n, src.span_s);
	while (sigwait(&stop, &sig))
		;
	web_server_stop(&ws);
	return 0;
}
