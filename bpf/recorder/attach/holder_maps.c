// SPDX-License-Identifier: GPL-2.0
/* Set-up of the holders group before load: its maps only when it is on (its
 * snapshot timers are probe.c's timer links, probe_attach_timers). */
#include <stdio.h>
#include <bpf/libbpf.h>
#include "record.h"
#include "record.skel.h"
#include "attach/holder_maps.h"
#include "attach/probe.h"

void holder_maps_configure(struct record_bpf *skel, struct rec_probe *p)
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
