/* SPDX-License-Identifier: GPL-2.0 */
/* The jobs of one run, as parsed from job files and the command line. */
#ifndef LOAD_JOBSET_H
#define LOAD_JOBSET_H

#include "job/job.h"

#define MAX_JOBS 256

struct jobset {
	struct job_opts jobs[MAX_JOBS];
	unsigned njobs;
	/* "global options" for the report: cmdline globals, then [global] sections */
	struct job_opts globals;
};

/* Adds a copy of base as a new job; returns it, or NULL when full. */
struct job_opts *jobset_add(struct jobset *js, const struct job_opts *base);

#endif
