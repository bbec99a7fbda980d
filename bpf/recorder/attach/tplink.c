// SPDX-License-Identifier: GPL-2.0
/* Destroying a libbpf link of a classic tracepoint program closes its perf
 * event, and the last close of a tracepoint's perf event waits for the
 * tracepoint's callers to leave under event_mutex
 * (kernel/trace/trace_event_perf.c, perf_trace_event_unreg():
 * tracepoint_synchronize_unregister()): tens of ms per event, one event
 * after another, up to a second for the recorder's ~25 under load. Here
 * the event stays open: the link (BPF_LINK_CREATE on the event) is given a
 * duplicate of its fd, and destroying the link disables the event and takes
 * the program out of the tracepoint's program array
 * (kernel/trace/bpf_trace.c, perf_event_detach_bpf_prog(): no wait), so
 * the program no longer runs; attaching again is a new link on the same
 * event. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "attach/tplink.h"

#define TRACEFS "/sys/kernel/tracing"

static int event_fd(const char *sys, const char *event)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT, .size = sizeof(attr),
		.sample_period = 1, .wakeup_events = 1,
	};
	char path[300];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), TRACEFS "/events/%s/%s/id", sys, event);
	f = fopen(path, "re");
	if (!f)
		return -1;
	ok = fscanf(f, "%llu", (unsigned long long *)&attr.config) == 1;
	fclose(f);
	if (!ok) {
		errno = EINVAL;
		return -1;
	}
	/* as libbpf opens it: any process, CPU 0 (a tracepoint's programs run on every CPU) */
	return syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
}

/* A link on a duplicate of the event's fd (the link owns it); *dup: it. */
static struct bpf_link *attach_dup(struct bpf_program *prog, int kept, int *dup)
{
	int fd = fcntl(kept, F_DUPFD_CLOEXEC, 0), err;
	struct bpf_link *link;

	*dup = fd;
	if (fd < 0)
		return NULL;
	link = bpf_program__attach_perf_event(prog, fd);
	if (!link) {
		err = errno;
		close(fd);
		errno = err;
	}
	return link;
}

struct bpf_link *tplink_again(struct bpf_program *prog, int kept)
{
	int dup;

	return attach_dup(prog, kept, &dup);
}

struct bpf_link *tplink_attach(struct bpf_program *prog, const char *sys, const char *event,
			       int *kept)
{
	int fd = event_fd(sys, event), err, dup;
	struct bpf_link *link;

	*kept = -1;
	if (fd < 0)
		return NULL;
	link = attach_dup(prog, fd, &dup);
	if (!link) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	/* Without perf links (libbpf sets the program on the event by ioctl,
	 * and the link's fd is the event's), a kept duplicate would keep the
	 * program attached: the event goes with the link then. */
	if (bpf_link__fd(link) == dup) {
		close(fd);
		return link;
	}
	*kept = fd;
	return link;
}
