/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The first snapshot's work that needs no process model (the page cache's BPF programs,
 * every process's smaps_rollup, the next layouts the scans will read), done by a thread
 * while the initial scans run (start_ahead.c says why).
 */
#ifndef MEVITOP_START_AHEAD_H
#define MEVITOP_START_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "kernel/procfs.h"
#include "kernel/rollup.h"

struct engine;
struct fcbpf;

/* Starts the thread before the main skeleton's load, for a whole-system start: it reads
 * the rollups of /proc's pids until start_ahead_begin() (no thread: begin starts one),
 * unless the summary takes AnonPages (e->anon_meminfo): then it reads none at all. */
void start_ahead_early(struct engine *e);
/* The same thread before there is an engine (engine_prelaunch()): start_ahead_early() takes
 * it.  rollups: whether the summary wants them. */
void start_ahead_prelaunch(bool rollups);
/* Starts the thread for the listed pids, or hands them to the early one (no thread: the
 * calls below work inline). */
void start_ahead_begin(struct engine *e, const pid_t *pids, size_t n);
/* fcache_bpf_open(fcache_bpf_hooks(&e->f), ...), or what the thread's call gave (waits for that call only). */
int start_ahead_fcache(struct engine *e, struct fcbpf **bpf, char *why, size_t whylen);
/* rollup_read(pid, r), or what the thread read for pid (then *ahead is set: it was read
 * before the scans' count the caller compares it with). */
int start_ahead_rollup(struct engine *e, pid_t pid, struct rollup *r, bool *ahead);
/* During the initial scans: io's layout as the thread read it (true; *err is cb's non-zero
 * return, or 0), or false: read it yourself (not read yet, or the thread's read failed). */
bool start_ahead_layout(struct engine *e, pid_t io, maps_cb cb, void *arg, int *err);
/* /proc/IO/pagemap as the thread opened it with that layout, or -1. */
int start_ahead_pages(struct engine *e, pid_t io);
/* The initial scans are over: the thread reads no more layouts (only rollups). */
void start_ahead_scans_done(struct engine *e);
/* The start is over: joins the thread and frees what it kept (idempotent). */
void start_ahead_end(struct engine *e);

#endif
