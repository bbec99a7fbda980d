/* SPDX-License-Identifier: GPL-2.0 */
/* One recording, with the lifecycle of perf's lock-contention skeleton:
 * prepare (load, attach) -> start (open the window) -> stop -> read -> finish. */
#ifndef LOCKSCOPE_RECORD_SESSION_H
#define LOCKSCOPE_RECORD_SESSION_H

#include <stdbool.h>
#include <stdio.h>
#include "record.h"
#include "filter.h"
#include "opts.h"
#include "overhead.h"
#include "duty.h"
#include "probe.h"
#include "read.h"
#include "stacks.h"
#include "tpfmt.h"

struct rec_paths;
struct rec_series;
struct btfname;

struct rec_session {
	const struct rec_opts *opts;
	struct rec_filter filter;
	struct rec_probe probe;
	struct rec_bits bits;
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
	__u64 text_start, text_end; /* kernel text, for stack fingerprints */
	int *seen_pids;             /* processes whose maps were read */
	size_t nr_seen, cap_seen;
	struct rec_overhead ovh;
	bool ovh_ready;
	struct rec_duty duty;       /* --duty: the programs attached part of the time */
	struct rec_series *series;  /* --interval-ms, else NULL */
	bool in_series;             /* writing a series object: unchanged entries left out */
	struct btfname *series_names; /* lock names, kept between series objects */
	bool maps_preallocated;     /* the kernel has no BPF allocator (session.c) */
	unsigned long long prealloc_bytes; /* what the large maps then take up front */
	int prealloc_noted;         /* the note about it was written */
};

extern const char *const session_syscall_names[REC_NR_SYSCALLS];

int session_prepare(struct rec_session *s, const struct rec_opts *o, const struct rec_filter *f);
void session_start(struct rec_session *s);
/* While recording: read /proc for new inodes and processes. */
void session_tick(struct rec_session *s);
/* Once a second while recording: the --max-overhead check (it may pause
 * every program for a while; the window stays open). */
void session_overhead_tick(struct rec_session *s);
/* While recording: the --duty phase change, when due; when the next is due
 * (CLOCK_MONOTONIC ns), 0 for never. */
__u64 session_duty_tick(struct rec_session *s);
/* Every --interval-ms while recording: one series interval. */
void session_series_tick(struct rec_session *s);
void session_stop(struct rec_session *s);
int session_read(struct rec_session *s);
void session_finish(struct rec_session *s);


#endif
