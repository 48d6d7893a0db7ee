// SPDX-License-Identifier: GPL-2.0
/* The status line's messages (ui_status.h). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "engine/engine.h"
#include "ui/ui_status.h"

#define STATUS_SHOW_NS (10ULL * 1000000000ULL)

static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static char status_text[512];
static uint64_t status_ns;

void ui_status_sink(const char *line)
{
	static const char prefix[] = "mevitop: ";

	if (!strncmp(line, prefix, sizeof(prefix) - 1))
		line += sizeof(prefix) - 1;
	pthread_mutex_lock(&status_lock);
	/* The first line of a long message (a verifier log) is what the status line shows. */
	snprintf(status_text, sizeof(status_text), "%.*s", (int)strcspn(line, "\n"), line);
	status_ns = engine_now_ns();
	pthread_mutex_unlock(&status_lock);
}

bool ui_status(char *buf, size_t len, bool *is_error)
{
	bool shown;

	pthread_mutex_lock(&status_lock);
	shown = status_ns && engine_now_ns() - status_ns < STATUS_SHOW_NS;
	if (shown)
		snprintf(buf, len, "%s", status_text);
	pthread_mutex_unlock(&status_lock);
	*is_error = shown && (!strncmp(buf, "warning:", 8) || strstr(buf, "failed"));
	return shown;
}
