/* SPDX-License-Identifier: GPL-2.0 */
/* Checks that need more than one option at a time, before anything runs. */
#ifndef LOAD_VALIDATE_H
#define LOAD_VALIDATE_H

#include <stddef.h>
#include "job/jobset.h"

/* 0, or -1 with one line in err naming the option (exit 2). */
int validate_jobs(struct jobset *js, const struct prog_opts *prog, char *err, size_t errlen);

#endif
