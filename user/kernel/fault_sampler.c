// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include "lib/log.h"
#include "kernel/fault_sampler.h"

struct fault_sampler {
	int prog_fd;
	uint64_t period, on_ns, every_ns;
	int ncpus;
	int *fds;			/* per CPU, -1: not open (or not online) */
	pthread_t thread;
	bool threaded;
	pthread_mutex_t lock;		/* stop, stats */
	pthread_cond_t wake;
	bool stop;
	bool warned;			/* a later window failed to open: said once */
	struct fault_sampler_stats st;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void close_window(struct fault_sampler *s)
{
	uint64_t faults = 0, n;
	int cpu;

	for (cpu = 0; cpu < s->ncpus; cpu++) {
		if (s->fds[cpu] < 0)
			continue;
		if (read(s->fds[cpu], &n, sizeof(n)) == sizeof(n))
			faults += n;
		close(s->fds[cpu]);	/* detaches the program; the last one turns the key off */
		s->fds[cpu] = -1;
	}
	pthread_mutex_lock(&s->lock);
	s->st.open = false;
	s->st.faults += faults;
	pthread_mutex_unlock(&s->lock);
}

/* One event per CPU, opened disabled so that no fault overflows before the program is on. */
static int open_window(struct fault_sampler *s, char *why, size_t whylen)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.sample_period = s->period,
		.disabled = 1,
	};
	int cpu, fd, err;

	for (cpu = 0; cpu < s->ncpus; cpu++) {
		fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV || errno == ENXIO)
				continue;	/* a possible CPU that is not online */
			err = -errno;
			snprintf(why, whylen, "failed to open the page-fault perf event: %s",
				 strerror(-err));
			goto fail;
		}
		s->fds[cpu] = fd;
		if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, s->prog_fd) ||
		    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
			err = -errno;
			snprintf(why, whylen, "failed to attach to the page-fault perf event: %s",
				 strerror(-err));
			goto fail;
		}
	}
	pthread_mutex_lock(&s->lock);
	s->st.open = true;
	s->st.windows++;
	pthread_mutex_unlock(&s->lock);
	return 0;
fail:
	close_window(s);
	return err;
}

/* Waits until the absolute CLOCK_MONOTONIC deadline; false if told to stop. */
static bool wait_until(struct fault_sampler *s, uint64_t deadline_ns)
{
	struct timespec ts = { .tv_sec = deadline_ns / 1000000000ULL,
			       .tv_nsec = deadline_ns % 1000000000ULL };
	bool go;

	pthread_mutex_lock(&s->lock);
	while (!s->stop && pthread_cond_timedwait(&s->wake, &s->lock, &ts) != ETIMEDOUT)
		;
	go = !s->stop;
	pthread_mutex_unlock(&s->lock);
	return go;
}

/* Window k opens at start + k * every and closes on_ns later: absolute deadlines, so the
 * duty cycle does not drift with the time the opens take. */
static void *cycle(void *arg)
{
	struct fault_sampler *s = arg;
	uint64_t start = mono_ns(), k;
	char why[WHY_LEN];

	for (k = 1;; k++) {
		if (!wait_until(s, start + (k - 1) * s->every_ns + s->on_ns))
			break;
		close_window(s);
		if (!wait_until(s, start + k * s->every_ns))
			break;
		if (open_window(s, why, sizeof(why)) && !s->warned) {
			log_warn("%s (sample mode's stacks pause until the next window)", why);
			s->warned = true;
		}
	}
	return NULL;
}

int fault_sampler_start(int prog_fd, uint64_t period, uint64_t on_ms, uint64_t every_ms,
			struct fault_sampler **out, char *why, size_t whylen)
{
	struct fault_sampler *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;
	int cpu, err;

	if (!s)
		return -ENOMEM;
	s->prog_fd = prog_fd;
	s->period = period;
	s->on_ns = on_ms * 1000000ULL;
	s->every_ns = every_ms * 1000000ULL;
	s->ncpus = libbpf_num_possible_cpus();
	s->fds = s->ncpus > 0 ? malloc(s->ncpus * sizeof(*s->fds)) : NULL;
	if (!s->fds) {
		free(s);
		return -ENOMEM;
	}
	for (cpu = 0; cpu < s->ncpus; cpu++)
		s->fds[cpu] = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	err = open_window(s, why, whylen);
	if (!err && on_ms < every_ms) {
		err = -pthread_create(&s->thread, NULL, cycle, s);
		if (err)
			snprintf(why, whylen, "failed to start the stack sampler's thread: %s",
				 strerror(-err));
		s->threaded = !err;
	}
	if (err) {
		fault_sampler_stop(s);
		return err;
	}
	*out = s;
	return 0;
}

void fault_sampler_stop(struct fault_sampler *s)
{
	if (!s)
		return;
	if (s->threaded) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	close_window(s);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s->fds);
	free(s);
}

void fault_sampler_stats(struct fault_sampler *s, struct fault_sampler_stats *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->st;
	pthread_mutex_unlock(&s->lock);
}
