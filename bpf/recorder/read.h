/* SPDX-License-Identifier: GPL-2.0 */
/* Reading the kernel maps once the window is closed. */
#ifndef LOCKSCOPE_RECORD_READ_H
#define LOCKSCOPE_RECORD_READ_H

#include <stddef.h>
#include "record.h"
#include "holder.h"

struct record_bpf;

struct rec_lock { struct lock_key k; struct lock_val v; };
struct rec_inode { __u64 addr; struct inode_lock_val v; };
struct rec_task { __u32 tid; struct task_val v; };
/* v: the time estimated at this stack (see spread_unsampled in
 * read.c); sampled: the part measured at switch-outs whose stacks
 * were walked. */
struct rec_offcpu { struct offcpu_key k; struct offcpu_val v; struct offcpu_val sampled; };
struct rec_dio { struct inode_key k; struct dio_val v; };
struct rec_block { __u32 dev; struct lat_stat v; };
struct rec_handle { struct jbd2_handle_key k; struct jbd2_handle_val v; };
struct rec_commit { __u32 dev; struct jbd2_commit_val v; };

#define REC_ARRAY(type, name) type *name; size_t nr_##name

struct rec_data {
	REC_ARRAY(struct rec_lock, locks);
	REC_ARRAY(struct rec_inode, inodes);
	REC_ARRAY(struct rec_task, tasks);
	REC_ARRAY(struct rec_offcpu, offcpu);
	REC_ARRAY(struct rec_dio, dio);
	REC_ARRAY(struct rec_block, block);
	REC_ARRAY(struct rec_handle, handles);
	REC_ARRAY(struct rec_commit, commits);
	struct syscall_stat syscalls[REC_NR_SYSCALLS];
	__u64 tallies[NR_TALLIES];  /* by enum rec_drop, then enum rec_count */
	struct rec_holders holders;
};

/* Every map into memory. 0 or a negative errno. */
int read_maps(struct record_bpf *skel, struct rec_data *d);

/* Just the address -> inode map (read while recording, to find paths). */
int read_inodes(struct record_bpf *skel, struct rec_inode **out, size_t *nr);

/* A stack's frames (leaf first) into ips; returns the frame count, 0 when
 * the id is REC_NO_STACK or the stack is gone. */
int read_stack(struct record_bpf *skel, __u32 id, __u64 *ips, int max);

void read_free(struct rec_data *d);

/* out = cur - prev: entries whose counts changed, as deltas (maxima such as
 * max_ns and blksize keep cur's value); every thread, with its on/off-CPU
 * and run-queue times as deltas; inodes copied whole (they name locks).
 * Sorts prev's arrays. 0 or a negative errno; free out with read_free. */
int read_delta(const struct rec_data *cur, struct rec_data *prev, struct rec_data *out);

/* A deep copy (free with read_free). */
int read_copy(const struct rec_data *src, struct rec_data *dst);

#endif
