/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The start's VMA pass (bpf/vmas.bpf.c) as seen from user space: every process's layout in
 * one read() loop, each mapping's name resolved once per distinct key through PROCMAP_QUERY
 * and checked against it (vmas.h says why the kernel cannot give the names itself).  A
 * whole-system start's thread (engine/start_ahead.c) loads it, takes one pass, and the scans
 * replay what it named.
 */
#ifndef MEVITOP_VMAITER_H
#define MEVITOP_VMAITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "kernel/procfs.h"
#include "vmas.h"

struct vmaiter;

/* Loads and attaches the pass (its own skeleton), anonymous names read at anon_name_off in
 * a VMA (struct features' vma_anon_name_off; 0: none).  0 or -errno. */
int vmaiter_load(uint32_t anon_name_off, struct vmaiter **out);
void vmaiter_close(struct vmaiter *vi);

/* A process's records, in address order.  Non-zero stops the pass (vmaiter_pass returns
 * it). */
typedef int (*vmaiter_cb)(void *arg, pid_t tgid, const struct vma_rec *r, size_t n);
/* One pass, processes in pid order.  The names learned by an earlier pass are dropped
 * first (a freed dentry's address may name another file now).  0, cb's value, or -errno. */
int vmaiter_pass(struct vmaiter *vi, vmaiter_cb cb, void *arg);
/* Names each of one process's records (during the pass: its keys' addresses are alive).
 * 0, or -EAGAIN when one cannot be named the way /proc/PID/maps names it (an anonymous
 * name, an overlayfs file, a process gone or changed since): read it from /proc. */
int vmaiter_name(struct vmaiter *vi, const struct vma_rec *r, size_t n);
/* The layout of records vmaiter_name() named, entry for entry as procmap_read_maps() gives
 * it (the [vsyscall] gate last).  cb's value. */
int vmaiter_emit(struct vmaiter *vi, const struct vma_rec *r, size_t n, maps_cb cb, void *arg);

struct vmaiter_stats {
	size_t keys;		/* distinct names asked for */
	size_t queries;		/* PROCMAP_QUERY calls made for them */
	size_t refused;		/* processes left to /proc (-EAGAIN) */
};
void vmaiter_stats(const struct vmaiter *vi, struct vmaiter_stats *st);

#endif
