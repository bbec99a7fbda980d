/* SPDX-License-Identifier: GPL-2.0 */
/* The command line into the program's options and the jobs of a run. */
#ifndef LOAD_CMDLINE_H
#define LOAD_CMDLINE_H

#include <stddef.h>
#include "job/jobset.h"

/* Parses argv (fio's syntax: options before the first --name are global
 * defaults, positional arguments are job files). Fills prog and js. */
int cmdline_parse(int argc, char **argv, struct prog_opts *prog, struct jobset *js,
		  char *err, size_t errlen);

#endif
