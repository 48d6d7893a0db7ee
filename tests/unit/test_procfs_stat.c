// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for procfs_read_counters' reading of /proc/PID/stat on this very process: the
 * name (which may hold spaces and parentheses: only the last ')' ends it), the parent and
 * the state, for names the kernel stores as given (prctl PR_SET_NAME, at most 15 bytes).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "kernel/procfs.h"

static void test_names(void **state)
{
	static const char *const names[] = {
		"plain", "x) (y z", ")", "((", "a b)c) 1 2 3", "012345678901234", "",
	};
	struct proc_counters c;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(prctl(PR_SET_NAME, names[i]), 0);
		assert_int_equal(procfs_read_counters(getpid(), &c), 0);
		assert_string_equal(c.comm, names[i]);
		assert_int_equal(c.ppid, getppid());
		assert_int_equal(c.state, 'R');		/* it is reading its own stat */
		assert_true(c.vsize > 0 && c.rss > 0);
	}
	/* Longer than the kernel keeps: cut to 15 bytes, read back as such. */
	assert_int_equal(prctl(PR_SET_NAME, "0123456789abcdefghij"), 0);
	assert_int_equal(procfs_read_counters(getpid(), &c), 0);
	assert_string_equal(c.comm, "0123456789abcde");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
