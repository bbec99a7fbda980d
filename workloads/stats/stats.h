/* SPDX-License-Identifier: GPL-2.0 */
/* Per-thread I/O statistics and their merge into a job or group. */
#ifndef LOAD_STATS_H
#define LOAD_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include "engines/engine.h"
#include "stats/lat.h"

struct dir_stats {
	uint64_t ios;		/* completed I/Os, short ones included */
	uint64_t bytes;		/* bytes actually moved */
	uint64_t short_ios;
	uint64_t errors;
	struct lat_hist clat;	/* completion latency: submit -> complete */
	struct lat_summary slat;	/* async engines: prepare -> submitted */
	struct lat_summary lat;	/* async engines: prepare -> complete */
};

struct verify_stats {
	uint64_t blocks;
	uint64_t ok;
	uint64_t mismatches;
	uint64_t unwritten;	/* all-zero blocks in holes or unwritten extents */
	bool have_first;
	uint64_t first_offset;
	char first_reason[96];
};

struct thread_stats {
	struct dir_stats dir[DDIR_NR];
	uint64_t sync_ios;
	struct lat_summary sync_lat;
	uint64_t start_ns;	/* this thread's timed phase, CLOCK_MONOTONIC */
	uint64_t end_ns;
	uint64_t usr_ns, sys_ns;
	uint64_t ctx, majf, minf;
	int first_error;	/* errno of the first failed I/O, 0 if none */
	struct verify_stats verify;
};

/* Counters a running thread publishes for the progress sampler (never reset). */
struct live_counters {
	uint64_t ios[DDIR_NR];
	uint64_t bytes[DDIR_NR];
} __attribute__((aligned(64)));

void stats_thread_reset(struct thread_stats *s);

/* Adds src into dst as fio's group reporting does: sums, merged latencies,
 * the longest runtime per direction. */
void stats_thread_merge(struct thread_stats *dst, const struct thread_stats *src);
void stats_verify_merge(struct verify_stats *dst, const struct verify_stats *src);
void stats_verify_mismatch(struct verify_stats *v, uint64_t offset, const char *reason);

static inline uint64_t stats_runtime_ns(const struct thread_stats *s)
{
	return s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
}

#endif
