/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LOAD_PARSE_DUMP_H
#define LOAD_PARSE_DUMP_H

#include <stdio.h>
#include "job/jobset.h"

/* --parse-only: the resolved jobs as JSON. */
void parse_dump(FILE *f, const struct jobset *js, const struct prog_opts *prog);

#endif
