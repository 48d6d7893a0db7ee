// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's BTF, parsed once per start-up (kbtf.h says why this stands in front of
 * libbpf).  These definitions of btf__load_vmlinux_btf() and btf__free() are the ones the
 * dynamic linker binds libbpf's own calls to (the executable comes first in the lookup
 * scope); they reach libbpf's through dlsym(RTLD_NEXT).  Outside a hold they only forward.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <bpf/btf.h>
#include "kernel/kbtf.h"

typedef struct btf *(*load_fn)(void);
typedef void (*free_fn)(struct btf *);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct btf *kept;	/* the parse handed out during the hold */
static bool holding;

static load_fn real_load(void)
{
	static load_fn f;

	if (!f)
		f = (load_fn)dlsym(RTLD_NEXT, "btf__load_vmlinux_btf");
	return f;
}

static free_fn real_free(void)
{
	static free_fn f;

	if (!f)
		f = (free_fn)dlsym(RTLD_NEXT, "btf__free");
	return f;
}

static struct btf *parse(void)
{
	load_fn f = real_load();

	if (!f) {
		errno = ENOSYS;
		return NULL;
	}
	return f();
}

struct btf *btf__load_vmlinux_btf(void)
{
	struct btf *b;
	int err = 0;

	pthread_mutex_lock(&lock);
	if (!holding) {
		b = parse();
	} else {
		if (!kept)
			kept = parse();
		b = kept;
	}
	if (!b)
		err = errno;	/* libbpf reads a NULL's reason from errno */
	pthread_mutex_unlock(&lock);
	if (!b)
		errno = err;
	return b;
}

void btf__free(struct btf *btf)
{
	free_fn f;
	bool mine;

	if (!btf)
		return;
	pthread_mutex_lock(&lock);
	mine = btf == kept;
	pthread_mutex_unlock(&lock);
	if (mine)
		return;		/* the kept parse: kbtf_release() frees it */
	f = real_free();
	if (f)
		f(btf);
}

void kbtf_hold(void)
{
	pthread_mutex_lock(&lock);
	holding = true;
	pthread_mutex_unlock(&lock);
}

void kbtf_release(void)
{
	struct btf *b;
	free_fn f = real_free();

	pthread_mutex_lock(&lock);
	holding = false;
	b = kept;
	kept = NULL;
	pthread_mutex_unlock(&lock);
	if (b && f)
		f(b);
}
