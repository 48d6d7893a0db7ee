/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interactive view on a recording (`mevitop replay FILE`): the same process list and
 * heatmap, drawn from the recording's frame under a time cursor instead of the live engine,
 * plus a timeline bar of total resident over the recording on the status line.
 * Keys: , and . step a frame back and forth; { and } jump 10 s; T goes to a time; p plays
 * or pauses; 1, 2, 3 set the speed to 1x, 10x, 100x; m marks the frame under the cursor as
 * the diff layer's reference and d shows the layer: pages whose state changed since then.
 */
#ifndef MEVITOP_UI_REPLAY_H
#define MEVITOP_UI_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include "engine/frame.h"
#include "rec/rec_reader.h"
#include "ui/keys.h"

struct ui;
struct ui_replay;

/* Opens the cursor on frame 0; NULL with why on failure. */
struct ui_replay *ui_replay_new(struct rec_reader *r, char *why, size_t whylen);
void ui_replay_free(struct ui_replay *rp);
/* The frame under the cursor. */
const struct json_frame *ui_replay_frame(const struct ui_replay *rp);
/* The memory summary the frame under the cursor carries, or NULL (a recording of -p). */
const struct mem_summary *ui_replay_memory(const struct ui_replay *rp);
/* Moves the cursor while playing; true if it moved. */
bool ui_replay_tick(struct ui_replay *rp, uint64_t now_ns);
/* Moves the cursor to the frame current at `seconds` from the start (a bad number: a
 * message, no move). */
void ui_replay_goto(struct ui_replay *rp, const char *seconds);
/* With the diff layer on: pid as it was at the marked frame (NULL: not there, or off). */
const struct proc *ui_replay_ref(const struct ui_replay *rp, pid_t pid);
/* The marked frame's time (seconds from the start) if the diff layer is on, else < 0. */
double ui_replay_diff_since(const struct ui_replay *rp);
/* The timeline bar and the cursor's time on one row. */
void ui_replay_draw(struct ui *ui, struct ui_replay *rp, int row);

extern const struct ui_keymap replay_keymap;

#endif
