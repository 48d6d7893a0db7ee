// SPDX-License-Identifier: GPL-2.0
/* Where two models of one address space differ, page state by page state (model.h). */
#include <errno.h>
#include <stdlib.h>
#include "lib/array.h"
#include "model/model.h"

struct runs {
	struct scan_run *r;
	size_t n, cap;
	bool oom;
};

static int collect(uint64_t s, uint64_t e, enum page_state st, void *arg)
{
	struct runs *rs = arg;

	if (array_reserve(rs->r, rs->n, rs->cap, 64)) {
		rs->oom = true;
		return 1;
	}
	rs->r[rs->n++] = (struct scan_run){ s, e, st };
	return 0;
}

/* State at page x from runs walked forward (*i advances); *until: where it may change. */
static enum page_state state_at(const struct runs *rs, size_t *i, uint64_t x, uint64_t limit,
				uint64_t *until)
{
	while (*i < rs->n && rs->r[*i].end <= x)
		(*i)++;
	if (*i < rs->n && rs->r[*i].start <= x) {
		*until = rs->r[*i].end < limit ? rs->r[*i].end : limit;
		return rs->r[*i].state;
	}
	*until = *i < rs->n && rs->r[*i].start < limit ? rs->r[*i].start : limit;
	return PS_NOT_RESIDENT;
}

int model_diff(const struct proc *a, const struct proc *b, uint64_t from, uint64_t to,
	       model_run_fn fn, void *arg)
{
	struct runs ra = { 0 }, rb = { 0 };
	size_t ia = 0, ib = 0;
	uint64_t x = from;
	int err = 0;

	model_runs(a, from, to, collect, &ra);
	model_runs(b, from, to, collect, &rb);
	if (ra.oom || rb.oom)
		err = -ENOMEM;
	while (!err && x < to) {
		uint64_t ua, ub, u;
		enum page_state sa = state_at(&ra, &ia, x, to, &ua);
		enum page_state sb = state_at(&rb, &ib, x, to, &ub);

		u = ua < ub ? ua : ub;
		if (sa != sb && fn(x, u, sa, arg))
			break;
		x = u;
	}
	free(ra.r);
	free(rb.r);
	return err;
}
