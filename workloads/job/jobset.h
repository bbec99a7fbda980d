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

/* Parses one fio job file, starting each [global] and job from *base.
 * On error fills err ("FILE:LINE: ...") and returns -1. */
int jobfile_parse(const char *path, const struct job_opts *base, struct jobset *js,
		  char *err, size_t errlen);

/* Parses argv (fio's syntax: options before the first --name are global
 * defaults, positional arguments are job files). Fills prog and js. */
int cmdline_parse(int argc, char **argv, struct prog_opts *prog, struct jobset *js,
		  char *err, size_t errlen);


#endif
