/* SPDX-License-Identifier: GPL-2.0 */
/* The whole state of one recording (struct rec_session), as the stages before
 * fill it and the writers of emit/ read it; its lifecycle is session.h's. */
#ifndef LOCKSCOPE_RECORD_RECORDING_H
#define LOCKSCOPE_RECORD_RECORDING_H

#include <stdbool.h>
#include <stdio.h>
#include "record.h"
#include "setup/filter.h"
#include "setup/opts.h"
#include "attach/overhead.h"
#include "attach/duty.h"
#include "attach/probe.h"
#include "read/read.h"
#include "resolve/stacks.h"
#include "setup/tpfmt.h"

struct rec_paths;
struct rec_series;
struct btfname;

struct rec_session {
	const struct rec_opts *opts;
	struct rec_filter filter;
	struct rec_probe probe;
	struct rec_bits bits;
	struct rec_tpoff tpoff;
	struct tpfmt_source decoding[TPFMT_NR_SOURCES];
	__u32 syscall_nrs[REC_NR_SYSCALLS];
	struct rec_paths *paths;
	struct rec_stacks stacks;
	bool stacks_ready;
	struct rec_data data;
	bool data_ready;
	__u64 start_mono, end_mono, start_wall, end_wall;
	bool started;
	unsigned int hz;            /* kernel CONFIG_HZ, 0 if unknown */
	int *seen_pids;             /* processes whose maps were read */
	size_t nr_seen, cap_seen;
	struct rec_overhead ovh;
	bool ovh_ready;
	struct rec_duty duty;       /* --duty: the programs attached part of the time */
	struct rec_series *series;  /* --interval-ms, else NULL */
	bool in_series;             /* writing a series object: unchanged entries left out */
	__u64 view_ns;              /* the time observed of what is being written: the
				     * window's, or the interval's (block figures per second) */
	struct btfname *series_names; /* lock names, kept between series objects */
	bool maps_preallocated;     /* the kernel has no BPF allocator (session.c) */
	unsigned long long prealloc_bytes; /* what the large maps then take up front */
	int prealloc_noted;         /* the note about it was written */
};


#endif
