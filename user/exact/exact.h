/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exact mode: `mevitop run -- CMD` and `mevitop --exact -p PID`.  The core engine (sample
 * mode's BPF pipeline and pagemap scans, MODE_EXACT) keeps the whole model exact; this layer
 * adds a userfaultfd per watched address space so every first touch of its private anonymous
 * memory is *seen*: which page, which thread, when.
 *
 * How a process gets its userfaultfd (exact/inject.h, exact/uffd.h): seize every thread, run
 * userfaultfd() in it, take the fd with pidfd_getfd(), close the process's own copy, register
 * its private anonymous mappings from /proc/PID/maps, resume.  A process that may not call
 * userfaultfd() (no CAP_SYS_PTRACE) gets it through /dev/userfaultfd instead, which mevitop
 * opens and hands over (exact/uffd_dev.h); kernel/uffd_caps.h is the probe of both ways, and
 * --disable uffd_syscall / uffd_dev turns either off.  Only mevitop then holds the
 * fd: if mevitop dies, the kernel closes it, every registration goes away and blocked faults
 * are retried as if nothing had happened.  ptrace is held only for those few milliseconds
 * (a watchdog, --attach-timeout, bounds them); `run` keeps its child seized with
 * PTRACE_O_EXITKILL, so the child dies with mevitop and its execs are caught at once.
 *
 * Two variants (--exact=HOW); `make bench` (bench/run_bench.py bench_exact) measures both on
 * the fault-bound loop (map 64 MiB, write every page, unmap; 2-vCPU VM, median of pairs):
 *   ordered  mappings registered in MISSING mode; fault servers resolve each first touch
 *            (UFFDIO_COPY of a zero page for writes, UFFDIO_ZEROPAGE for reads), then queue
 *            it; the engine thread applies the queue by read time.  Every first touch costs
 *            a round trip through mevitop: ~8x (one server per CPU; exact.c says why).
 *   fast     (default) mappings registered in WP mode but never write-protected: faults stay
 *            in the kernel, and no non-cooperative event is requested (each makes the
 *            target wait until mevitop reads it: a stopped mevitop would stall it); the
 *            engine's BPF records say what was unmapped, zapped or moved, and forked
 *            children are injected anew.  PAGEMAP_SCAN lists the pages present: at each
 *            refresh for every registered mapping, at each drain (~1 ms) for mappings
 *            registered in the last 500 ms (so a buffer mapped, filled and unmapped between
 *            two refreshes is seen).  Pages absent from the previous picture, or zapped
 *            since (a munmap/madvise record says so), are first touches: unordered within one
 *            scan, and a page touched and unmapped within ~1 ms goes unseen.  ~1.1x.
 *            Write-protecting (WP_ASYNC + PAGEMAP_SCAN WRITTEN, bench/uffd_bench.c) costs
 *            two faults per first write (~1.5x) and says nothing more about first touches:
 *            a read-only touch maps the zero page, which PAGEMAP_SCAN reports.
 *
 * New mappings are registered from the engine's BPF mmap/brk/mremap records (the `mapped`
 * hook), then scanned so that pages touched before the registration are accounted; they are
 * counted in the JSON as prereg_pages (the registration latency made visible).  The view
 * drains the ring buffer every 100 ms in sample-like modes, so a pump thread drains it
 * every MEVITOP_EXACT_PUMP_US (default 1000) in between: in a tight mmap-then-touch loop
 * (2 us a page) a 64 MiB mapping then has ~300 pages (at most ~2000) touched before it is
 * registered, against ~10,000 with the view's drains alone; the pump costs ~1.5% of a CPU.
 * ptrace syscall stops were not used for this: ~8 us on every system call of every thread
 * (FACTS.md), and a seccomp filter to narrow them is not an option in a process that must
 * outlive mevitop.
 *
 * Churn: new mappings are registered at the end of a drain within a time budget, newest
 * first; what is left over is counted (stats.exact.behind) and tracked by pagemap
 * (exact_track.c says why).  A quit (engine_set_quitting) stops every scan and
 * registration not started yet.
 *
 * Forks: ordered, UFFD_FEATURE_EVENT_FORK gives the child its own userfaultfd (ours); the
 * child's pid is learnt from its first fault's thread id or from its parent.  Fast: the
 * control thread injects one, as for an exec, and the child starts from its parent's
 * picture.  Exec: the old mm and its
 * userfaultfd are gone; the new image is seized and injected again (run: by the ptrace
 * follower at the exec stop itself).
 *
 * JSON: each mapping's "tracker" is "userfaultfd" (registered) or "pagemap" (file, shared,
 * hugetlb, or refused: the engine's BPF and pagemap path tracks it).  stats.exact holds:
 *   variant, processes (with a userfaultfd), registered_pages, touches (first touches so
 *   far), touches_interval (in the interval this snapshot ends: intervals end at each
 *   refresh, never when read), touches_dropped (queue full: the ranges are rescanned
 *   instead), prereg_pages / prereg_max (pages a new mapping had when
 *   registered: total / largest), stale (records of a process that exited or execed),
 *   behind (new mappings exact mode had no time for: registered too late or never, so
 *   tracked by pagemap, or not rescanned at each drain),
 *   events {fork, remap, remove, unmap, gone}, attaches, attach_ms_max (longest a process
 *   was held stopped), server {threads, waiting (of them, those not parked by steering),
 *   steered, parked (how often a server was woken or parked: exact_server.c), reads,
 *   faults, resolved, raced, retried};
 *   ordered only: latency_us_hist (per first touch, from a server reading the fault to the
 *   resolving ioctl returning; when the faulting thread runs on the server's CPU it
 *   preempts the server inside the ioctl, so this includes its run up to its next fault)
 *   and latency_us_max;
 *   first_touches: up to 100 first touches of that interval, in order (ordered;
 *   fast: in address order per scan), each [pid, tid, "0xADDRESS", "r"|"w", monotonic
 *   seconds] (fast: tid 0, the time of the scan, "r" for the zero page); and
 *   first_touches_unlisted: how many more there were.
 *
 * Testing: MEVITOP_TEST_PAUSE=STAGE[:MS] prints "mevitop: test-pause STAGE" on stderr and
 * sleeps MS ms (default 60000) at STAGE: "seized", "injected", "registered" (the process is
 * held stopped), "serving" (attached and running), "fault" (in the fault server, before
 * resolving the next fault: the faulting thread stays blocked), "detach" (quitting, before
 * the userfaultfds are closed).  Tests SIGKILL mevitop there.  The injection's own stages
 * (inside each injected call, exact/stage.h) pause the same way, and
 * MEVITOP_TEST_STAGE_FILE records the current stage for the kill sweeps.
 */
#ifndef MEVITOP_EXACT_H
#define MEVITOP_EXACT_H

#include <stdio.h>
#include "engine/engine.h"
#include "exact/exact_opts.h"
#include "kernel/kfeatures.h"

struct exact;

/*
 * Everything before the view: checks that userfaultfd and ptrace can work, starts CMD (run)
 * or attaches to -p's processes, creates and starts the engine (MODE_EXACT) with exact
 * mode's hooks, from *o and *eo (cli_engine_opts: every option applies to exact mode as to
 * the others; its pids are filled in here).  On failure logs one message saying what to
 * change, leaves no process modified and returns the exit code (1); *e and *x are then
 * NULL.  *o is only read.
 */
int exact_setup(const struct exact_opts *o, struct engine_opts *eo, struct features *f,
		struct engine **e, struct exact **x);
/* What setup resolved: EXACT_FAST or EXACT_ORDERED (the view words Ctrl-Z by it). */
enum exact_variant exact_variant_of(const struct exact *x);
/* run: CMD's pid, known once exact_setup returned; else 0. */
pid_t exact_run_pid(const struct exact *x);

/*
 * After the view returned `rc`: detaches (closes every userfaultfd; attached processes run
 * on untouched, or stay stopped if they were), or for run ends CMD (it has 200 ms to exit by
 * itself, then SIGKILL) and returns its status (128 + signal if killed).  Frees x.
 * out: where run --json's last snapshot goes (stdout or -o FILE).
 */
int exact_teardown(struct exact *x, int rc, FILE *out);

#endif
