/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel maps as read into memory (struct rec_data): what read.c fills, and
 * offcpu.c and the later stages use. */
#ifndef LOCKSCOPE_RECORD_READ_DATA_H
#define LOCKSCOPE_RECORD_READ_DATA_H

#include <stddef.h>
#include "record.h"
#include "read/holder_read.h"

struct rec_lock { struct lock_key k; struct lock_val v; };
struct rec_inode { __u64 addr; struct inode_lock_val v; };
struct rec_task { __u32 tid; struct task_val v; };
/* v: the time estimated at this stack (see spread_unsampled in
 * read.c); sampled: the part measured at switch-outs whose stacks
 * were walked. */
struct rec_offcpu { struct offcpu_key k; struct offcpu_val v; struct offcpu_val sampled; };
struct rec_dio { struct inode_key k; struct dio_val v; };
/* busy_ns: the device's busy time since the start, up to the read (or
 * to the window's end), cumulative like v's counts; with no BPF atomic
 * fetch it stays 0 and the writers say it was not measured. */
struct rec_block { __u32 dev; struct lat_stat v; __u64 busy_ns; };
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

#endif
