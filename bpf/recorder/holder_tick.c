// SPDX-License-Identifier: GPL-2.0
/* Set-up of the holders group: its maps before load, and the snapshot timer
 * (a cpu-clock perf event per online CPU, each running the group's
 * holder_tick program every period). Links die with the process; nothing is
 * pinned. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "record.h"
#include "record.skel.h"
#include "holder.h"
#include "probe.h"

static struct {
	struct bpf_link **links;
	int nr;
	int paused;     /* timers detached for an "off" phase of --duty */
	char why[160];
} ticks;

void holder_tick_configure(struct record_bpf *skel, struct rec_probe *p)
{
	struct rec_group_state *g = &p->groups[GROUP_HOLDERS];
	struct bpf_map *maps[] = {
		skel->maps.holder_slots, skel->maps.holder_stats, skel->maps.holder_stacks,
		skel->maps.holder_scratch, skel->maps.holder_counts, skel->maps.holder_memo,
	};
	bool on = g->attach >= 0;
	size_t i;

	/* Waiters' slots are task storage (kernel/bpf/bpf_task_storage.c): a
	 * kernel without it would refuse the whole object. */
	if (on && libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) != 1) {
		g->attach = -1;
		snprintf(g->reason, sizeof(g->reason), "no BPF task storage maps in this kernel");
		on = false;
	}
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		bpf_map__set_autocreate(maps[i], on);
	g = &p->groups[GROUP_RELEASERS];
	if (!on && g->attach >= 0) {
		g->attach = -1;
		snprintf(g->reason, sizeof(g->reason), "needs the holders group");
	}
	bpf_map__set_autocreate(skel->maps.releaser_stats, on); /* holder_end writes it */
}

static struct bpf_program *tick_program(struct record_bpf *skel)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj)
		if (bpf_program__type(prog) == BPF_PROG_TYPE_PERF_EVENT &&
		    bpf_program__autoload(prog) && bpf_program__fd(prog) >= 0 &&
		    !strncmp(bpf_program__name(prog), "holder_tick", 11))
			return prog;
	return NULL;
}

int holder_tick_attach(struct rec_probe *p, unsigned int period_ms)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = (__u64)period_ms * 1000000,
	};
	int ncpu = libbpf_num_possible_cpus(), cpu, fd, err = 0;
	struct bpf_program *prog;

	ticks.why[0] = 0;
	ticks.paused = 0;
	if (!probe_group_on(p, GROUP_HOLDERS))
		return 0;
	prog = tick_program(p->skel);
	if (!prog || ncpu <= 0) {
		snprintf(ticks.why, sizeof(ticks.why), "no timer program loaded");
		snprintf(p->groups[GROUP_HOLDERS].reason, sizeof(p->groups[GROUP_HOLDERS].reason),
			 "no snapshots: %s", ticks.why);
		return -ENOENT;
	}
	ticks.links = calloc(ncpu, sizeof(*ticks.links));
	if (!ticks.links)
		return -ENOMEM;
	for (cpu = 0; cpu < ncpu; cpu++) {
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* a possible CPU that is not online */
			err = -errno;
			break;
		}
		ticks.links[ticks.nr] = bpf_program__attach_perf_event(prog, fd);
		if (!ticks.links[ticks.nr]) {
			err = -errno;
			close(fd);
			break;
		}
		ticks.nr++;
	}
	if (err) {
		snprintf(ticks.why, sizeof(ticks.why), "cpu-clock timer on CPU %d: %s", cpu,
			 strerror(-err));
		holder_tick_detach();
		/* said where the groups are listed too: no snapshot will be taken */
		snprintf(p->groups[GROUP_HOLDERS].reason, sizeof(p->groups[GROUP_HOLDERS].reason),
			 "no snapshots: %s", ticks.why);
	}
	return err;
}

int holder_tick_detach(void)
{
	int i, n = ticks.nr;

	for (i = 0; i < ticks.nr; i++)
		bpf_link__destroy(ticks.links[i]);
	free(ticks.links);
	ticks.links = NULL;
	ticks.nr = 0;
	ticks.paused = 0;
	return n;
}

void holder_tick_pause(void)
{
	int n = ticks.nr;

	holder_tick_detach();
	ticks.paused = n;
}

int holder_tick_cpus(const char **why)
{
	*why = ticks.why[0] ? ticks.why : NULL;
	return ticks.nr + ticks.paused;
}
