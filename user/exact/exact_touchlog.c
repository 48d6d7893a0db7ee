// SPDX-License-Identifier: GPL-2.0
/*
 * exact_touchlog.c - the interval's first touches, both variants: the few the JSON lists
 * (log, LOG_MAX) and, when recording, every one (all, for the recorder's frame).
 *
 * Runs in the engine's thread with the engine lock held.
 */
#include "lib/array.h"
#include "exact/exact_int.h"

static void keep_touch(struct exact *x, pid_t pid, uint32_t tid, uint64_t addr, uint64_t ts,
		       bool write)
{
	if (x->eng.nall >= FIRST_TOUCHES_MAX || array_reserve(x->eng.all, x->eng.nall, x->eng.capall, 256)) {
		x->eng.all_dropped++;	/* the frame says how many: recorded_touches_dropped */
		return;
	}
	x->eng.all[x->eng.nall++] = (struct first_touch){ pid, tid, addr, ts, write };
}

void touchlog_add(struct exact *x, pid_t pid, uint32_t tid, uint64_t addr, uint64_t ts,
		  bool write)
{
	if (x->eng.keep_all)
		keep_touch(x, pid, tid, addr, ts, write);
	if (x->eng.nlog < LOG_MAX)
		x->eng.log[x->eng.nlog++] = (struct first_touch){ pid, tid, addr, ts, write };
	else
		x->eng.st.logged_dropped++;
}
