/* SPDX-License-Identifier: GPL-2.0 */
/* Reporting: threads grouped into fio-style job entries, then printed as
 * fio-compatible JSON or as human-readable text. */
#ifndef LOAD_REPORT_H
#define LOAD_REPORT_H

#include <stdio.h>
#include "io/run.h"

#define LOAD_VERSION "lockscope-load-0.1"

/* Per-second samples of one entry, summarized as fio's bw_* and iops_* keys. */
struct sample_stats {
	uint64_t n;
	double min, max, mean, dev;
};

struct job_entry {
	const struct job_opts *job;	/* the first job in the entry */
	struct thread_stats st;		/* merged */
	uint64_t runtime_ns[DDIR_NR];	/* longest thread, per direction (fio) */
	uint64_t job_runtime_ns;	/* sum over threads (fio's job_runtime) */
	unsigned first, count;		/* workers [first, first + count) */
	struct sample_stats bw_kib[DDIR_NR], iops[DDIR_NR];
	double bw_agg[DDIR_NR];		/* percent of the whole run's bandwidth */
};

/* One entry per thread, or one for the whole run with group_reporting. */
unsigned report_group_entries(const struct run *r, struct job_entry **out);

/* Whole-run totals over all threads. */
void report_group_totals(const struct run *r, struct thread_stats *tot);

int report_json(FILE *f, const struct run *r);
int report_text(FILE *f, const struct run *r);

/* One progress line: JSON on stderr with --output-format=json, text on stdout. */
void report_status(const struct run *r, double elapsed_s, double iops, double bw_bytes,
		   uint64_t total_ios);

static inline double rate_per_s(uint64_t count, uint64_t ns)
{
	return ns ? (double)count * 1e9 / (double)ns : 0.0;
}

#endif
