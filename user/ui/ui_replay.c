// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/engine.h"
#include "lib/log.h"
#include "model/fcache.h"
#include "model/model.h"
#include "rec/replay.h"
#include "ui/ui_replay.h"
#include "ui/ui_state.h"

#define TIMELINE_SAMPLES 512	/* frames decoded up front for the bar */

struct ui_replay {
	struct rec_reader *r;
	size_t at;			/* frame under the cursor */
	struct json_frame frame;
	struct mem_summary mem;		/* the frame's, when have_mem */
	bool have_mem;
	bool playing;
	unsigned speed;			/* 1, 10, 100 */
	uint64_t play_t0_ns;		/* wall clock when playing started ... */
	uint64_t play_rec0_ns;		/* ... at this recording time */
	uint64_t *resident;		/* total resident pages at each sampled frame */
	bool diff;			/* the diff layer is on */
	size_t ref_at;			/* the marked frame */
	struct proc **ref;		/* copies of its processes (the decoder's are gone) */
	size_t nref;
	size_t nsamples;
	uint64_t max_resident;
};

static uint64_t frame_ns(const struct ui_replay *rp, size_t i);

static uint64_t frame_resident(const struct json_frame *f)
{
	uint64_t total = 0;

	for (size_t i = 0; i < f->n; i++) {
		uint64_t c[PS_COUNT];

		model_totals(f->procs[i], c);
		total += c[PS_RESIDENT];
	}
	return total;
}

static int load(struct ui_replay *rp, size_t i, char *why, size_t whylen)
{
	uint32_t flags;
	int err = rec_load(rp->r, i, &rp->frame, &flags, why, whylen);

	if (!err) {
		rp->at = i;
		rp->have_mem = !replay_frame_memory(&rp->frame, &rp->mem);
	}
	return err;
}

const struct mem_summary *ui_replay_memory(const struct ui_replay *rp)
{
	return rp->have_mem ? &rp->mem : NULL;
}

struct ui_replay *ui_replay_new(struct rec_reader *r, char *why, size_t whylen)
{
	struct ui_replay *rp = calloc(1, sizeof(*rp));
	size_t n = rec_frames(r);

	if (!rp) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	rp->r = r;
	rp->speed = 1;
	rp->nsamples = n < TIMELINE_SAMPLES ? n : TIMELINE_SAMPLES;
	rp->resident = calloc(rp->nsamples, sizeof(*rp->resident));
	if (!rp->resident) {
		snprintf(why, whylen, "out of memory");
		ui_replay_free(rp);
		return NULL;
	}
	for (size_t s = 0; s < rp->nsamples; s++) {
		size_t i = rp->nsamples > 1 ? s * (n - 1) / (rp->nsamples - 1) : 0;

		if (load(rp, i, why, whylen)) {
			rp->nsamples = s;	/* a damaged tail: the bar ends there */
			break;
		}
		rp->resident[s] = frame_resident(&rp->frame);
		if (rp->resident[s] > rp->max_resident)
			rp->max_resident = rp->resident[s];
	}
	if (load(rp, 0, why, whylen)) {
		ui_replay_free(rp);
		return NULL;
	}
	return rp;
}

static void drop_ref(struct ui_replay *rp)
{
	for (size_t i = 0; i < rp->nref; i++)
		proc_free(rp->ref[i]);
	free(rp->ref);
	rp->ref = NULL;
	rp->nref = 0;
}

/* The frame under the cursor becomes the diff layer's reference. */
static void mark(struct ui_replay *rp)
{
	const struct json_frame *f = &rp->frame;

	drop_ref(rp);
	rp->ref = calloc(f->n ? f->n : 1, sizeof(*rp->ref));
	if (!rp->ref) {
		log_err("failed to mark the frame: %s", strerror(ENOMEM));
		return;
	}
	for (size_t i = 0; i < f->n; i++)
		if ((rp->ref[rp->nref] = proc_clone(f->procs[i], f->procs[i]->pid)))
			rp->nref++;
	rp->ref_at = rp->at;
}

const struct proc *ui_replay_ref(const struct ui_replay *rp, pid_t pid)
{
	if (!rp->diff)
		return NULL;
	for (size_t i = 0; i < rp->nref; i++)
		if (rp->ref[i]->pid == pid)
			return rp->ref[i];
	return NULL;
}

double ui_replay_diff_since(const struct ui_replay *rp)
{
	return rp->diff ? (frame_ns(rp, rp->ref_at) - rec_start_ns(rp->r)) / 1e9 : -1;
}

void ui_replay_free(struct ui_replay *rp)
{
	if (!rp)
		return;
	drop_ref(rp);
	free(rp->resident);
	free(rp);
}

const struct json_frame *ui_replay_frame(const struct ui_replay *rp)
{
	return &rp->frame;
}

static uint64_t frame_ns(const struct ui_replay *rp, size_t i)
{
	return rec_info(rp->r, i)->mono_ns;
}

/* Moves to frame i; a damaged frame leaves the cursor where it was, with a message. */
static bool go(struct ui_replay *rp, size_t i)
{
	char why[WHY_LEN];

	if (i >= rec_frames(rp->r) || i == rp->at)
		return false;
	if (load(rp, i, why, sizeof(why))) {
		log_err("%s", why);
		rp->playing = false;
		return false;
	}
	return true;
}

bool ui_replay_tick(struct ui_replay *rp, uint64_t now_ns)
{
	uint64_t want;
	size_t i;

	if (!rp->playing)
		return false;
	want = rp->play_rec0_ns + (now_ns - rp->play_t0_ns) * rp->speed;
	i = rec_find(rp->r, want);
	if (i == SIZE_MAX)
		return false;
	if (i + 1 >= rec_frames(rp->r))
		rp->playing = false;	/* the end: stop there */
	return go(rp, i);
}

void ui_replay_goto(struct ui_replay *rp, const char *seconds)
{
	char *end;
	double t = strtod(seconds, &end);
	size_t i;

	if (end == seconds || *end || !(t >= 0) || t > 1e9) {
		log_err("not a time in seconds: '%s'", seconds);
		return;
	}
	i = rec_find(rp->r, rec_start_ns(rp->r) + (uint64_t)(t * 1e9));
	go(rp, i == SIZE_MAX ? 0 : i);
	rp->play_t0_ns = engine_now_ns();
	rp->play_rec0_ns = frame_ns(rp, rp->at);
}

static void restart_clock(struct ui_replay *rp)
{
	rp->play_t0_ns = engine_now_ns();
	rp->play_rec0_ns = frame_ns(rp, rp->at);
}

static bool replay_key(struct ui *ui, int key)
{
	struct ui_replay *rp = ui->replay;
	size_t n = rec_frames(rp->r), i;

	switch (key) {
	case ',':
		if (rp->at)
			go(rp, rp->at - 1);
		break;
	case '.':
		go(rp, rp->at + 1);
		break;
	case '{':
	case '}': {
		uint64_t t = frame_ns(rp, rp->at), d = 10000000000ULL;

		if (key == '{')
			i = t > frame_ns(rp, 0) + d ? rec_find(rp->r, t - d) : 0;
		else
			i = rec_find(rp->r, t + d);
		if (i != SIZE_MAX)
			go(rp, i < n ? i : n - 1);
		break;
	}
	case ' ':	/* as in a video player; the live view's pause means nothing here */
		rp->playing = !rp->playing;
		if (rp->playing && rp->at + 1 >= n)
			go(rp, 0);	/* play again from the start */
		break;
	case 'm':
		mark(rp);
		break;
	case 'd':
		/* Without a mark, the diff is against the first frame. */
		if (!rp->diff && !rp->ref) {
			size_t here = rp->at;

			if (go(rp, 0) || rp->at == 0)
				mark(rp);
			go(rp, here);
		}
		rp->diff = !rp->diff;
		break;
	case '1':
		rp->speed = 1;
		break;
	case '2':
		rp->speed = 10;
		break;
	case '3':
		rp->speed = 100;
		break;
	default:
		return false;
	}
	restart_clock(rp);
	return true;
}

static bool replay_time_prompt(struct ui *ui, int key)
{
	(void)key;
	ui->prompt = (struct ui_prompt){ .kind = PROMPT_TIME };
	return true;
}

static const struct ui_key replay_keys[] = {
	{ { ',', '.' }, ", .", "frame back/forth", NULL, NULL, replay_key },
	{ { '{', '}' }, "{ }", "10 s back/forth", NULL, NULL, replay_key },
	{ { 'T' }, "T", "go to a time", NULL, NULL, replay_time_prompt },
	{ { ' ' }, "Space", "play/pause", NULL, NULL, replay_key },
	{ { '1', '2', '3' }, "1 2 3", "speed 1x 10x 100x", NULL, NULL, replay_key },
	{ { 'm' }, "m", "mark the frame", NULL, NULL, replay_key },
	{ { 'd' }, "d", "diff since the mark", NULL, NULL, replay_key },
};

const struct ui_keymap replay_keymap = UI_KEYMAP("Replay", replay_keys);

void ui_replay_draw(struct ui *ui, struct ui_replay *rp, int row)
{
	static const char *const bars[] = { " ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	uint64_t start = rec_start_ns(rp->r);
	double t = (frame_ns(rp, rp->at) - start) / 1e9;
	double end = (frame_ns(rp, rec_frames(rp->r) - 1) - start) / 1e9;
	int col, width, cursor;
	size_t n = rec_frames(rp->r);

	canvas_fill(&ui->canvas, row, 0, ui->cols, ' ', ui->theme.style[ST_NORMAL]);
	col = canvas_printf(&ui->canvas, row, 0, ui->cols, ui->theme.style[ST_KEY],
			    "%s %ux t=%.1fs/%.1fs f%zu/%zu ", rp->playing ? "▶" : "⏸", rp->speed,
			    t, end, rp->at + 1, n);
	width = ui->cols - col - 1;
	if (width < 4 || !rp->nsamples)
		return;
	cursor = n > 1 ? (int)((uint64_t)rp->at * (width - 1) / (n - 1)) : 0;
	for (int x = 0; x < width; x++) {
		size_t s = rp->nsamples > 1 ? (size_t)x * (rp->nsamples - 1) / (width - 1) : 0;
		int level = rp->max_resident ? (int)(rp->resident[s] * 8 / rp->max_resident) : 0;
		struct ui_look look = ui->theme.style[x == cursor ? ST_SELECT : ST_BAR];

		canvas_text(&ui->canvas, row, col + x, 1, look, bars[level > 8 ? 8 : level]);
	}
}
