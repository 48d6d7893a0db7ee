// SPDX-License-Identifier: GPL-2.0
/* The views' model, live or replayed, and the engine lock as the UI thread takes it (ui_model.h). */
#include <errno.h>
#include "ui/ui_model.h"
#include "ui/ui_replay.h"

struct proc **ui_model_procs(struct ui *ui, size_t *n)
{
	const struct json_frame *f;

	if (!ui->replay)
		return engine_procs(ui->e, n);
	f = ui_replay_frame(ui->replay);
	*n = f->n;
	return f->procs;
}

struct proc *ui_model_find(struct ui *ui, pid_t pid)
{
	struct proc **procs;
	size_t n, i;

	if (!ui->replay)
		return engine_find(ui->e, pid);
	procs = ui_model_procs(ui, &n);
	for (i = 0; i < n; i++)
		if (procs[i]->pid == pid)
			return procs[i];
	return NULL;
}

const char *ui_model_mode(const struct ui *ui)
{
	return ui->replay ? ui_replay_frame(ui->replay)->mode : engine_mode_name(engine_mode(ui->e));
}

/* --- the engine lock (timed for -v) --- */

static void lock_taken(struct ui *ui, uint64_t t0)
{
	ui->lock_t0 = engine_now_ns();
	ui->lock_wait_ns += ui->lock_t0 - t0;
	if (ui->lock_t0 - t0 > ui->lock_wait_max_ns)
		ui->lock_wait_max_ns = ui->lock_t0 - t0;
	ui->locks++;
}

/* Replay has no engine thread: nothing to lock. */
void ui_model_lock(struct ui *ui)
{
	uint64_t t0 = engine_now_ns();

	if (ui->replay)
		return;
	engine_lock(ui->e);
	lock_taken(ui, t0);
}

bool ui_model_trylock(struct ui *ui, int timeout_ms)
{
	uint64_t t0 = engine_now_ns();

	if (ui->replay)
		return true;
	if (engine_lock_timed(ui->e, timeout_ms)) {
		ui->lock_misses++;
		return false;
	}
	lock_taken(ui, t0);
	return true;
}

void ui_model_unlock(struct ui *ui)
{
	uint64_t held = engine_now_ns() - ui->lock_t0;

	if (ui->replay)
		return;
	engine_unlock(ui->e);
	ui->lock_hold_ns += held;
	if (held > ui->lock_hold_max_ns)
		ui->lock_hold_max_ns = held;
}

const char *ui_model_stale(const struct ui *ui)
{
	return ui->now_ns - ui->data_ns > 1000000000ULL ? "ENGINE BUSY" : NULL;
}
