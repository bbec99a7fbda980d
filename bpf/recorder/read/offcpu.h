/* SPDX-License-Identifier: GPL-2.0 */
/* Off-CPU records after the window (offcpu.c). */
#ifndef LOCKSCOPE_RECORD_OFFCPU_H
#define LOCKSCOPE_RECORD_OFFCPU_H

#include <stddef.h>
#include "read/read_data.h"

/* Adds each thread's pending records (d->tasks) to d->offcpu; a new key
 * beyond max records counts one DROP_OFFCPU_FULL. 0 or -ENOMEM. */
int offcpu_add_pending(struct rec_data *d, size_t max);

/* Raises cur's raw records to prev's, key by key (a read can miss a
 * record's latest part, never add to it), adding the keys cur lacks; sorts
 * prev. 0 or -ENOMEM. */
int offcpu_raise(struct rec_data *cur, struct rec_data *prev);

/* Spreads each unsampled record over the sampled ones of its (thread,
 * reason, lock, system call) and fills every record's `sampled`. */
void offcpu_spread(struct rec_data *d);

#endif
