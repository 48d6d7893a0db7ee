// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for user/kernel/procmap.c: PROCMAP_QUERY must give exactly the entries the text
 * parser reads from /proc/PID/maps -- range, perms, offset, device, inode and name -- for
 * this process after it mapped a file, an anonymous named-by-nothing region, a shared
 * region and a split protection, and for a child process (another mm) too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/procmap.h"

struct entries {
	struct maps_entry e[4096];
	char names[4096][256];
	size_t n;
};

static int collect(const struct maps_entry *me, void *arg)
{
	struct entries *s = arg;

	if (s->n == 4096)
		return -E2BIG;
	s->e[s->n] = *me;
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", me->path);
	s->e[s->n].path = s->names[s->n];
	s->n++;
	return 0;
}

static bool same(const struct maps_entry *a, const struct maps_entry *b)
{
	return a->start == b->start && a->end == b->end && a->perms == b->perms &&
	       a->offset == b->offset && a->ino == b->ino && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && !strcmp(a->path, b->path);
}

static bool same_list(const struct entries *x, const struct entries *y)
{
	size_t i;

	if (x->n != y->n)
		return false;
	for (i = 0; i < x->n; i++)
		if (!same(&x->e[i], &y->e[i]))
			return false;
	return true;
}

/*
 * The text is read before and after the ioctl: the sanitizer's allocator (and the reads'
 * own buffers) may map memory meanwhile, so a comparison counts only when the layout
 * stood still across it; a real difference shows in every attempt.
 */
static void compare(pid_t pid)
{
	static struct entries text, bin, after;
	size_t i;
	int attempt;

	for (attempt = 0; attempt < 20; attempt++) {
		text.n = bin.n = after.n = 0;
		assert_int_equal(procfs_read_maps(pid, collect, &text), 0);
		assert_int_equal(procmap_read_maps(pid, collect, &bin), 0);
		assert_int_equal(procfs_read_maps(pid, collect, &after), 0);
		if (same_list(&text, &after))
			break;
	}
	assert_true(same_list(&text, &after));
	assert_int_equal(text.n, bin.n);
	for (i = 0; i < text.n; i++) {
		const struct maps_entry *a = &text.e[i], *b = &bin.e[i];

		if (!same(a, b))
			fail_msg("entry %zu differs: text %#lx-%#lx %x %#lx %u:%u %lu '%s', ioctl "
				 "%#lx-%#lx %x %#lx %u:%u %lu '%s'", i, (unsigned long)a->start,
				 (unsigned long)a->end, a->perms, (unsigned long)a->offset,
				 a->dev_major, a->dev_minor, (unsigned long)a->ino, a->path,
				 (unsigned long)b->start, (unsigned long)b->end, b->perms,
				 (unsigned long)b->offset, b->dev_major, b->dev_minor,
				 (unsigned long)b->ino, b->path);
	}
}

static void test_supported(void **state)
{
	(void)state;
	/* Linux 6.11+ here (FACTS.md): the fast path must be the one tested. */
	assert_true(procmap_query_supported());
}

static void test_self_matches_text(void **state)
{
	char path[] = "/tmp/mevitop-procmap-XXXXXX";
	int fd = mkstemp(path);
	char *file, *anon, *shared;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 16 * 4096), 0);
	file = mmap(NULL, 8 * 4096, PROT_READ, MAP_PRIVATE, fd, 4 * 4096);	/* an offset */
	anon = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	shared = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(file != MAP_FAILED && anon != MAP_FAILED && shared != MAP_FAILED);
	assert_int_equal(mprotect(anon + 8 * 4096, 8 * 4096, PROT_READ | PROT_EXEC), 0);
	free(malloc(1 << 20));	/* a heap, perhaps */
	unlink(path);		/* and a " (deleted)" name */
	compare(getpid());
	munmap(file, 8 * 4096);
	munmap(anon, 64 * 4096);
	munmap(shared, 8 * 4096);
	close(fd);
}

static void test_child_matches_text(void **state)
{
	int ready[2];
	pid_t pid;
	char c;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		mmap(NULL, 32 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	compare(pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* Gone: said as the text reader says it. */
	static struct entries none;
	assert_int_equal(procmap_read_maps(pid, collect, &none), -ESRCH);
	close(ready[0]);
	close(ready[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_supported),
		cmocka_unit_test(test_self_matches_text),
		cmocka_unit_test(test_child_matches_text),
	};

	return cmocka_run_group_tests_name("procmap", tests, NULL, NULL);
}
