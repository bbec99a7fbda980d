/* SPDX-License-Identifier: GPL-2.0 */
/* --pid, --comm and --cgroup: checked in user space, applied in the kernel
 * as rodata (a short list of process ids, a name, a cgroup id and level). */
#ifndef LOCKSCOPE_RECORD_FILTER_H
#define LOCKSCOPE_RECORD_FILTER_H

#include <linux/types.h>
#include "setup/opts.h"

struct record_bpf;

#include <stdbool.h>

struct rec_filter {
	const int *pids;
	int nr_pids;
	const char *comm;
	const char *cgroup;
	__u64 cgroup_id;
	__u32 cgroup_level;
	bool cgroup_helper;         /* matched by the kernel's helper, else by ancestors */
};

/* Checks that every pid exists and that the cgroup is a cgroup v2
 * directory. 0, or -1 with a one-line message (exit status 2). */
int filter_resolve(const struct rec_opts *o, struct rec_filter *f);

/* Before load: the rodata switches. */
void filter_rodata(struct record_bpf *skel, const struct rec_filter *f);

#endif
