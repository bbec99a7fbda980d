/* SPDX-License-Identifier: GPL-2.0 */
/* fio job files (ini sections) into the jobs of a run. */
#ifndef LOAD_JOBFILE_H
#define LOAD_JOBFILE_H

#include <stddef.h>
#include "job/jobset.h"

/* Parses one fio job file, starting each [global] and job from *base.
 * On error fills err ("FILE:LINE: ...") and returns -1. */
int jobfile_parse(const char *path, const struct job_opts *base, struct jobset *js,
		  char *err, size_t errlen);

#endif
