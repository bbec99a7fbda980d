/* SPDX-License-Identifier: GPL-2.0 */
/* One thread of one job: its files, offsets, engine, buffers and statistics. */
#ifndef LOAD_WORKER_H
#define LOAD_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "engines/engine.h"
#include "io/files.h"
#include "io/randmap.h"
#include "io/rng.h"
#include "stats/stats.h"

struct run;

struct second_sample {
	uint64_t ios[DDIR_NR];
	uint64_t bytes[DDIR_NR];
};

struct wfile {
	struct file_region r;
	int fd;
	uint64_t nblocks;	/* whole bs blocks in the region */
	uint64_t seq_next;	/* sequential: next block */
	struct randmap map;	/* random: blocks taken this pass */
};

struct worker {
	struct run *run;
	struct job_opts *job;
	unsigned index;		/* thread number in the run */
	unsigned job_index;
	unsigned clone;		/* which of the job's numjobs threads */
	pthread_t thread;
	pid_t tid;

	struct wfile *files;
	unsigned nfiles;
	unsigned cur_file;
	struct rng rng_off, rng_mix, rng_data;
	struct engine eng;
	struct io_unit *units;
	struct io_unit **free_units;
	unsigned nfree;
	void *bufmem;

	uint64_t budget;	/* I/Os to issue; 0 = until the deadline */
	uint64_t issued;
	uint64_t writes_since_sync;
	uint64_t ramp_end_ns;
	uint64_t deadline_ns;	/* 0 = none */
	bool in_ramp;
	bool append_exhausted;
	bool stopped_on_error;
	int error;		/* setup failure (-errno), reported by the run */
	char error_msg[200];

	struct thread_stats st;
	struct live_counters live;

	/* one sample per full second of the timed phase, kept by the monitor */
	struct second_sample *samples;
	unsigned nsamples, capsamples;
	struct second_sample snap;	/* live counters at the last tick */
};

/* Opens files, sets up the engine and buffers. 0, or -1 with w->error_msg. */
int worker_setup(struct worker *w);
/* The timed loop; returns when the budget, the deadline or a stop ends it. */
void worker_run(struct worker *w);
void worker_teardown(struct worker *w);

#endif
