// SPDX-License-Identifier: GPL-2.0
/* The jobs of one run: each job file section and each --name adds one. */
#include <stddef.h>
#include "job/jobset.h"

struct job_opts *jobset_add(struct jobset *js, const struct job_opts *base)
{
	struct job_opts *j;

	if (js->njobs >= MAX_JOBS)
		return NULL;
	j = &js->jobs[js->njobs++];
	job_opts_copy(j, base);
	return j;
}
