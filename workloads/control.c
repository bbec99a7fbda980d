// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "clock.h"
#include "control.h"
#include "io/worker.h"
#include "report/report.h"

#define SERIES_NS 1000000000ULL

volatile int control_stop;
static int wake_fd = -1;

static void wake(void)
{
	uint64_t one = 1;

	if (wake_fd >= 0 && write(wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: the main thread is awake anyway */
	}
}

static void on_signal(int sig)
{
	(void)sig;
	control_stop = 1;
	wake();
}

void control_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: waits must return */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

static void drain_wake(void)
{
	uint64_t v;

	while (read(wake_fd, &v, sizeof(v)) > 0)
		;
}

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;
	int ret = worker_setup(w), go;

	pthread_mutex_lock(&r->lock);
	if (ret)
		r->failed++;
	else
		r->ready++;
	pthread_cond_broadcast(&r->cond);
	while (!r->go)
		pthread_cond_wait(&r->cond, &r->lock);
	go = r->go;
	pthread_mutex_unlock(&r->lock);

	if (go > 0 && !ret)
		worker_run(w);
	worker_teardown(w);

	pthread_mutex_lock(&r->lock);
	r->finished++;
	pthread_mutex_unlock(&r->lock);
	wake();
	return NULL;
}

/* The driver hook: "ready" on stdout, then block until a line or EOF on stdin. */
static void wait_for_stdin(void)
{
	struct pollfd p[2] = { { 0, POLLIN, 0 }, { wake_fd, POLLIN, 0 } };
	char buf[256];

	fputs("ready\n", stdout);
	fflush(stdout);
	while (!control_stop) {
		ssize_t n;

		if (poll(p, 2, -1) < 0)
			continue;	/* EINTR: the loop condition decides */
		if (p[1].revents)
			drain_wake();
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(0, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || memchr(buf, '\n', (size_t)n))
			return;
	}
}

static struct second_sample read_live(const struct worker *w)
{
	struct second_sample now;

	for (int d = 0; d < DDIR_NR; d++) {
		now.ios[d] = __atomic_load_n(&w->live.ios[d], __ATOMIC_RELAXED);
		now.bytes[d] = __atomic_load_n(&w->live.bytes[d], __ATOMIC_RELAXED);
	}
	return now;
}

static void sample_total(const struct run *r, uint64_t *ios, uint64_t *bytes)
{
	*ios = *bytes = 0;
	for (unsigned i = 0; i < r->nworkers; i++) {
		struct second_sample s = read_live(&r->workers[i]);

		*ios += s.ios[0] + s.ios[1];
		*bytes += s.bytes[0] + s.bytes[1];
	}
}

static bool grow(void **arr, unsigned *cap, unsigned n, size_t elem)
{
	void *na;
	unsigned nc;

	if (n < *cap)
		return true;
	nc = *cap ? *cap * 2 : 64;
	na = realloc(*arr, nc * elem);
	if (!na)
		return false;
	*arr = na;
	*cap = nc;
	return true;
}

/* Closes an interval: each thread's share, and the run's sum. full: a whole
 * second, which also goes into the per-thread samples (fio's bw/iops stats). */
static void close_interval(struct run *r, uint64_t t_ns, uint64_t dur_ns, bool full)
{
	struct series_point p = { .t_ns = t_ns, .dur_ns = dur_ns };

	for (unsigned i = 0; i < r->nworkers; i++) {
		struct worker *w = &r->workers[i];
		struct second_sample now = read_live(w), delta;

		for (int d = 0; d < DDIR_NR; d++) {
			delta.ios[d] = now.ios[d] - w->snap.ios[d];
			delta.bytes[d] = now.bytes[d] - w->snap.bytes[d];
			p.ios[d] += delta.ios[d];
			p.bytes[d] += delta.bytes[d];
		}
		w->snap = now;
		if (full && grow((void **)&w->samples, &w->capsamples, w->nsamples,
				 sizeof(*w->samples)))
			w->samples[w->nsamples++] = delta;
	}
	if (!full && r->nseries && dur_ns < SERIES_NS / 100) {
		/* a sliver after the last tick: fold it into the last second */
		struct series_point *last = &r->series[r->nseries - 1];

		last->t_ns = t_ns;
		last->dur_ns += dur_ns;
		for (int d = 0; d < DDIR_NR; d++) {
			last->ios[d] += p.ios[d];
			last->bytes[d] += p.bytes[d];
		}
		return;
	}
	if (grow((void **)&r->series, &r->capseries, r->nseries, sizeof(*r->series)))
		r->series[r->nseries++] = p;
}

static unsigned finished(struct run *r)
{
	unsigned n;

	pthread_mutex_lock(&r->lock);
	n = r->finished;
	pthread_mutex_unlock(&r->lock);
	return n;
}

/* Sleeps until `until` (CLOCK_MONOTONIC ns) or a wake-up (a thread finished,
 * a signal). */
static void sleep_until(uint64_t until)
{
	uint64_t now = now_ns();
	struct pollfd p = { wake_fd, POLLIN, 0 };
	struct timespec ts;

	if (until <= now)
		return;
	ts.tv_sec = (time_t)((until - now) / 1000000000ULL);
	ts.tv_nsec = (long)((until - now) % 1000000000ULL);
	if (ppoll(&p, 1, &ts, NULL) > 0)
		drain_wake();
}

/* Per-second series and status lines while the threads run. The live
 * counters hold timed-phase I/O only, so the series starts from zero. */
static void monitor(struct run *r)
{
	uint64_t status_ns = r->prog->status_interval_us * 1000;
	uint64_t last_t = r->timed_start_ns, st_t = r->timed_start_ns;
	uint64_t next_series = r->timed_start_ns + SERIES_NS;
	uint64_t next_status = status_ns ? r->timed_start_ns + status_ns : UINT64_MAX;
	uint64_t st_ios = 0, st_bytes = 0;

	while (finished(r) < r->nworkers) {
		uint64_t target = next_series < next_status ? next_series : next_status;
		uint64_t now;

		sleep_until(target);
		now = now_ns();
		if (now < target)
			continue;	/* woken early: a thread ended or a signal came */
		if (now >= next_series) {
			close_interval(r, next_series - r->timed_start_ns, next_series - last_t, true);
			last_t = next_series;
			next_series += SERIES_NS;
		}
		if (now >= next_status) {
			uint64_t ios, bytes;
			double dt = (double)(now - st_t) / 1e9;

			sample_total(r, &ios, &bytes);
			report_status(r, (double)(now - r->timed_start_ns) / 1e9,
				      dt > 0 ? (double)(ios - st_ios) / dt : 0,
				      dt > 0 ? (double)(bytes - st_bytes) / dt : 0, ios);
			st_ios = ios;
			st_bytes = bytes;
			st_t = now;
			next_status += status_ns;
		}
	}
	r->timed_end_ns = 0;
	for (unsigned i = 0; i < r->nworkers; i++)
		if (r->workers[i].st.end_ns > r->timed_end_ns)
			r->timed_end_ns = r->workers[i].st.end_ns;
	/* the last, partial second */
	if (r->timed_end_ns > last_t)
		close_interval(r, r->timed_end_ns - r->timed_start_ns, r->timed_end_ns - last_t,
			       false);
}

static int start_threads(struct run *r)
{
	sigset_t block, old;
	unsigned created = 0;

	/* workers never take the signals: the main thread turns them into a stop */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (; created < r->nworkers; created++) {
		if (pthread_create(&r->workers[created].thread, NULL, thread_main,
				   &r->workers[created]))
			break;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (created < r->nworkers) {
		snprintf(r->error, sizeof(r->error), "cannot start thread %u: %s", created,
			 strerror(errno));
		pthread_mutex_lock(&r->lock);
		r->go = -1;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
		for (unsigned i = 0; i < created; i++)
			pthread_join(r->workers[i].thread, NULL);
		return -1;
	}
	return 0;
}

int control_run(struct run *r)
{
	uint64_t ramp_ns = 0, go_real;
	bool ok;

	for (unsigned i = 0; i < r->js->njobs; i++)
		if (r->js->jobs[i].ramp_time_us * 1000 > ramp_ns)
			ramp_ns = r->js->jobs[i].ramp_time_us * 1000;
	if (control_stop) {
		r->interrupted = true;
		return 0;
	}
	if (start_threads(r))
		return -1;

	/* every thread set up (files open, engine and buffers ready), or one failed */
	pthread_mutex_lock(&r->lock);
	while (r->ready + r->failed < r->nworkers)
		pthread_cond_wait(&r->cond, &r->lock);
	ok = r->failed == 0;
	pthread_mutex_unlock(&r->lock);
	if (!ok) {
		for (unsigned i = 0; i < r->nworkers; i++) {
			if (r->workers[i].error) {
				snprintf(r->error, sizeof(r->error), "%s", r->workers[i].error_msg);
				break;
			}
		}
	} else if (r->prog->start_on_stdin) {
		wait_for_stdin();
	}

	pthread_mutex_lock(&r->lock);
	r->go_ns = now_ns();
	go_real = clock_ns(CLOCK_REALTIME);
	r->timed_start_ns = r->go_ns + ramp_ns;
	r->timed_start_real_ns = go_real + ramp_ns;
	r->go = ok && !control_stop ? 1 : -1;
	r->started = r->go > 0;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);

	if (r->started)
		monitor(r);
	for (unsigned i = 0; i < r->nworkers; i++)
		pthread_join(r->workers[i].thread, NULL);
	if (!r->started)
		r->timed_end_ns = r->timed_start_ns;
	r->interrupted = control_stop != 0;
	return ok ? 0 : -1;
}
