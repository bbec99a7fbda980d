/* SPDX-License-Identifier: GPL-2.0 */
/* Maps and globals of record.bpf.c. Sizes here are placeholders: the user
 * side sets every max_entries from its options before load. */
#ifndef LOCKSCOPE_RECORD_MAPS_BPF_H
#define LOCKSCOPE_RECORD_MAPS_BPF_H

/* Set before load (rodata). */
const volatile struct rec_bits bits = {
	.lcb_spin = 1, .lcb_read = 2, .lcb_write = 4, .lcb_rt = 8,
	.lcb_percpu = 16, .lcb_mutex = 32,
	.iocb_write = 1 << 18, .iocb_dsync = 2, .iocb_sync = 4,
	.iomap_hole = 0, .iomap_unwritten = 3, .iomap_mapped = 2, .iomap_f_new = 1,
	.xfs_iolock = 3, .xfs_ilock = 12, .xfs_mmaplock = 48,
	.o_direct = 040000,
	.queue_flag_stats = 0xff, .rqf_stats = 0,
};
const volatile __u32 self_pid = 0;
const volatile bool has_pid_filter = false;
/* --pid list: a few process ids compared in a short loop, cheaper on every
 * event than a map lookup */
const volatile __u32 nr_filter_pids = 0;
const volatile __u32 filter_pid_list[REC_MAX_PIDS] = {};
const volatile bool has_comm_filter = false;
const volatile bool has_cgroup_filter = false;
const volatile char comm_filter[16] = {};
const volatile __u64 cgroup_id = 0;
const volatile __u32 cgroup_level = 0;
const volatile __u64 min_block_ns = 1000;
/* A thread's off-CPU stacks are walked at one switch-out per this time (a
 * sample), and a lock wait at the same place (user IP, lock, I/O wait and
 * journal state) within it reuses its last stacks; 0 walks them at every
 * switch and wait. */
const volatile __u64 stack_refresh_ns = 100000000;
/* Kernel text (_stext.._etext, from kallsyms): return addresses on the
 * stack are told from data by it. 0: unknown, stacks are always walked. */
const volatile __u64 text_start = 0;
const volatile __u64 text_end = 0;
const volatile bool user_stacks = true;
/* Run-queue waits from the task's sched_info instead of sched_wakeup (set
 * by record_probe.c when the kernel has it and the program sees the task
 * switching in). */
const volatile bool runq_from_sched_info = false;
/* Syscall number -> index + 1 in the followed list (record.h), 0: not
 * followed. */
const volatile __u8 syscall_slot[REC_SYSCALL_TABLE] = {};
/* Buffered writes are counted at sys_exit; without the syscalls group,
 * xfs_file_buffered_write counts them instead. */
const volatile bool count_buffered_in_fs = false;

/* Statistics maps are per-CPU: plain adds, no cache line shared between
 * CPUs on the hot paths; user space sums the CPUs. */

/* Written by user space while running (bss is mmap'ed). */
volatile __u32 enabled = 0;
volatile __u32 aio_tracked = 0;   /* set by the first AIO the probes follow */
volatile __u64 start_ns = 0;
/* Stacks shed to stay within --max-overhead: REC_SHED_USTACKS stops user
 * stack walks, REC_SHED_STACKS every stack walk. */
volatile __u32 shed_stacks = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DROP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 64 * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 4096);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, REC_SPIN_STACK_DEPTH * sizeof(__u64));
} spin_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct lock_key);
	__type(value, struct lock_val);
} lock_stats SEC(".maps");

/* Lock address -> the inode it belongs to. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct inode_lock_val);
} inode_locks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct task_val);
} tasks SEC(".maps");

/* Spinning waits nest inside sleeping-lock slow paths, so they get their
 * own per-CPU slot (as perf lock contention does). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct spin_slot);
} spin_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct offcpu_key);
	__type(value, struct offcpu_val);
} offcpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct inode_key);
	__type(value, struct dio_val);
} dio_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct dio_inflight);
} dio_inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct block_inflight);
} block_inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct lat_stat);
} block_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, REC_NR_SYSCALLS);
	__type(key, __u32);
	__type(value, struct lat_stat);
} syscall_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct jbd2_handle_key);
	__type(value, struct jbd2_handle_val);
} jbd2_handles SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct jbd2_commit_val);
} jbd2_commits SEC(".maps");

/* The stack words above a tracepoint's arguments, read for a fingerprint. */
#define FP_WORDS 16
struct stack_window {
	__u64 w[FP_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_window);
} scratch SEC(".maps");

/* Per-CPU direct-mapped cache of spinning waits' kernel stacks by code
 * path: the paths that spin are few, and the same on every thread. */
#define PATH_CACHE_SLOTS 256
struct path_cache_entry {
	__u64 fp;
	__u64 ts;
	__u32 kstack;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PATH_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct path_cache_entry);
} path_cache SEC(".maps");

/* Per-CPU direct-mapped cache of recently learned lock addresses: the
 * learning probes (xfs_ilock above all) fire far more often than inodes
 * change, and a hit avoids a hash lookup. */
#define LEARN_CACHE_SLOTS 16
struct learn_cache {
	__u64 addr[LEARN_CACHE_SLOTS];
	__u64 ino[LEARN_CACHE_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct learn_cache);
} learn_cache SEC(".maps");

#endif
