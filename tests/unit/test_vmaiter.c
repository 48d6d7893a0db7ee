// SPDX-License-Identifier: GPL-2.0
/*
 * The start's VMA pass (bpf/vmas.bpf.c, kernel/vmaiter.c) against PROCMAP_QUERY, read by
 * this test around each pass: for every process whose layout reads the same before and
 * after the pass, the pass either names it entry for entry as procmap_read_maps() gives
 * it (bounds, offset, device, inode, permissions, name, the [vsyscall] gate last) or
 * refuses it; and it refuses none of this test's children.  The children make the hard
 * names: a file with a newline and a backslash in its name, a file mapped through two
 * hard links (one inode, two dentries: two names), a deleted file, a memfd, shared
 * anonymous memory, SysV shm, a heap and a stack; and a process whose main thread called
 * pthread_exit() (no records: it is left to /proc, as the start's scans read it).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include "kernel/kbtf.h"
#include "kernel/kfeatures.h"
#include "kernel/procmap.h"
#include "kernel/vmaiter.h"

static struct vmaiter *vi;
static pid_t kids[2];
static char dir[] = "/tmp/test_vmaiter.XXXXXX";
static int hold[2];

struct lay {
	struct maps_entry *v;
	char **names;
	size_t n, cap;
};

static void lay_free(struct lay *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->v);
	free(l->names);
	memset(l, 0, sizeof(*l));
}

static int keep(const struct maps_entry *e, void *arg)
{
	struct lay *l = arg;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		l->names = realloc(l->names, l->cap * sizeof(*l->names));
		if (!l->v || !l->names)
			return -1;
	}
	l->v[l->n] = *e;
	l->names[l->n] = strdup(e->path);
	l->v[l->n].path = l->names[l->n];
	l->n++;
	return 0;
}

static bool lay_equal(const struct lay *a, const struct lay *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const struct maps_entry *x = &a->v[i], *y = &b->v[i];

		if (x->start != y->start || x->end != y->end || x->offset != y->offset ||
		    x->ino != y->ino || x->dev_major != y->dev_major ||
		    x->dev_minor != y->dev_minor || x->perms != y->perms ||
		    strcmp(x->path, y->path))
			return false;
	}
	return true;
}

static void *park(void *arg)
{
	char c;

	(void)arg;
	if (read(hold[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

static void map_file(const char *path, int flags, bool unlink_it)
{
	int fd = open(path, O_RDWR | O_CREAT, 0600);

	if (fd < 0 || ftruncate(fd, 3 * 4096) ||
	    mmap(NULL, 3 * 4096, PROT_READ, flags, fd, 4096) == MAP_FAILED)
		_exit(2);
	close(fd);
	if (unlink_it)
		unlink(path);
}

/* Every hard name, mapped; then it waits. */
static void names_child(int ready)
{
	char path[256], link2[256];
	int fd, id;
	void *p;

	snprintf(path, sizeof(path), "%s/new\nline\\back", dir);
	map_file(path, MAP_PRIVATE, false);
	snprintf(path, sizeof(path), "%s/one", dir);
	map_file(path, MAP_SHARED, false);
	snprintf(link2, sizeof(link2), "%s/two", dir);
	if (link(path, link2))
		_exit(3);
	map_file(link2, MAP_PRIVATE, false);
	snprintf(path, sizeof(path), "%s/gone", dir);
	map_file(path, MAP_SHARED, true);
	fd = memfd_create("vmaiter-memfd", 0);
	if (fd < 0 || ftruncate(fd, 4096) ||
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED)
		_exit(4);
	if (mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0) ==
	    MAP_FAILED)
		_exit(5);
	id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	p = id < 0 ? (void *)-1 : shmat(id, NULL, 0);
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);	/* gone once detached: no leak */
	if (p == (void *)-1)
		_exit(6);
	free(malloc(1 << 16));		/* a heap */
	if (write(ready, "r", 1) != 1)
		_exit(1);
	park(NULL);
	_exit(0);
}

static void leader_exit_child(int ready)
{
	pthread_t t;

	pthread_create(&t, NULL, park, NULL);
	if (write(ready, "r", 1) != 1)
		_exit(1);
	pthread_exit(NULL);
}

/*
 * The leader writes "ready" before pthread_exit(), so the byte says nothing of its exit:
 * wait until /proc shows it a zombie (exit_mm() has run, it has no mm for the pass).
 */
static void wait_zombie(pid_t pid)
{
	char path[64], buf[256], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (int tries = 0; tries < 10000; tries++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = 0;
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'Z')
			return;
		usleep(1000);
	}
	fail_msg("pid %d's leader never exited", pid);
}

static int setup(void **state)
{
	struct features f = { 0 };
	char why[256];
	int err;

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	/* The anonymous-name offset as the start finds it (0 on a kernel without the field). */
	if (kfeatures_probe(&f, why, sizeof(why))) {
		fprintf(stderr, "test_vmaiter: %s\n", why);
		return -1;
	}
	err = vmaiter_load(f.vma_anon_name_off, &vi);
	kbtf_release();		/* the probe held the kernel's BTF for the loads */
	return err ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	for (int i = 0; i < 2; i++)
		if (kids[i] > 0 && kill(kids[i], SIGKILL) == 0)
			waitpid(kids[i], NULL, 0);
	vmaiter_close(vi);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

struct seen {
	size_t procs, named, refused, changed, mismatched;
	bool kid_named[2], kid_seen[2];
};

static int on_proc(void *arg, pid_t tgid, const struct vma_rec *r, size_t n)
{
	struct seen *s = arg;
	struct lay before = { 0 }, pass = { 0 }, after = { 0 };
	int k;

	s->procs++;
	for (k = 0; k < 2; k++)
		if (tgid == kids[k])
			s->kid_seen[k] = true;
	if (procmap_read_maps(tgid, keep, &before))
		goto out;	/* gone */
	if (vmaiter_name(vi, r, n)) {
		s->refused++;
		goto out;
	}
	assert_int_equal(vmaiter_emit(vi, r, n, keep, &pass), 0);
	if (procmap_read_maps(tgid, keep, &after) || !lay_equal(&before, &after)) {
		s->changed++;	/* moved while read: no truth to hold it to */
		goto out;
	}
	s->named++;
	for (k = 0; k < 2; k++)
		if (tgid == kids[k])
			s->kid_named[k] = true;
	if (!lay_equal(&pass, &before)) {
		s->mismatched++;
		fprintf(stderr, "pid %d: the pass's %zu entries are not PROCMAP_QUERY's %zu\n",
			tgid, pass.n, before.n);
		for (size_t i = 0; i < pass.n || i < before.n; i++) {
			const struct maps_entry *x = i < pass.n ? &pass.v[i] : NULL;
			const struct maps_entry *y = i < before.n ? &before.v[i] : NULL;

			fprintf(stderr, "  %lx-%lx %lx %u:%u %lu %x '%s' | %lx-%lx %lx %u:%u %lu %x '%s'\n",
				x ? x->start : 0, x ? x->end : 0, x ? x->offset : 0,
				x ? x->dev_major : 0, x ? x->dev_minor : 0, x ? x->ino : 0,
				x ? x->perms : 0, x ? x->path : "",
				y ? y->start : 0, y ? y->end : 0, y ? y->offset : 0,
				y ? y->dev_major : 0, y ? y->dev_minor : 0, y ? y->ino : 0,
				y ? y->perms : 0, y ? y->path : "");
		}
	}
out:
	lay_free(&before);
	lay_free(&pass);
	lay_free(&after);
	return 0;
}

static void test_pass_equals_procmap(void **state)
{
	void (*child[2])(int) = { names_child, leader_exit_child };
	struct vmaiter_stats st;
	struct seen s = { 0 };
	char c;

	(void)state;
	assert_int_equal(pipe(hold), 0);
	for (int k = 0; k < 2; k++) {
		int ready[2];

		assert_int_equal(pipe(ready), 0);
		kids[k] = fork();
		if (!kids[k]) {
			close(ready[0]);
			child[k](ready[1]);
		}
		close(ready[1]);
		assert_int_equal(read(ready[0], &c, 1), 1);	/* mapped (or exited) */
		close(ready[0]);
	}
	wait_zombie(kids[1]);
	assert_int_equal(vmaiter_pass(vi, on_proc, &s), 0);
	vmaiter_stats(vi, &st);
	fprintf(stderr, "test_vmaiter: %zu processes, %zu named and equal to PROCMAP_QUERY, "
		"%zu refused, %zu changed while read; %zu names asked for in %zu queries\n",
		s.procs, s.named, s.refused, s.changed, st.keys, st.queries);
	assert_int_equal(s.mismatched, 0);
	assert_true(s.kid_named[0]);	/* every hard name of the first child, exactly */
	assert_false(s.kid_seen[1]);	/* a zombie leader: no records */
	assert_true(s.named >= 2);	/* the first child and at least one other */
	assert_true(st.keys < st.queries + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_equals_procmap),
	};

	if (geteuid())
		return fprintf(stderr, "test_vmaiter: needs root (BPF)\n"), 1;
	return cmocka_run_group_tests(tests, setup, teardown);
}
