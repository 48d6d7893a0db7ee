/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace mode's per-CPU fault rings as user space reads them (the protocol: bpf/events.h).
 * The tracer merges them into the events ring's order: before each events record, the
 * faults its stamp says came first; at the end of a drain, the faults published before the
 * events ring was found empty.
 */
#ifndef MEVITOP_FRING_H
#define MEVITOP_FRING_H

#include <stddef.h>
#include <stdint.h>

struct fring;

/* Called with a struct ev_fault for every record, in the CPU's order; < 0 stops. */
typedef int (*fring_fn)(void *ctx, const void *data, size_t size);

/* Maps the rings (ncpus rings of `slots` records, a power of two).  0 or -errno. */
int fring_map(int ring_fd, int pos_fd, int ncpus, uint32_t slots, struct fring **out);
void fring_unmap(struct fring *r);
/* Bytes of the stamp at the end of every events record. */
size_t fring_stamp_bytes(const struct fring *r);
/* Remembers every CPU's head as it is now. */
void fring_snapshot(struct fring *r);
/* Applies each CPU's records below the heads of the last snapshot, or of a stamp.  Returns
 * the number applied, or fn's value < 0 (the records after that one stay for next time). */
int fring_drain_snapshot(struct fring *r, fring_fn fn, void *ctx);
int fring_drain_stamp(struct fring *r, const void *stamp, fring_fn fn, void *ctx);

#endif /* MEVITOP_FRING_H */
