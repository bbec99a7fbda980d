/* SPDX-License-Identifier: GPL-2.0 */
/* Laying the planned files out: the extent state each layout asks for. */
#ifndef LOAD_LAYOUT_H
#define LOAD_LAYOUT_H

#include <stddef.h>
#include "io/files.h"

/* Creates, marks and lays out the files as planned (before the timed phase).
 * Returns 0, or -1 with err (exit 1). Stops early, returning 1, if *stop is set. */
int layout_files(struct fileset *fs, const struct jobset *js, volatile int *stop,
		 char *err, size_t errlen);

#endif
