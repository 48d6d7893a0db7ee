// SPDX-License-Identifier: GPL-2.0
/*
 * The interactive view's loop.
 *
 * Two threads.  The engine thread runs engine_drive() (user/engine/drive.h), the loop
 * --json runs too: engine_step() on the engine's drain timer and engine_tick() once per
 * --interval.  The UI thread (this one) reads keys and draws a frame every UI_FRAME_MS
 * (and at once after a key).  They meet only at the engine lock, which the UI holds just
 * long enough to copy one frame's numbers, and waits for at most UI_LOCK_WAIT_MS
 * (ui_model.c): a busy engine makes frames show older data, it never stops the UI from
 * reading keys and drawing.
 *
 * Why a thread rather than a single loop: writing to a terminal can block for as long as
 * the terminal pleases (a slow ssh link, a tmux pane in copy mode, Ctrl-S flow control),
 * and the BPF ring buffer must still be drained every few milliseconds or events are lost.
 * With the engine on its own thread no terminal write ever delays the draining; the UI
 * never writes to the terminal with the lock held.
 *
 * Signals: SIGINT, SIGTERM and SIGHUP only set the engine's quitting flag
 * (drive_signals_install; blocked in the engine thread, so they interrupt the UI thread's
 * wait for a key); the loop then leaves normally, the engine thread is woken
 * (DRIVE_WAKE_SIGNAL) and joined, and ui_term gives the terminal back.  Crash signals are
 * ui_term's.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curses.h>
#include "lib/log.h"
#include "engine/drive.h"
#include "kernel/thread_signals.h"
#include "ui/ui.h"
#include "ui/ui_draw.h"
#include "ui/ui_fileheat.h"
#include "ui/ui_files.h"
#include "ui/ui_heatmap.h"
#include "ui/ui_help.h"
#include "ui/ui_model.h"
#include "ui/ui_proclist.h"
#include "ui/ui_replay.h"
#include "ui/ui_state.h"
#include "ui/ui_status.h"
#include "ui/ui_term.h"
#include "ui/keys.h"

static volatile sig_atomic_t tstp_refused;

/*
 * --exact=ordered: every first touch of the target waits for mevitop's fault server, so
 * a suspended mevitop would stall the target for as long as it stays suspended.  Ctrl-Z
 * (SIGTSTP) is refused there with a word in the status line; q detaches and quits.  A
 * SIGSTOP cannot be refused: doc/exact.md says what it does in each variant.
 */
static void on_tstp(int sig)
{
	(void)sig;
	tstp_refused = 1;
}

static void refuse_tstp(const struct ui_opts *o)
{
	struct sigaction sa = { .sa_handler = on_tstp };

	if (!o->refuse_suspend)
		return;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTSTP, &sa, NULL);	/* over curses' own: it would suspend us */
}


/* --- the engine thread --- */

struct engine_thread {
	pthread_t tid;
	struct engine *e;
	struct drive_opts drive;
	atomic_uint_fast64_t ticks;
	uint64_t cpu_ns;		/* its CPU time, when it ends */
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Each tick: the UI thread counts them for -n. */
static int count_tick(void *ctx, struct engine *e, uint64_t mono_ns)
{
	struct engine_thread *t = ctx;

	(void)e;
	(void)mono_ns;
	atomic_fetch_add(&t->ticks, 1);
	return 0;
}

/* engine_drive() until the UI quits (engine_set_quitting, then DRIVE_WAKE_SIGNAL). */
static void *engine_main(void *arg)
{
	struct engine_thread *t = arg;

	engine_drive(t->e, &t->drive);
	t->cpu_ns = thread_cpu_ns();
	return NULL;
}

static int engine_thread_start(struct engine_thread *t)
{
	sigset_t old;
	int err;

	/* Terminal and stop signals belong to the UI thread. */
	thread_signals_block(&old);
	err = pthread_create(&t->tid, NULL, engine_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

/* --- frames --- */

struct ui_perf {
	uint64_t frames;
	uint64_t frame_cpu_ns;		/* UI thread CPU spent building and drawing frames */
	uint64_t fps_t0, fps_frames;
	uint64_t bytes_ns;		/* last engine_bytes() */
};

static void resize(struct ui *ui)
{
	int rows, cols;

	getmaxyx(stdscr, rows, cols);
	if (rows == ui->rows && cols == ui->cols)
		return;
	if (canvas_resize(&ui->canvas, rows, cols))
		return;
	ui->rows = rows;
	ui->cols = cols;
	clearok(curscr, TRUE);
}

static void frame(struct ui *ui, struct ui_perf *perf)
{
	uint64_t cpu0 = thread_cpu_ns();

	resize(ui);
	ui->too_small = ui->cols < UI_MIN_COLS || ui->rows < UI_MIN_ROWS;
	ui->now_ns = engine_now_ns();
	canvas_clear(&ui->canvas);
	if (ui->too_small) {
		draw_too_small(ui);
	} else {
		/* When the engine is busy for longer, this frame shows the data it has: keys
		 * and drawing do not wait for the engine. */
		if (ui_model_trylock(ui, UI_LOCK_WAIT_MS)) {
			if (ui->replay) {
				ui->stats = ui_replay_frame(ui->replay)->stats;
				ui->engine_bytes = ui_replay_frame(ui->replay)->engine_bytes;
			} else {
				ui->stats = *engine_stats(ui->e);
			}
			/* Walks every model: once a second is plenty for a header figure. */
			if (!ui->replay && (ui->view == VIEW_LIST || ui->view == VIEW_FILES) &&
			    ui->now_ns - perf->bytes_ns > 1000000000ULL) {
				ui->engine_bytes = engine_bytes(ui->e);
				perf->bytes_ns = ui->now_ns;
			}
			if (ui->view == VIEW_LIST)
				proclist_update(ui);
			else if (ui->view == VIEW_FILES)
				files_update(ui);
			else if (ui->view == VIEW_FMAP)
				fileheat_update(ui);
			else
				heatmap_update(ui, true);
			ui_model_unlock(ui);
			ui->data_ns = ui->now_ns;
		} else if (ui->view == VIEW_MAP) {
			heatmap_update(ui, false);
		}
		if (ui->help)
			help_draw(ui);
		else if (ui->view == VIEW_MAP)
			heatmap_draw(ui);
		else if (ui->view == VIEW_FILES)
			files_draw(ui);
		else if (ui->view == VIEW_FMAP)
			fileheat_draw(ui);
		else
			proclist_draw(ui);
		/* Replay's time cursor takes the status line unless a prompt needs it. */
		if (ui->replay && !ui->help && ui->prompt.kind == PROMPT_NONE)
			ui_replay_draw(ui, ui->replay, ui->rows - 2);
	}
	canvas_flush(&ui->canvas);
	refresh();

	perf->frames++;
	perf->fps_frames++;
	if (ui->now_ns - perf->fps_t0 >= 500000000ULL) {
		ui->fps = perf->fps_frames * 1e9 / (ui->now_ns - perf->fps_t0);
		perf->fps_t0 = ui->now_ns;
		perf->fps_frames = 0;
	}
	perf->frame_cpu_ns += thread_cpu_ns() - cpu0;
}

/* --- keys anywhere (ui/keys.h) --- */

static bool key_help(struct ui *ui, int key)
{
	(void)key;
	ui->help = true;
	return true;
}

static bool key_pause(struct ui *ui, int key)
{
	(void)key;
	ui->paused = !ui->paused;
	heatmap_pause(ui, ui->paused);
	return true;
}

static bool key_quit(struct ui *ui, int key)
{
	(void)key;
	ui->quit = true;
	return true;
}

/* The first entry (help) leads every footer, the others end it (draw_footer). */
static const struct ui_key global_keys[] = {
	{ { 'h', '?', KEY_F(1) }, "h ? F1", "help", "F1", "Help", key_help },
	{ { ' ' }, "Space", "pause", "Space", "Pause", key_pause },
	{ { 'q', KEY_F(10) }, "q F10 Ctrl-C", "quit", "q", "Quit", key_quit },
};

static const struct ui_keymap global_keymap = UI_KEYMAP("Anywhere", global_keys);

void ui_print_keys(FILE *f)
{
	keys_print(f, &global_keymap);
	keys_print(f, &proclist_keymap);
	keys_print(f, &heatmap_keymap);
	keys_print(f, &files_keymap);
	keys_print(f, &fileheat_keymap);
	keys_print(f, &replay_keymap);
}

/* Returns false to quit. */
static bool handle_key(struct ui *ui, int key)
{
	if (key == KEY_RESIZE)
		return true;
	if (ui->too_small)
		return !(key == 'q' || key == KEY_F(10));
	if (ui->help) {
		ui->help = false;	/* any key returns from help */
		return true;
	}
	/* An open prompt takes every key (a filter may contain q). */
	if (ui->prompt.kind == PROMPT_TIME) {
		int r = draw_prompt_key(&ui->prompt, key);

		if (r == 1)
			ui_replay_goto(ui->replay, ui->prompt.text);
		if (r)
			ui->prompt.kind = PROMPT_NONE;
		return true;
	}
	/* Replay's keys first: its Space plays and pauses. */
	if (ui->prompt.kind == PROMPT_NONE &&
	    ((ui->replay && keys_dispatch(&replay_keymap, ui, key)) ||
	     keys_dispatch(&global_keymap, ui, key)))
		return !ui->quit;
	if (ui->view == VIEW_MAP)
		heatmap_key(ui, key);
	else if (ui->view == VIEW_FILES)
		files_key(ui, key);
	else if (ui->view == VIEW_FMAP)
		fileheat_key(ui, key);
	else
		proclist_key(ui, key);
	if (ui->open_pid) {		/* the list's Enter */
		heatmap_show(ui, ui->open_pid);
		ui->open_pid = 0;
	}
	if (ui->open_file.set) {	/* the Files view's Enter, a file mapping's */
		fileheat_show(ui, ui->open_file.dev, ui->open_file.ino, ui->open_file.back);
		ui->open_file.set = false;
	}
	return true;
}

static void print_perf(const struct ui *ui, const struct ui_perf *perf, uint64_t wall_ns,
		       uint64_t ui_cpu_ns, const struct engine_thread *t)
{
	double wall = wall_ns / 1e9;

	if (wall <= 0 || !perf->frames)
		return;
	log_info("ui: %d x %d, %s; %" PRIu64 " frames in %.1f s (%.1f/s)", ui->cols, ui->rows,
		 ui->theme.name, perf->frames, wall, perf->frames / wall);
	log_info("ui: UI thread CPU %.3f s = %.2f%% of a core (frames: %.3f s, %.2f ms each); "
		 "engine thread CPU %.3f s = %.2f%%", ui_cpu_ns / 1e9, 100.0 * ui_cpu_ns / wall_ns,
		 perf->frame_cpu_ns / 1e9, perf->frame_cpu_ns / 1e6 / perf->frames,
		 t->cpu_ns / 1e9, 100.0 * t->cpu_ns / wall_ns);
	if (ui->locks)
		log_info("ui: engine lock taken %" PRIu64 " times (%" PRIu64 " frames gave up "
			 "after %d ms): waited %.3f ms on average (max %.1f ms), held %.3f ms on "
			 "average (max %.1f ms)", ui->locks, ui->lock_misses, UI_LOCK_WAIT_MS,
			 ui->lock_wait_ns / 1e6 / ui->locks, ui->lock_wait_max_ns / 1e6,
			 ui->lock_hold_ns / 1e6 / ui->locks, ui->lock_hold_max_ns / 1e6);
}

int ui_check_terminal(void)
{
	char why[WHY_LEN];

	if (term_check(why, sizeof(why))) {
		log_err("%s", why);
		return -1;
	}
	return 0;
}

/* The view on the live engine (e, in its own thread) or on a recording (rp). */
static int session(struct engine *e, const struct ui_opts *o, struct ui_replay *rp)
{
	struct ui ui = { .e = e, .replay = rp, .o = o, .view = VIEW_LIST,
			 .global_keys = &global_keymap };
	struct engine_thread t = { .e = e };
	struct ui_perf perf = { 0 };
	uint64_t next_frame, t0, cpu0;
	bool redraw = true, running = true;
	int err, key, rc = 1;

	/* Also the replay's view (no engine); no SA_RESTART: a signal interrupts the wait
	 * for a key. */
	drive_signals_install();
	t.drive = (struct drive_opts){ .interval_ms = o->interval_ms,
				       .report_exits = o->npids > 0, .frame = count_tick,
				       .ctx = &t };
	ui.list = proclist_new(o->npids > 0);
	ui.map = heatmap_new();
	ui.files = files_new();
	ui.fmap = fileheat_new();
	if (!ui.list || !ui.map || !ui.files || !ui.fmap) {
		log_err("failed to start the interactive view: %s", strerror(ENOMEM));
		goto out;
	}
	heatmap_set_layout(ui.map, o->layout);
	if (term_open(&ui.theme)) {
		log_err("failed to start curses on this terminal (TERM=%s)",
			getenv("TERM") ? getenv("TERM") : "");
		goto out;
	}
	log_set_sink(ui_status_sink);
	refuse_tstp(o);
	atomic_init(&t.ticks, 0);
	if (o->npids)
		heatmap_show(&ui, o->pids[0]);
	if (o->files_view)
		ui.view = VIEW_FILES;
	/* --file PATH: its heatmap (Esc: the Files view); the engine checked the path. */
	err = o->file_path ? fileheat_show_path(&ui, o->file_path, VIEW_FILES) : 0;
	if (err)
		log_warn("failed to open %s: %s", o->file_path, strerror(-err));
	err = e ? engine_thread_start(&t) : 0;
	if (err) {
		term_close();
		log_set_sink(NULL);
		log_err("failed to start the engine thread: %s", strerror(-err));
		goto out;
	}
	t0 = engine_now_ns();
	ui.data_ns = t0;
	cpu0 = thread_cpu_ns();
	next_frame = t0;
	perf.fps_t0 = t0;
	while (running && !drive_stop_signal()) {
		uint64_t now = engine_now_ns();
		int wait_ms;

		if (rp && ui_replay_tick(rp, now))
			redraw = true;
		if (redraw || now >= next_frame) {
			frame(&ui, &perf);
			redraw = false;
			if (now >= next_frame) {
				next_frame += UI_FRAME_MS * 1000000ULL;
				if (next_frame < now)
					next_frame = now + UI_FRAME_MS * 1000000ULL;
			}
		}
		if (e && o->count && atomic_load(&t.ticks) >= o->count)
			break;
		now = engine_now_ns();
		wait_ms = next_frame > now ? (int)((next_frame - now + 999999) / 1000000) : 0;
		key = term_getch(wait_ms);
		if (tstp_refused) {
			tstp_refused = 0;
			log_warn("Ctrl-Z refused: with --exact=ordered the target's first touches "
				 "wait for mevitop, a suspended mevitop would stall it; q quits");
			redraw = true;
		}
		/* Handle every key already typed, then draw once. */
		while (key != ERR && running) {
			running = handle_key(&ui, key);
			redraw = true;
			key = term_getch(0);
		}
	}
	if (e) {
		engine_set_quitting(true);
		pthread_kill(t.tid, DRIVE_WAKE_SIGNAL);
		pthread_join(t.tid, NULL);
	}
	term_close();
	log_set_sink(NULL);
	if (drive_stop_signal())
		log_info("stopped by signal %d", drive_stop_signal());
	print_perf(&ui, &perf, engine_now_ns() - t0, thread_cpu_ns() - cpu0, &t);
	rc = 0;
out:
	canvas_free(&ui.canvas);
	proclist_free(ui.list);
	heatmap_free(ui.map);
	files_free(ui.files);
	fileheat_free(ui.fmap);
	return rc;
}

int ui_run(struct engine *e, const struct ui_opts *o)
{
	return session(e, o, NULL);
}

int ui_replay_main(struct rec_reader *r)
{
	struct ui_replay *rp;
	struct ui_opts o = { 0 };
	char why[WHY_LEN];
	int rc;

	if (ui_check_terminal())
		return 1;
	rp = ui_replay_new(r, why, sizeof(why));
	if (!rp) {
		log_err("%s", why);
		return 1;
	}
	o.interval_ms = ui_replay_frame(rp)->interval_ms;
	rc = session(NULL, &o, rp);
	ui_replay_free(rp);
	return rc;
}
