/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scratch.h - the injection's scratch page in a target (inject.c's calls run from it):
 * found again after a killed monitor, mapped by a bootstrap that borrows the target's own
 * code, and unmapped again before the target is let go.
 *
 * The page is backed by a memfd the target creates and closes in one bootstrap
 * ("mevitop-scratch", so /proc/PID/maps reads `/memfd:mevitop-scratch (deleted)` on every
 * kernel), mapped r-x and private: its contents are written through /proc/PID/mem.  A
 * filter that refuses memfd_create (or a kernel that makes memfds non-executable) gets an
 * anonymous page instead, named [anon:mevitop-scratch] where the kernel can.
 */
#ifndef MEVITOP_SCRATCH_H
#define MEVITOP_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

struct inj;

#define SCRATCH_NAME		"mevitop-scratch"
#define SCRATCH_CHAIN_OFF	192	/* a chain's code (inj_syscall_chain) */
#define SCRATCH_FRAME_OFF	512	/* 64-aligned, after the code */

/* Bytes of scratch page for a CPU whose XSAVE image is @xsize bytes (whole pages). */
uint64_t scratch_need(size_t xsize);

/*
 * Before any call: reuse a page an earlier (killed) attach left, or find the two pieces of
 * the target's own code the bootstrap borrows (we never write the target's text).
 */
int scratch_prepare(struct inj *in);

/* Map the page (in->scratch) if there is none yet.  0 or -errno, with in->why. */
int scratch_bootstrap(struct inj *in);

/*
 * Unmap the page before every thread is let go, when none can be in it (every thread
 * parked at its own code): one last call, made from the bootstrap's borrowed code so a
 * monitor killed during it still gets the thread home.  Left in place (in->scratch_note
 * says why) if a thread still runs our code alone, or the target's filters would not let
 * munmap succeed.  0 or -errno.
 */
int scratch_drop(struct inj *in);

#endif /* MEVITOP_SCRATCH_H */
