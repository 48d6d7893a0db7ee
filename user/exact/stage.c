// SPDX-License-Identifier: GPL-2.0
/*
 * stage.c - testing only: the attach's current stage in a file, and pauses (stage.h).
 */
#include "exact/stage.h"
#include "exact/seccomp_calls.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STAGE_LINE	64
#define PAUSE_DEFAULT_MS 60000

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int stage_fd = -1;
static char pause_stage[STAGE_LINE];
static unsigned pause_ms = PAUSE_DEFAULT_MS;

static void init(void)
{
	const char *file = getenv("MEVITOP_TEST_STAGE_FILE");
	const char *pause = getenv("MEVITOP_TEST_PAUSE");

	if (file && *file)
		stage_fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (pause && *pause) {
		/* "boot:mmap:500": the stage is everything before the last colon if a
		 * number follows it */
		const char *colon = strrchr(pause, ':');
		if (colon && colon[1] >= '0' && colon[1] <= '9') {
			snprintf(pause_stage, sizeof(pause_stage), "%.*s", (int)(colon - pause),
				 pause);
			pause_ms = (unsigned)strtoul(colon + 1, NULL, 10);
		} else {
			snprintf(pause_stage, sizeof(pause_stage), "%s", pause);
		}
	}
}

static void xstage_record(const char *stage)
{
	char line[STAGE_LINE];
	size_t n;

	pthread_once(&once, init);
	if (stage_fd < 0)
		return;
	memset(line, ' ', sizeof(line));
	n = strnlen(stage, sizeof(line) - 1);
	memcpy(line, stage, n);
	line[sizeof(line) - 1] = '\n';
	/* one write at offset 0: a kill leaves the whole of the last line or of the one before */
	if (pwrite(stage_fd, line, sizeof(line), 0) < 0)
		return;
}

void stage_enter(const char *prefix, const char *name)
{
	char stage[STAGE_LINE];

	pthread_once(&once, init);
	if (stage_fd < 0 && !pause_stage[0])
		return;
	if (name)
		snprintf(stage, sizeof(stage), "%s:%s", prefix, name);
	else
		snprintf(stage, sizeof(stage), "%s", prefix);
	xstage_record(stage);
	if (pause_stage[0] && !strcmp(stage, pause_stage)) {
		fprintf(stderr, "mevitop: test-pause %s\n", stage);
		fflush(stderr);
		struct timespec ts = { pause_ms / 1000, (long)(pause_ms % 1000) * 1000000 };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

void stage_enter_nr(const char *prefix, long nr)
{
	char num[24];

	pthread_once(&once, init);
	if (stage_fd < 0 && !pause_stage[0])
		return;
	for (size_t i = 0; i < sc_injected_count; i++)
		if (sc_injected[i].nr == nr) {
			stage_enter(prefix, sc_injected[i].name);
			return;
		}
	snprintf(num, sizeof(num), "nr%ld", nr);
	stage_enter(prefix, num);
}
