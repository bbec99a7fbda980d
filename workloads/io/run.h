/* SPDX-License-Identifier: GPL-2.0 */
/* The state of one run: its jobs, files and threads, the start gate, the
 * timed phase and its per-second series. control.c drives it; the reports
 * read it when it is over. */
#ifndef LOAD_RUN_H
#define LOAD_RUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "engines/engine.h"
#include "io/files.h"
#include "job/jobset.h"

/* its threads (io/worker.h); the run holds them, each thread reads the run */
struct worker;

/* One second of the timed phase (the last one may be shorter). */
struct series_point {
	uint64_t t_ns;		/* end of the interval, from the start of the timed phase */
	uint64_t dur_ns;
	uint64_t ios[DDIR_NR];
	uint64_t bytes[DDIR_NR];
};

struct run {
	struct jobset *js;
	struct fileset *fs;
	const struct prog_opts *prog;
	struct worker *workers;
	unsigned nworkers;
	pid_t pid;
	volatile int *stop;	/* set by SIGINT/SIGTERM or a fatal error */

	/* the start gate */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned ready, failed, finished;
	int go;			/* 0 wait, 1 start, -1 abort */

	uint64_t go_ns;			/* threads released (CLOCK_MONOTONIC) */
	uint64_t timed_start_ns;	/* go + ramp_time */
	uint64_t timed_start_real_ns;	/* the same instant, CLOCK_REALTIME */
	uint64_t timed_end_ns;		/* last thread done */
	bool started;
	bool interrupted;

	struct series_point *series;
	unsigned nseries, capseries;
	char error[256];
};

#endif
