// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "stacks/raw_cache.h"

/* Its own table, not lib/hashtab.h: a fixed-size, lossy cache (a newer stack takes an old
 * one's slot), no growth and no removal, values inline for the per-sample path. */
#define RAW_SLOTS 4096		/* a power of two; ~1.2 MiB */

struct raw_slot {
	uint64_t key;		/* hash of everything below; 0: empty */
	uint64_t sig;		/* the layout the addresses fell in */
	uint64_t top;
	uint64_t frames[MEVITOP_STACK_DEPTH];
	pid_t pid;
	uint16_t nframes;
	uint32_t idx;
};

struct raw_cache {
	struct raw_slot *slot;
};

int raw_cache_new(struct raw_cache **out)
{
	struct raw_cache *c = calloc(1, sizeof(*c));

	if (c)
		c->slot = calloc(RAW_SLOTS, sizeof(*c->slot));
	if (!c || !c->slot) {
		free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void raw_cache_free(struct raw_cache *c)
{
	if (!c)
		return;
	free(c->slot);
	free(c);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

static uint16_t nframes_of(const struct ev_stack *ev)
{
	return ev->nframes > MEVITOP_STACK_DEPTH ? MEVITOP_STACK_DEPTH : ev->nframes;
}

/* Which mapping (by extent and file) each address falls in. */
static uint64_t layout_sig(const struct proc *p, const struct ev_stack *ev)
{
	uint16_t n = nframes_of(ev), i;
	uint64_t h = 1;

	for (i = 0; i <= n; i++) {
		uint64_t a = i < n ? ev->frames[i] : ev->top;
		const struct mapping *m = model_find(p, a >> PAGE_SHIFT_4K);

		if (!m) {
			h = mix(h, 0);
			continue;
		}
		h = mix(h, mapping_start(m));
		h = mix(h, mapping_end(m));
		h = mix(h, m->ino);
		h = mix(h, m->offset);
		h = mix(h, ((uint64_t)m->dev_major << 32) | m->dev_minor);
	}
	return h;
}

static uint64_t key_of(const struct proc *p, const struct ev_stack *ev, uint64_t sig)
{
	uint16_t n = nframes_of(ev), i;
	uint64_t h = mix(mix((uint64_t)p->pid, n), ev->top);

	for (i = 0; i < n; i++)
		h = mix(h, ev->frames[i]);
	h = mix(h, sig);
	return h ? h : 1;
}

static bool same(const struct raw_slot *s, const struct proc *p, const struct ev_stack *ev,
		 uint64_t key, uint64_t sig)
{
	uint16_t n = nframes_of(ev);

	return s->key == key && s->sig == sig && s->pid == p->pid && s->nframes == n &&
	       s->top == ev->top && !memcmp(s->frames, ev->frames, n * sizeof(ev->frames[0]));
}

int64_t raw_cache_get(struct raw_cache *c, const struct proc *p, const struct ev_stack *ev)
{
	uint64_t sig = layout_sig(p, ev), key = key_of(p, ev, sig);
	const struct raw_slot *s = &c->slot[key & (RAW_SLOTS - 1)];

	return same(s, p, ev, key, sig) ? (int64_t)s->idx : -1;
}

void raw_cache_put(struct raw_cache *c, const struct proc *p, const struct ev_stack *ev,
		   uint32_t idx)
{
	uint64_t sig = layout_sig(p, ev), key = key_of(p, ev, sig);
	struct raw_slot *s = &c->slot[key & (RAW_SLOTS - 1)];
	uint16_t n = nframes_of(ev);

	s->key = key;
	s->sig = sig;
	s->top = ev->top;
	s->pid = p->pid;
	s->nframes = n;
	s->idx = idx;
	memcpy(s->frames, ev->frames, n * sizeof(ev->frames[0]));
}

void raw_cache_forget(struct raw_cache *c, pid_t pid)
{
	size_t i;

	for (i = 0; i < RAW_SLOTS; i++)
		if (c->slot[i].key && c->slot[i].pid == pid)
			c->slot[i].key = 0;
}
