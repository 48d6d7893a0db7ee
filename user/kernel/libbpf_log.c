// SPDX-License-Identifier: GPL-2.0
/* libbpf's print callback feeds mevitop's logger (user/lib/log.h). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "kernel/libbpf_log.h"
#include "lib/log.h"

static bool libbpf_quiet;

void libbpf_log_quiet(bool quiet)
{
	libbpf_quiet = quiet;
}

/* libbpf's messages (verifier logs included) only with -v: mevitop says what failed in its
 * own words, and a probe that may legitimately fail must not flood the terminal.  The one
 * buffer is locked: the page cache's programs load on the start's other thread
 * (engine/start_ahead.c) while the main thread may use libbpf too. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static char text[65536];
	size_t n;

	if (libbpf_quiet)
		return 0;
	if (level == LIBBPF_DEBUG && log_verbosity < 2)
		return 0;
	if (level != LIBBPF_DEBUG && log_verbosity < 1)
		return 0;
	pthread_mutex_lock(&lock);
	vsnprintf(text, sizeof(text), fmt, ap);
	n = strlen(text);
	while (n && text[n - 1] == '\n')
		text[--n] = 0;
	/* libbpf starts its lines with "libbpf: " already. */
	log_msg(level == LIBBPF_DEBUG ? LOG_DEBUG : LOG_INFO, text);
	pthread_mutex_unlock(&lock);
	return 0;
}

void libbpf_log_setup(void)
{
	libbpf_set_print(libbpf_print);
}
