// SPDX-License-Identifier: GPL-2.0
/*
 * sleepers N - N sleeping processes for bench/idle_cost.py: each a fork of this small
 * program that touched a few pages of its own and sleeps in pause().  Prints "ready" once
 * all exist; on EOF of stdin kills and reaps them.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0, i;
	pid_t *kids = calloc(n > 0 ? n : 1, sizeof(*kids));
	char buf[64];

	if (!kids)
		return 1;
	for (i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			static char page[4 * 4096];

			memset(page, 1, sizeof(page));
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				pause();
		}
		if (kids[i] < 0) {
			perror("fork");
			n = i;
			break;
		}
	}
	printf("ready %ld\n", n);
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
	for (i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return 0;
}
