/* SPDX-License-Identifier: GPL-2.0 */
/* Reading the kernel maps once the window is closed. */
#ifndef LOCKSCOPE_RECORD_READ_H
#define LOCKSCOPE_RECORD_READ_H

#include <stddef.h>
#include "record.h"
#include "read/read_data.h"

struct record_bpf;

/* Every map into memory. at (CLOCK_MONOTONIC): when the read is taken, or
 * the window's end once it is closed; a device busy period still open
 * counts up to it. 0 or a negative errno. */
int read_maps(struct record_bpf *skel, struct rec_data *d, __u64 at);

/* Just the address -> inode map (read while recording, to find paths). */
int read_inodes(struct record_bpf *skel, struct rec_inode **out, size_t *nr);

void read_free(struct rec_data *d);

/* out = cur - prev: entries whose counts changed, as deltas (maxima such as
 * max_ns and blksize keep cur's value); every thread, with its on/off-CPU
 * and run-queue times as deltas; inodes copied whole (they name locks).
 * Sorts prev's arrays. 0 or a negative errno; free out with read_free. */
int read_delta(const struct rec_data *cur, struct rec_data *prev, struct rec_data *out);

/* A deep copy (free with read_free). */
int read_copy(const struct rec_data *src, struct rec_data *dst);

#endif
