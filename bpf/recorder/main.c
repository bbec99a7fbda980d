// SPDX-License-Identifier: GPL-2.0
/* lockscope-record: attach, count for a window, detach, write one JSON
 * document. See --help and docs/recorder-json.md.
 *
 * Nothing is pinned: every program is held by a link fd of this process,
 * so whatever way it dies (SIGKILL included), the kernel detaches it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include "clock.h"
#include "json_out.h"
#include "session.h"
#include "msg.h"
#include "setup/privileges.h"
#include "emit/document.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: poll() returns EINTR at once */
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static double mono_s(void)
{
	return clock_ns(CLOCK_MONOTONIC) / 1e9;
}

/* Reads one line from stdin (non-blocking use after poll). Returns 1 for a
 * line, 0 for EOF, -1 when nothing complete yet. */
static int read_line(void)
{
	char c;
	ssize_t n;

	for (;;) {
		n = read(STDIN_FILENO, &c, 1);
		if (n == 0)
			return 0;
		if (n < 0)
			return errno == EINTR ? -1 : 0;
		if (c == '\n')
			return 1;
	}
}

enum wake { WAKE_TIMEOUT, WAKE_LINE, WAKE_EOF, WAKE_SIGNAL, WAKE_DEADLINE };

/* Periodic work while waiting: /proc scans, the overhead budget, series;
 * and the --duty phase changes, at times of their own. */
enum timer { T_SCAN, T_BUDGET, T_SERIES, NR_TIMERS };
#define BUDGET_FIRST_S 0.25

/* Waits for stdin (when watched), a signal or the deadline, running the
 * session's periodic work. */
static enum wake wait_for(struct rec_session *s, bool watch_stdin, double deadline)
{
	const struct rec_opts *o = s->opts;
	double period[NR_TIMERS] = { o->scan_ms / 1000.0, 1.0, o->interval_ms / 1000.0 };
	double next[NR_TIMERS];
	int t;

	for (t = 0; t < NR_TIMERS; t++)
		next[t] = mono_s() + period[t];
	/* the first budget check early: until it, the window runs at the full duty */
	next[T_BUDGET] = mono_s() + BUDGET_FIRST_S;
	for (;;) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		double duty = session_duty_tick(s) / 1e9;
		double now = mono_s(), until = deadline > 0 ? deadline : -1;
		int timeout, r;

		if (stop_signal)
			return WAKE_SIGNAL;
		if (deadline > 0 && now >= deadline)
			return WAKE_DEADLINE;
		for (t = 0; t < NR_TIMERS; t++)
			if (period[t] > 0 && (until < 0 || next[t] < until))
				until = next[t];
		if (duty > 0 && (until < 0 || duty < until))
			until = duty;
		timeout = until < 0 ? -1 : until > now ? (int)((until - now) * 1000) + 1 : 0;
		r = poll(&pfd, watch_stdin ? 1 : 0, timeout);
		if (r < 0 && errno != EINTR)
			return WAKE_SIGNAL;
		if (r > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR))) {
			int l = read_line();

			if (l == 1)
				return WAKE_LINE;
			if (l == 0)
				return WAKE_EOF;
		}
		for (t = 0; t < NR_TIMERS; t++) {
			if (period[t] <= 0 || mono_s() < next[t])
				continue;
			if (t == T_SCAN)
				session_tick(s);
			else if (t == T_SERIES)
				session_series_tick(s);
			else
				session_overhead_tick(s);
			next[t] += period[t];
			if (next[t] < mono_s())
				next[t] = mono_s() + period[t];
		}
	}
}

/* Root is not needed: CAP_BPF and CAP_PERFMON are (docs/fleet.md, least privilege). */
static int check_privileges(void)
{
	bool bpf = privileges_effective(CAP_BPF), perfmon = privileges_effective(CAP_PERFMON);
	int fd;

	if (!bpf || !perfmon) {
		msg_error("%s: recording needs %s%s%s; 'lockscope doctor' has the detail",
			  geteuid() ? "not root" : "root without them", bpf ? "" : "CAP_BPF",
			  !bpf && !perfmon ? " and " : "", perfmon ? "" : "CAP_PERFMON");
		return -1;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "probe", 4, 4, 1, NULL);
	if (fd < 0) {
		msg_error("the bpf() syscall is not usable here (%s); 'lockscope doctor' has the detail",
			  strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

static int list_facts(void)
{
	struct json_out j = JSON_OUT_INIT(stdout);

	json_begin_object(&j);
	document_facts(&j);
	json_end_object(&j);
	fputc('\n', stdout);
	return 0;
}

static int list_features(const struct rec_opts *o, const struct rec_filter *f)
{
	struct rec_session s;
	struct json_out j = JSON_OUT_INIT(stdout);
	int err = check_privileges() ? -EPERM : 0;

	memset(&s, 0, sizeof(s));
	if (!err)
		err = session_prepare(&s, o, f);
	if (err)
		probe_all_off(&s.probe, err == -EPERM ? "cannot probe: not root or no bpf()" :
				  "cannot probe: the BPF object did not load (see stderr)");
	json_begin_object(&j);
	json_key(&j, "groups");
	probe_json(&s.probe, &j, true);
	json_key(&j, "machinery_frames");
	stacks_machinery_json(&j);
	document_facts(&j);
	json_end_object(&j);
	fputc('\n', stdout);
	session_finish(&s);
	msg_step("detach");
	return err ? 1 : 0;
}

/* Where the document goes. A regular file (or a new one) is written whole or
 * not at all: into a fresh temporary beside it (never an existing file),
 * renamed over it at the end. Anything else (/dev/null, a FIFO, a terminal)
 * is written in place: renaming over it would replace it. tmp is "" then. */
static FILE *open_output(const char *out, char *tmp, size_t len)
{
	struct stat st;
	mode_t mask;
	FILE *f;
	int fd;

	tmp[0] = 0;
	if (stat(out, &st) == 0 && !S_ISREG(st.st_mode))
		return fopen(out, "we");
	snprintf(tmp, len, "%s.XXXXXX", out);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return NULL;
	mask = umask(0);
	umask(mask);
	/* what fopen would have made: 0666 less the umask (mkostemp makes 0600) */
	if (fchmod(fd, 0666 & ~mask) || !(f = fdopen(fd, "w"))) {
		close(fd);
		unlink(tmp);
		return NULL;
	}
	return f;
}

static int write_output(struct rec_session *s, const char *out)
{
	char tmp[4096];
	FILE *f = stdout;
	int err;

	if (out) {
		f = open_output(out, tmp, sizeof(tmp));
		if (!f) {
			msg_error("cannot write %s: %s", out, strerror(errno));
			return -errno;
		}
	}
	err = document_write(s, f);
	if (out) {
		if (fclose(f) && !err)
			err = -errno;
		if (!err && tmp[0] && rename(tmp, out))
			err = -errno;
		if (err) {
			msg_error("cannot write %s: %s", out, strerror(-err));
			if (tmp[0])
				unlink(tmp);
		}
	} else {
		fflush(stdout);
	}
	return err;
}

int main(int argc, char **argv)
{
	struct rec_session s;
	struct rec_filter filter;
	struct rec_opts o;
	double deadline = 0;
	enum wake w = WAKE_LINE;
	int code, err;

	msg_step("exec");
	if (opts_parse(argc, argv, &o, &code))
		return code;
	if (probe_check_names(&o) || filter_resolve(&o, &filter))
		return EXIT_USAGE;
	if (o.list_facts)
		return list_facts();
	if (o.list_features)
		return list_features(&o, &filter);
	if (check_privileges())
		return 1;
	if (install_signals())
		return 1;
	err = session_prepare(&s, &o, &filter);
	if (err) {
		session_finish(&s);
		return 1;
	}
	msg_step("prepared");
	if (o.start_on_stdin) {
		printf("ready\n");
		fflush(stdout);
		w = wait_for(&s, true, 0);
	}
	if (w == WAKE_LINE) {
		session_start(&s);
		/* the window is open: a caller can start its workload now */
		printf("started\n");
		fflush(stdout);
		if (o.duration > 0)
			deadline = mono_s() + o.duration;
		wait_for(&s, o.start_on_stdin, deadline);
	}
	msg_step("window");
	session_stop(&s);
	err = session_read(&s);
	msg_step("read");
	if (!err)
		err = write_output(&s, o.out);
	msg_step("write");
	if (!err && o.start_on_stdin && o.out) {
		/* the caller may go on: only detaching is left */
		printf("done\n");
		fflush(stdout);
	}
	session_finish(&s);
	msg_step("detach");
	return err ? 1 : 0;
}
