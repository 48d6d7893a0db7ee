// SPDX-License-Identifier: GPL-2.0
#include <pthread.h>
#include "kernel/thread_signals.h"

void thread_signals_block(sigset_t *old)
{
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGWINCH);
	sigaddset(&block, SIGTSTP);
	sigaddset(&block, SIGCONT);
	pthread_sigmask(SIG_BLOCK, &block, old);
}
