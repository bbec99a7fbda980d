/* SPDX-License-Identifier: GPL-2.0 */
/* Where a probe group's own tracepoints are missing from a kernel, the same
 * facts from other events it has (functions, for fentry and kprobe): one
 * row per alternative, each with the kernel source it rests on. */
#ifndef LOCKSCOPE_RECORD_ALTERNATIVES_H
#define LOCKSCOPE_RECORD_ALTERNATIVES_H

#include "attach/probe_groups.h"

struct rec_alternative {
	enum rec_group_id group;
	unsigned int kinds;                 /* bit per enum rec_attach this row serves */
	const char *needs[GROUP_MAX_TPS];   /* what those kinds attach to, in progs' order */
	const char *rests_on;               /* kernel source file, function, versions */
};

/* What group g attaches to with kind where an alternative stands in for its
 * tracepoints (GROUP_MAX_TPS entries, NULL after the last); NULL: the group's
 * own tracepoints (probe.c). */
const char *const *alternatives_needs(int g, int kind);

#endif
