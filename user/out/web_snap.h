/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What one API answer needs, copied out of a frame while its source is held (live: the
 * engine's lock): the answer is written after the source is released, so the engine waits
 * for the copy only, never for the JSON (a thousand mappings' text took it hundreds of
 * milliseconds).  A process is copied whole (proc_clone: its mappings and page sets, which
 * are compressed containers, a memcpy each), so the answer and the next poll's comparison
 * with it (out/web_json.c) are exact.
 *
 * One copy a frame, however many viewers: the answers of one frame (live: one engine tick;
 * a replay: one recorded frame) share it.  The first list answer of a frame copies the
 * rows and the others reuse them (struct web's list); the first answer for a process
 * copies it and keeps it as that process's base (out/web_json.h), which the later answers
 * of the frame reuse, holding the source only to find that the frame is the same.
 *
 * Live, a later frame's answer reuses that base too when the process has not changed since
 * it was copied (model_shown's key, taken with the copy, equals the process's now): a quiet
 * process streamed to a page is copied once, not once a tick.  The answer is still written
 * at its own frame's time, so heat that decayed to another colour is sent.
 */
#ifndef MEVITOP_OUT_WEB_SNAP_H
#define MEVITOP_OUT_WEB_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "engine/frame.h"
#include "model/model.h"

/* One process of the list, as /api/list writes it. */
struct web_row {
	pid_t pid, ppid;
	char comm[16];
	bool exited;
	bool share;			/* a sharing pass has read it: uss and pss hold */
	uint64_t faults;
	double fault_rate;
	uint64_t mapped, counts[PS_COUNT];
	uint64_t uss;			/* pages */
	double pss;			/* pages */
	size_t maps;
};

struct web_snap {
	uint64_t key;			/* the frame it is of (web_snap_key) */
	double wall;
	uint64_t mono_ns;
	char mode[24];
	struct web_row *rows;		/* web_snap_list: the ready processes */
	size_t n;
	struct proc *p;			/* web_snap_process: a private copy, or NULL */
	bool shared;			/* p is a process's base, not this snap's to free */
	struct proc_shown shown;	/* web_snap_process: what p's source showed then */
};

/* Which frame f is, telling one frame's model from another's: live, the engine's tick
 * count; a recorded frame, its own monotonic time.  Never 0. */
uint64_t web_snap_key(const struct json_frame *f);
/* The ready process pid of f, or NULL. */
const struct proc *web_snap_find(const struct json_frame *f, pid_t pid);

/* s empty but for f's key, times and mode. */
void web_snap_head(const struct json_frame *f, struct web_snap *s);
/* 0 or -ENOMEM. */
int web_snap_list(const struct json_frame *f, struct web_snap *s);
/* 0, -ESRCH (no ready process pid in f) or -ENOMEM. */
int web_snap_process(const struct json_frame *f, pid_t pid, struct web_snap *s);
void web_snap_free(struct web_snap *s);

#endif
