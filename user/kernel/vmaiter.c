// SPDX-License-Identifier: GPL-2.0
/* The start's VMA pass: reading, naming, replaying (vmaiter.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/array.h"
#include "kernel/procmap.h"
#include "kernel/vmaiter.h"
#include "vmas.skel.h"

#define NAME_MAX_	(4096 + 64)	/* PATH_MAX and " (deleted)": procmap_read_maps()'s */
#define CHUNK_RECS	1024		/* records a read() asks for (the seq_file gives less) */

enum { K_EMPTY, K_PENDING, K_NAMED, K_REFUSED };	/* K_PENDING: not asked, or asked too late */

/* One key's name, as PROCMAP_QUERY gave it for the first mapping asked about. */
struct vkey {
	__u64 k0, k1;
	__u16 cls;
	__u8 state;
	__u32 dev_major, dev_minor;
	__u64 ino;
	size_t name;		/* offset in names */
};

struct vmaiter {
	struct vmas_bpf *skel;
	struct bpf_link *link;
	struct vma_rec *buf;
	size_t cap;		/* records */
	struct vkey *keys;	/* open addressing, a power of two */
	size_t nkeys, capkeys;
	char *names;
	size_t nnames, capnames;
	unsigned int page_shift;
	struct vmaiter_stats st;
};

int vmaiter_load(uint32_t anon_name_off, struct vmaiter **out)
{
	struct vmaiter *vi = calloc(1, sizeof(*vi));
	long ps = sysconf(_SC_PAGESIZE);
	int err;

	if (!vi)
		return -ENOMEM;
	vi->skel = vmas_bpf__open();
	if (!vi->skel) {
		err = -errno;
		goto fail;
	}
	vi->skel->rodata->cfg_anon_name_off = anon_name_off;
	err = vmas_bpf__load(vi->skel);
	if (err)
		goto fail;
	vi->link = bpf_program__attach_iter(vi->skel->progs.dump_vmas, NULL);
	if (!vi->link) {
		err = -errno;
		goto fail;
	}
	while ((1L << vi->page_shift) < ps)
		vi->page_shift++;
	*out = vi;
	return 0;
fail:
	vmaiter_close(vi);
	return err < 0 ? err : -EINVAL;
}

static void drop_keys(struct vmaiter *vi)
{
	free(vi->keys);
	free(vi->names);
	vi->keys = NULL;
	vi->names = NULL;
	vi->nkeys = vi->capkeys = vi->nnames = vi->capnames = 0;
}

void vmaiter_close(struct vmaiter *vi)
{
	if (!vi)
		return;
	bpf_link__destroy(vi->link);
	vmas_bpf__destroy(vi->skel);
	drop_keys(vi);
	free(vi->buf);
	free(vi);
}

void vmaiter_stats(const struct vmaiter *vi, struct vmaiter_stats *st)
{
	*st = vi->st;
}

/* Hands over every whole process at the front of buf[0..n); returns how many records are
 * left (the last process, which the next read may go on with), or < 0 to stop. */
static long hand_over(struct vma_rec *buf, size_t n, bool eof, vmaiter_cb cb, void *arg,
		      int *ret)
{
	size_t i = 0, j;

	while (i < n) {
		for (j = i + 1; j < n && buf[j].tgid == buf[i].tgid; j++)
			;
		if (j == n && !eof)
			break;
		*ret = cb(arg, (pid_t)buf[i].tgid, buf + i, j - i);
		if (*ret)
			return -1;
		i = j;
	}
	memmove(buf, buf + i, (n - i) * sizeof(*buf));
	return (long)(n - i);
}

int vmaiter_pass(struct vmaiter *vi, vmaiter_cb cb, void *arg)
{
	size_t n = 0;
	int fd, err = 0, ret = 0;

	drop_keys(vi);
	fd = bpf_iter_create(bpf_link__fd(vi->link));
	if (fd < 0)
		return fd < -1 ? fd : -errno;
	for (;;) {
		ssize_t r;
		long left;

		if (array_reserve_n(vi->buf, n + CHUNK_RECS, vi->cap, 2 * CHUNK_RECS)) {
			err = -ENOMEM;
			break;
		}
		r = read(fd, vi->buf + n, (vi->cap - n) * sizeof(*vi->buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		/* A record is never split between two reads (bpf_seq_write writes it whole
		 * or the object is shown again): r is a multiple of a record. */
		n += (size_t)r / sizeof(*vi->buf);
		left = hand_over(vi->buf, n, r == 0, cb, arg, &ret);
		if (left < 0 || r == 0)
			break;
		n = (size_t)left;
	}
	close(fd);
	return err ? err : ret;
}

static size_t hash(const struct vma_rec *r)
{
	__u64 h = r->key[0] * 0x9e3779b97f4a7c15ull ^ r->key[1] * 0xc2b2ae3d27d4eb4full ^ r->cls;

	return (size_t)(h ^ (h >> 29));
}

static struct vkey *slot(struct vmaiter *vi, const struct vma_rec *r)
{
	size_t mask = vi->capkeys - 1, i;

	for (i = hash(r) & mask;; i = (i + 1) & mask) {
		struct vkey *k = &vi->keys[i];

		if (k->state == K_EMPTY ||
		    (k->k0 == r->key[0] && k->k1 == r->key[1] && k->cls == r->cls))
			return k;
	}
}

/* The key of r, made if new (K_PENDING); NULL if out of memory. */
static struct vkey *key_of(struct vmaiter *vi, const struct vma_rec *r)
{
	struct vkey *k;

	if (2 * (vi->nkeys + 1) > vi->capkeys) {
		size_t cap = vi->capkeys ? vi->capkeys * 2 : 256, i;
		struct vkey *old = vi->keys, *nv = calloc(cap, sizeof(*nv));

		if (!nv)
			return NULL;
		vi->keys = nv;
		for (i = 0; i < vi->capkeys; i++) {
			if (old[i].state != K_EMPTY) {
				struct vma_rec t = { .cls = old[i].cls,
						     .key = { old[i].k0, old[i].k1 } };

				*slot(vi, &t) = old[i];
			}
		}
		vi->capkeys = cap;
		free(old);
	}
	k = slot(vi, r);
	if (k->state == K_EMPTY) {
		k->k0 = r->key[0];
		k->k1 = r->key[1];
		k->cls = r->cls;
		k->state = K_PENDING;
		vi->nkeys++;
	}
	return k;
}

/*
 * Asks the kernel for the name of r's key through r's own mapping, and keeps it when the
 * answer is that mapping: same bounds, and for a file the same device and inode.  A file
 * whose inode the kernel reports is not the one mapped is an overlayfs (backing) file:
 * /proc names its overlay path, not the real one, and that path is not in the key.  0,
 * -EAGAIN (not named now), or -ENOMEM.
 */
static int ask(struct vmaiter *vi, int *fd, pid_t tgid, const struct vma_rec *r,
	       struct vkey *k)
{
	char path[64], name[NAME_MAX_];
	struct maps_entry e;
	size_t len;

	if (*fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/maps", tgid);
		*fd = open(path, O_RDONLY | O_CLOEXEC);
		if (*fd < 0)
			return -EAGAIN;
	}
	vi->st.queries++;
	if (procmap_query(*fd, r->start, &e, name, sizeof(name)) || e.start != r->start ||
	    e.end != r->end)
		return -EAGAIN;		/* gone, or changed since the pass */
	if (!e.path[0] || (r->cls == VC_FILE ? e.ino != r->ino || e.dev_major != r->dev >> 20 ||
			   e.dev_minor != (r->dev & 0xfffff) : e.ino != 0)) {
		k->state = K_REFUSED;
		return -EAGAIN;
	}
	len = strlen(e.path) + 1;
	if (array_reserve_n(vi->names, vi->nnames + len, vi->capnames, 4096))
		return -ENOMEM;
	memcpy(vi->names + vi->nnames, e.path, len);
	k->name = vi->nnames;
	vi->nnames += len;
	k->dev_major = e.dev_major;
	k->dev_minor = e.dev_minor;
	k->ino = e.ino;
	k->state = K_NAMED;
	vi->st.keys++;
	return 0;
}

int vmaiter_name(struct vmaiter *vi, const struct vma_rec *r, size_t n)
{
	int fd = -1, err = 0;
	size_t i;

	for (i = 0; i < n && !err; i++) {
		struct vkey *k;

		if (r[i].cls == VC_OTHER || (r[i].cls == VC_FILE && r[i].pgoff >> 52)) {
			err = -EAGAIN;
			break;
		}
		if (r[i].cls != VC_FILE && r[i].cls != VC_SPECIAL)
			continue;
		k = key_of(vi, &r[i]);
		if (!k)
			err = -ENOMEM;
		else if (k->state == K_REFUSED)
			err = -EAGAIN;
		else if (k->state == K_PENDING)
			err = ask(vi, &fd, (pid_t)r[i].tgid, &r[i], k);
	}
	if (fd >= 0)
		close(fd);
	if (err)
		vi->st.refused++;
	return err;
}

int vmaiter_emit(struct vmaiter *vi, const struct vma_rec *r, size_t n, maps_cb cb, void *arg)
{
	const struct maps_entry *gate = procmap_gate();
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		struct maps_entry e = {
			.start = r[i].start, .end = r[i].end,
			.perms = (r[i].perms & VR_READ ? MP_READ : 0) |
				 (r[i].perms & VR_WRITE ? MP_WRITE : 0) |
				 (r[i].perms & VR_EXEC ? MP_EXEC : 0) |
				 (r[i].perms & VR_SHARED ? MP_SHARED : 0),
			.path = r[i].cls == VC_HEAP ? "[heap]" :
				r[i].cls == VC_STACK ? "[stack]" : "",
		};

		if (r[i].cls == VC_FILE || r[i].cls == VC_SPECIAL) {
			const struct vkey *k = slot(vi, &r[i]);

			e.path = vi->names + k->name;
			e.dev_major = k->dev_major;
			e.dev_minor = k->dev_minor;
			e.ino = k->ino;
			if (r[i].cls == VC_FILE)
				e.offset = r[i].pgoff << vi->page_shift;
		}
		ret = cb(&e, arg);
	}
	if (!ret && gate)
		ret = cb(gate, arg);
	return ret;
}
