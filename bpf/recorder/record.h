/* SPDX-License-Identifier: GPL-2.0 */
/* Types shared by record.bpf.c and the lockscope-record user side.
 * Only __u32/__u64 fields, so both sides agree on every layout. */
#ifndef LOCKSCOPE_RECORD_H
#define LOCKSCOPE_RECORD_H

#ifndef __VMLINUX_H__   /* the BPF side has its types from vmlinux.h */
#include <linux/types.h>
#endif

/* hist[i] counts values in [2^i, 2^(i+1)) ns; slot 0 also takes 0 and 1. */
#define REC_HIST_SLOTS 40
#define REC_COMM_WORDS 2      /* TASK_COMM_LEN (16) as two __u64 */
#define REC_MAX_STACK_DEPTH 127
#define REC_NO_STACK 0xffffffffu
/* Spinning waits' kernel stacks live in a second, shallower map (a walk
 * costs per frame, and spinning happens with interrupts often off); their
 * ids carry this bit. */
#define REC_SPIN_STACK 0x80000000u
#define REC_SPIN_STACK_DEPTH 16
/* User stacks unwound in user space from a copy of the stack
 * (kern/ustack.bpf.inc): their ids carry this bit and a sample number. */
#define REC_DWARF_STACK 0x40000000u
#define REC_DWARF_ID_MASK 0x3fffffffu
/* Kernel stacks of long waits, taken from the sleeping task at switch-in
 * (bpf_get_task_stack, kern/longwait.bpf.inc) into the task_kstacks map:
 * their ids carry this bit and a hash of the frames. */
#define REC_TASK_STACK 0x20000000u
#define REC_TASK_ID_MASK 0x1fffffffu
#define REC_TASK_STACK_DEPTH 48
/* Long waits (>= --long-wait-us) are recorded in every phase with their
 * stacks: the bit in offcpu_key.reason and lock_key.flags that marks them. */
#define REC_OFF_LONG 0x100u
#define REC_LOCK_LONG 0x80000000u
#define REC_USTACK_BYTES 16384    /* stack bytes copied above the user sp */
#define REC_USTACK_REGS 33        /* DWARF registers: x86_64 uses 17, arm64 33 */
#define REC_MAX_PIDS 64       /* --pid list */
/* The system calls followed, in this order (names in session.c):
 * write, pwrite64, pwritev, pwritev2 (an fd written), io_submit,
 * io_uring_enter, fsync, fdatasync, sync_file_range (an fd synced): timed
 * from entry to exit; then read, recvfrom, recvmsg (received) and sendto,
 * sendmsg (sent): counted at exit, on sockets and pipes only. */
#define REC_NR_SYSCALLS 14
#define REC_FD_SYSCALLS 4      /* the first four write an fd */
#define REC_SYNC_FIRST 6       /* fsync .. sync_file_range */
#define REC_SYNC_RANGE 8       /* sync_file_range: starts writeback, promises no durability */
#define REC_TIMED_SYSCALLS 9   /* the first nine are timed */
#define REC_RX_FIRST 9         /* read, recvfrom, recvmsg */
#define REC_TX_FIRST 12        /* sendto, sendmsg */
/* Syscall number -> index + 1 in the list above (0: not followed), a table
 * so that every other system call leaves at one load. */
#define REC_SYSCALL_TABLE 1024
/* shed_stacks (bss): stack walks turned off while recording */
#define REC_SHED_USTACKS 1u
#define REC_SHED_STACKS 2u

/* The per-CPU counter array "drops" holds the losses (enum rec_drop), then
 * counters that are not losses (enum rec_count): the document keeps them
 * apart, as "drops" and "counts". */
enum rec_drop {
	DROP_LOCKS_FULL,        /* lock-wait stats map full */
	DROP_INODES_FULL,       /* address -> inode map full */
	DROP_TASKS_FULL,        /* per-thread map full */
	DROP_OFFCPU_FULL,       /* off-CPU stats map full */
	DROP_DIO_FULL,          /* per-inode DIO stats map full */
	DROP_INFLIGHT_FULL,     /* in-flight DIO or block request map full */
	DROP_OTHER_FULL,        /* syscall, block, jbd2 stats maps full */
	DROP_STACK_MISSING,     /* bpf_get_stackid failed for a kernel stack */
	DROP_USTACK_MISSING,    /* ... for a user stack */
	DROP_NESTED_BEGIN,      /* begin while the slot held another lock */
	DROP_END_WITHOUT_BEGIN, /* end with no begin seen (e.g. began before start) */
	DROP_DIO_UNTRACKED,     /* iomap_dio_complete without its begin */
	DROP_USTACK_RINGBUF,    /* ring buffer full: frame-pointer stack instead */
	DROP_CALL_LOST,         /* a followed call's state lost before its exit */
	DROP_LONG_KSTACK,       /* a long wait's kernel stack could not be taken */
	DROP_LONG_USTACK,       /* a long wait's user stack could not be taken */
	DROP_LONG_TASK_STACKS_FULL, /* task_kstacks map full */
	DROP_LONG_SWITCH_IN_UNSEEN, /* a blocked thread's switch-in never reached sched_switch */
	NR_DROPS,
};

enum rec_count {
	COUNT_REPEAT_BEGIN = NR_DROPS, /* extra begins folded into one wait */
	COUNT_STACKS_WALKED,    /* off-CPU stacks walked (samples) */
	COUNT_LOCK_STACKS_REUSED, /* the same for lock waits */
	COUNT_LOCK_STACKS_WALKED,
	COUNT_OFFCPU_UNSAMPLED, /* switch-outs between two stack samples */
	COUNT_USTACKS_COPIED,   /* user stacks copied for unwinding */
	COUNT_CALLS_HANDED_OFF, /* followed calls whose thread switched out before the exit */
	COUNT_LONG_WAITS,       /* off-CPU waits >= long_wait_ns recorded with their stacks */
	COUNT_LONG_LOCK_WAITS,  /* lock waits >= long_wait_ns */
	COUNT_LONG_UNSEEN_NS,   /* the most the waits of DROP_LONG_SWITCH_IN_UNSEEN lasted */
	COUNT_LONG_KSTACKS_REUSED, /* long waits' kernel stacks taken at the same place before */
	NR_TALLIES,             /* drops and counts */
};

/* Lock kinds learned from probes that see an inode's lock address. */
enum rec_lock_kind {
	KIND_UNKNOWN = 0,
	KIND_I_RWSEM = 1,        /* VFS inode->i_rwsem (XFS IOLOCK too) */
	KIND_XFS_ILOCK = 2,      /* xfs_inode->i_lock */
	KIND_INVALIDATE_LOCK = 3, /* mapping->invalidate_lock (XFS MMAPLOCK) */
	KIND_I_DATA_SEM = 4,     /* ext4_inode_info->i_data_sem */
	NR_LOCK_KINDS,
};

/* One (lock, flags, kernel stack, user stack, process) key. */
struct lock_key {
	__u64 addr;
	__u32 flags;
	__u32 kstack;
	__u32 ustack;
	__u32 pid;
};

struct lock_val {
	__u64 count;
	__u64 total_ns;
	__u64 max_ns;
	__u64 interrupted;    /* contention_end ret < 0 */
	__u64 repeats;        /* extra begins of one wait (mutex spin, then sleep) */
	__u64 excl_count;     /* rwsem writer-locked at begin */
	__u64 excl_ns;
	__u64 reader_count;   /* rwsem reader-held (no writer) at begin */
	__u64 reader_ns;
	__u64 hist[REC_HIST_SLOTS];
};

struct inode_lock_val {
	__u64 ino;
	__u32 dev;            /* kernel dev_t: major << 20 | minor */
	__u32 kind;           /* enum rec_lock_kind */
	__u32 pid;            /* a process seen using the inode (for /proc/PID/fd) */
	__u32 pad;
};

struct inode_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

/* DIO (and buffered) write classes per inode. */
enum rec_dio_class {
	DC_WRITE,
	DC_READ,
	DC_ALIGNED,
	DC_UNALIGNED,
	DC_EXTENDING,
	DC_HOLE,
	DC_UNWRITTEN,
	DC_MAPPED,
	DC_DSYNC,
	DC_BUFFERED,
	DC_ALLOCATING,   /* ext4_allocate_blocks (data) or xfs_iomap_alloc during the write */
	DC_AIO,
	DC_CONVERTED,    /* xfs_unwritten_convert (counted per inode, any context) */
	DC_MAX,
};

struct lat_stat {
	__u64 count;
	__u64 total_ns;
	__u64 max_ns;
	__u64 hist[REC_HIST_SLOTS];
};

/* A followed system call: every call counted, the write family's timed
 * on a sample of calls (lat covers the timed ones; kern/io.bpf.inc). */
struct syscall_stat {
	struct lat_stat lat;
	__u64 calls;
};

/* Buffered writes of one file slot (kern/io.bpf.inc, buffered_add). */
struct buf_count {
	__u64 count;
	__u64 bytes;
};

struct dio_val {
	__u64 count[DC_MAX];
	__u64 bytes[DC_MAX];
	__u64 blksize;
	struct lat_stat write_lat;
	struct lat_stat read_lat;
	struct lat_stat pre_iomap;  /* fentry/kprobe extra: entry -> iomap_dio_rw_begin */
	struct lat_stat sync_lat;   /* fsync, fdatasync of the file */
	struct lat_stat range_lat;  /* sync_file_range of the file (writeback, not durability) */
	struct lat_stat dsync_lat;  /* write-family calls on the file opened O_DSYNC/O_SYNC */
	/* of each class's DIO writes (kern/dio_mode.bpf.inc): those that ran with
	 * i_rwsem held exclusive by the writer, or shared; those issued with
	 * IOMAP_DIO_FORCE_WAIT, or IOMAP_DIO_OVERWRITE_ONLY */
	__u64 exclusive[DC_MAX];
	__u64 shared[DC_MAX];
	__u64 force_wait[DC_MAX];
	__u64 overwrite_only[DC_MAX];
	/* io_uring requests on the file that io-wq serializes by its hash
	 * (kern/iowq.bpf.inc): queued (and direct I/O queued unhashed), and the time from queueing to the start
	 * of their direct I/O in a worker, of all and of those queued while
	 * another of the file's hashed requests on its ring was queued or in flight */
	__u64 iowq_queued;
	__u64 iowq_unhashed;    /* queued to io-wq without a hash */
	struct lat_stat iowq_wait;
	struct lat_stat iowq_behind;
};

/* A hashed io_uring request queued to io-wq, by its kiocb's address, until
 * its direct I/O begins in a worker (kern/iowq.bpf.inc). */
struct iowq_req {
	__u64 ts;        /* queued at; 0: outside the window */
	__u64 ino;
	__u64 ring;      /* the request's ring (struct io_ring_ctx) */
	__u32 dev;
	__u16 behind;    /* another of the file's hashed requests on its ring was queued
			  * or in flight */
	__u16 started;   /* its direct I/O began */
};

/* A file on one ring: io-wq serializes by a hash map of the ring's (io_uring/tctx.c
 * io_init_wq_offload(): ctx->hash_map), so rings do not wait for each other. */
struct iowq_key {
	__u64 ino;
	__u64 ring;
	__u32 dev;
	__u32 pad;
};

/* Why a thread was off CPU, as far as the kernel side can tell. */
enum rec_off_reason {
	OFF_OTHER = 0,   /* user space splits this into io / journal / other */
	OFF_LOCK = 1,    /* a sleeping-lock contention slot was active */
	OFF_RUNQUEUE = 2, /* preempted while runnable */
};

/* Stacks are walked at one switch-out per stack_refresh_ns of a thread in
 * a system call and reason (a sample); the others are keyed with
 * REC_NO_STACK and user space spreads their time over the samples of the
 * same thread, reason, lock and system call (docs/recorder-json.md). */
struct offcpu_key {
	__u64 lock_addr;
	__u32 tid;
	__u32 pid;
	__u32 kstack;
	__u32 ustack;
	__u32 reason;
	__u32 syscall;        /* the system call blocked in, REC_NO_SYSCALL if none */
};

#define REC_NO_SYSCALL 0xffffffffu
/* In a long wait's key while its system call is to be read at switch-in. */
#define REC_SYSCALL_LATER 0xfffffffeu
/* Set in offcpu_key.syscall: blocked in a write-family call on a file
 * opened O_DSYNC/O_SYNC (or on a synchronous inode), whose wait is that
 * write's durability. */
#define REC_SYSCALL_DSYNC 0x10000u
/* One copied user stack, sent through the ring buffer "ustack_samples".
 * regs are in the DWARF register order of the architecture; data holds
 * size bytes of the stack from regs' stack pointer up. */
struct ustack_sample {
	__u32 id;             /* REC_DWARF_STACK | sample number */
	__u32 pid;
	__u32 tid;
	__u32 size;
	__u64 regs[REC_USTACK_REGS];
	__u8 data[REC_USTACK_BYTES];
};

struct offcpu_val {
	__u64 count;
	__u64 total_ns;
};

struct dio_inflight {
	__u64 ts;
	__u64 ino;
	__u64 bytes;
	__u32 dev;
	__u32 classes;         /* bit per enum rec_dio_class */
	__u32 write;
	__u32 blksize;         /* the filesystem's block size, 0 when unknown */
};

#define REC_MEMO_SLOTS 4

/* Stacks last taken at a few places (fingerprints), per thread. */
struct stack_memo {
	__u64 fp[REC_MEMO_SLOTS];
	__u64 ts[REC_MEMO_SLOTS];
	__u32 kstack[REC_MEMO_SLOTS];
	__u32 ustack[REC_MEMO_SLOTS];
};

/* An off-CPU record being summed in a thread's entry (sched.bpf.inc). */
struct offcpu_pending {
	struct offcpu_key k;
	__u64 count;
	__u64 ns;
};

/* Off-CPU records a thread sums in its entry: one per place it blocks at
 * (reason, system call, lock, stacks), so that a thread moving between a
 * few places reaches the offcpu map only when a slot is reused. */
#define REC_PENDING_SLOTS 8

/* A followed system call in progress (kern/io.bpf.inc). It is kept in
 * the CPU's slot while its thread runs there, and moved into the thread's
 * entry (task_val.call) when the thread switches out before its exit
 * (kern/sched.bpf.inc, hand_off_call). What the exit needs of the file is
 * copied in: the CPU's file memo may name another file by then. */
struct sys_call {
	__u64 ts;              /* entry time; 0: not timed */
	__u64 phase;           /* observe_start_ns at entry (begun_in_view of an untimed call) */
	__u64 ino;
	__u64 born;            /* the thread's start_time, once in its entry: a reused id is another thread */
	__u32 tid;             /* the thread in the call */
	__u32 idx;             /* index in the followed list + 1 (record.h); 0 = none */
	__u32 dev;             /* regular file written without O_DIRECT, or synced */
	__u32 buf;             /* the file's buf_counts slot; REC_BUF_NONE: not yet known */
	__u8 net;              /* the fd written is a socket or pipe */
	__u8 dsync;            /* the fd written is O_DSYNC/O_SYNC: a durability write */
	__u8 buffered;         /* written without O_DIRECT */
	__u8 pad;
	__u32 pad2;
};

/* The last file a followed call named on a CPU (any thread's), so that the
 * next call on the same file skips the inode reads. A closed file's struct
 * may come back for another open, so the inode and the open flags are
 * compared too. */
struct file_memo {
	__u64 file;
	__u64 inode;
	__u64 ino;
	__u32 flags;           /* f_flags */
	__u32 dev;
	__u32 buf;             /* its buf_counts slot; REC_BUF_NONE until its first buffered write */
	__u8 buffered;
	__u8 net;
	__u8 dsync;
	__u8 pad;
};

/* Per CPU (maps.bpf.inc, cpu_calls): the call of the thread running there,
 * the file memo and the generator that samples calls to time. */
struct cpu_calls {
	struct sys_call call;
	struct file_memo file;
	__u32 rnd;             /* kern/io.bpf.inc, sampled() */
	__u32 rnd_pad;
};

/* Per traced thread: time accounting plus the slots the probes need. The
 * fields sched_switch touches come first, together (fewer cache lines on
 * every switch). */
struct task_val {
	__u64 comm[REC_COMM_WORDS];
	__u32 pid;
	__u32 flags;           /* TF_* */
	__u64 oncpu_ns;
	__u64 offcpu_ns;
	__u64 runq_ns;
	__u64 in_ts;           /* switched in */
	__u64 out_ts;          /* switched out (0 while on CPU) */
	__u64 wake_ts;
	__u64 runq_delay;      /* sched_info run-queue wait at the last switch-in */
	/* sleeping-lock contention slot */
	__u64 lock;
	__u64 lock_ts;
	__u32 lock_flags;
	__u32 lock_kstack;
	__u32 lock_ustack;
	__u32 lock_state;      /* LS_* */
	__u32 lock_nested;
	__u32 lock_repeats;
	/* last stack sample per (system call, reason), and of any */
	__u64 sample_ts[REC_MEMO_SLOTS];
	__u32 sample_key[REC_MEMO_SLOTS];
	__u64 walk_ts;
	/* the off-CPU records being summed: the last switch-out's is pend[pend_cur];
	 * a slot is flushed to the offcpu map when another key takes it, the
	 * least used one (user space adds what is left at the end) */
	__u32 pend_cur;
	__u32 pend_pad;
	__u32 pend_tag[REC_PENDING_SLOTS];  /* a hash of each slot's key, compared first */
	__u32 pend_uses[REC_PENDING_SLOTS]; /* switch-outs into each slot, halved at each eviction */
	struct offcpu_pending pend[REC_PENDING_SLOTS];
	/* socket and pipe traffic */
	__u64 rx_calls;
	__u64 rx_bytes;
	__u64 tx_calls;
	__u64 tx_bytes;
	__u64 tx_writes;       /* of tx_calls, those made with a followed write call */
	/* the followed system call it switched out in (kern/sched.bpf.inc) */
	struct sys_call call;
	/* current DIO (for iomap_iter_dstmap and map_blocks); a synchronous
	 * one is kept here, an AIO in the dio_inflight map */
	__u64 dio_iocb;
	struct dio_inflight dio;
	__u64 entry_ts;        /* fentry/kprobe extra */
	/* stacks of the last lock wait at the same place */
	struct stack_memo lock_memo;
	/* long waits (kern/longwait.bpf.inc): the last switch-out, in any
	 * phase, and a long wait whose user stack is still to be taken */
	__u64 lw_out;
	__u64 lw_ns;
	struct offcpu_key lw_key;
	__u32 lw_pending;
	__u32 lw_runnable;
	/* the wait that ended at the last switch-in was a long one, told by
	 * long_wait_switch to sched_switch (cleared at the next switch-out) */
	__u32 lw_taken;
	__u32 lw_pad;
};

#define TF_PREEMPTED 1u    /* switched out while runnable */

/* rwsem count at contention_begin (kernel/locking/rwsem.c) */
#define LS_EXCL 1u          /* RWSEM_WRITER_LOCKED set */
#define LS_READERS 2u       /* reader count non-zero, no writer */

struct spin_slot {
	__u64 lock;
	__u64 ts;
	__u32 flags;
	__u32 kstack;
	__u32 ustack;
	__u32 state;
	__u32 nested;
	__u32 pid;
};


/* Block devices followed (kern/block.bpf.inc): slots of a global table, found
 * from the device number by linear probing, at most REC_BLOCK_PROBES. */
#define REC_BLOCK_SLOT_BITS 7
#define REC_BLOCK_SLOTS (1u << REC_BLOCK_SLOT_BITS)
/* Files whose buffered writes are summed in buf_counts (more are counted
 * in dio_stats directly), and one write-family call in this many is timed. */
#define REC_BUF_SLOTS 256
#define REC_WRITE_TIME_EVERY 8
#define REC_BUF_NONE 0xffffffffu
#define REC_BLOCK_PROBES 8
#define REC_BLOCK_USED (1ULL << 32)

struct block_inflight {
	__u64 ts;
	__u32 dev;
	__u32 counted;  /* counted in block_busy, in the phase of ts */
};

/* Device busy time (kern/block.bpf.inc, busy_begin/busy_end), one per device
 * slot: the requests in flight whose issue was seen, and the busy time as
 * one word: each period adds -start when it opens and +end when it closes,
 * so the word is the closed periods' sum when none is open (>= 0), and that
 * sum minus the open one's start, a negative number, while one is (the start,
 * ns since boot, exceeds any busy time since the recording began). One
 * word, so a reader never sees a period half added. */
struct block_busy {
	__s64 inflight;
	__s64 acc;
};

/* jbd2 handles per (dev, type, line_no) */
struct jbd2_handle_key {
	__u32 dev;
	__u32 type;
	__u32 line_no;
	__u32 pad;
};

struct jbd2_handle_val {
	__u64 starts;
	__u64 requested_blocks;
	__u64 stats;
	__u64 interval_jiffies;
	__u64 sync;
	__u64 dirtied_blocks;
};

/* jbd2 commits per dev, from jbd2_run_stats (times in jiffies) */
struct jbd2_commit_val {
	__u64 count;
	__u64 wait;
	__u64 request_delay;
	__u64 running;
	__u64 locked;
	__u64 flushing;
	__u64 logging;
	__u64 handle_count;
	__u64 blocks;
	__u64 blocks_logged;
	__u64 max_locked;
	__u64 max_running;
};

/* Lock holders (kern/holder.bpf.inc): what the owner of a sleeping lock was
 * doing when a traced thread began to wait for it. */
#define REC_HOLDER_DEPTH 32   /* frames kept of an owner's kernel stack */

enum rec_holder_state {
	HS_UNKNOWN = 0,      /* no owner to name: released, not yet stored, or no owner field */
	HS_ON_CPU = 1,       /* running on a CPU (no stack: it cannot be walked from here) */
	HS_RUNQUEUE = 2,     /* runnable, waiting for a CPU */
	HS_BLOCKED = 3,      /* asleep */
	HS_READER_OWNED = 4, /* rwsem held by readers: its owner field is only a hint */
};

#define HF_IOWAIT 1u        /* the owner was in io_schedule (task->in_iowait) */
#define HF_MUTEX 2u         /* the lock is a mutex (else an rwsem) */

/* Holder counters (per-CPU array holder_counts). */
enum rec_holder_count {
	HC_WAITS,            /* waits of traced threads entered in the table of contended locks */
	HC_TABLE_FULL,       /* waits not entered: every table entry busy with another lock */
	HC_SAMPLED,          /* snapshots taken (one per contended lock and timer period) */
	HC_READER_OWNED,     /* rwsem reader-owned: no owner named */
	HC_NO_OWNER,         /* owner field empty or not yet set */
	HC_NO_LAYOUT,        /* the lock type has no owner field here (PREEMPT_RT) */
	HC_OWNER_GONE,       /* the owner's thread id no longer names it */
	HC_STACK_FAILED,     /* bpf_get_task_stack returned nothing */
	HC_NO_STACK_SUPPORT, /* no trusted task pointer (raw_tp, or no bpf_task_from_pid) */
	HC_MAP_FULL,         /* a holder map was full */
	HC_STACKS_SHED,      /* owner stacks not taken: stacks shed by --max-overhead */
	HC_WAKE_UNSAMPLED,   /* waiters' wake-ups whose waker stack was not walked (one per CPU per period) */
	HC_STACK_REUSED,     /* an owner stack not walked: the one walked at the same place within stack_refresh_ns */
	HC_MAX,
};

struct holder_key {
	__u64 lock;
	__u32 state;         /* enum rec_holder_state */
	__u32 kstack;        /* hash in holder_stacks, REC_NO_STACK when none */
	__u32 owner_tid;
	__u32 owner_pid;
	__u32 flags;         /* HF_* */
	__u32 pad;
};

struct holder_val {
	__u64 count;         /* snapshots */
	__u64 wait_ns;       /* waiters x time since the lock's last snapshot: the wait they stand for */
};

/* The locks traced threads wait on now (a global array of the BPF side). */
#define REC_HOLDER_LOCKS 16
struct holder_lock {
	__u64 lock;
	__u64 last_ts;       /* last snapshot: one per period, whichever CPU takes it */
	__u64 waiters;       /* signed: a wait that ended may be subtracted first */
	__u32 flags;
	__u32 pad;
};

struct holder_frames {
	__u64 ip[REC_HOLDER_DEPTH];
};

/* Where a classic tracepoint program reads a field of its record when the
 * kernel's BTF has no type for that record: ext4's are in the module's BTF,
 * which kernels before 5.11 do not have. Offset and size from the event's
 * tracefs format (setup/tpfmt.c); the record starts with the common fields,
 * as the program's context does. */
struct rec_tpfield {
	__u16 off;
	__u16 size;
};

struct rec_tpoff {
	struct rec_tpfield es_lookup_ino, es_lookup_found, es_lookup_status;
	struct rec_tpfield map_exit_ino, map_exit_flags, map_exit_ret, map_exit_mflags;
	struct rec_tpfield alloc_ino, alloc_flags;
};

/* Bits the kernel side needs, decoded at run time from tracefs formats
 * (defaults when a format file is unreadable). */
struct rec_bits {
	__u32 lcb_spin;
	__u32 lcb_read;
	__u32 lcb_write;
	__u32 lcb_rt;
	__u32 lcb_percpu;
	__u32 lcb_mutex;
	__u32 iocb_write;
	__u32 iocb_dsync;
	__u32 iocb_sync;
	__u32 iomap_hole;
	__u32 iomap_unwritten;
	__u32 iomap_mapped;
	__u32 iomap_f_new;
	__u32 iomap_dio_force_wait;     /* iomap_dio_rw_begin dio_flags DIO_FORCE_WAIT */
	__u32 iomap_dio_overwrite_only; /* DIO_OVERWRITE_ONLY */
	__u32 ext4_map_mapped;     /* ext4_ext_map_blocks_exit mflags M */
	__u32 ext4_map_unwritten;  /* ext4_ext_map_blocks_exit mflags U */
	__u32 ext4_gb_create;      /* EXT4_GET_BLOCKS_CREATE in map_blocks flags */
	__u32 ext4_es_written;     /* extent-status bits W, U, H */
	__u32 ext4_es_unwritten;
	__u32 ext4_es_hole;
	__u32 ext4_mb_hint_data;   /* ext4_allocate_blocks: a data (not metadata) block */
	__u32 xfs_iolock;      /* IOLOCK_EXCL | IOLOCK_SHARED */
	__u32 xfs_ilock;
	__u32 xfs_mmaplock;
	__u32 o_direct;
	__u32 o_dsync;           /* O_SYNC is __O_SYNC | O_DSYNC: one bit for both */
	__u32 queue_flag_stats;  /* bit number of QUEUE_FLAG_STATS, 0xff unknown */
	__u32 rqf_stats;         /* RQF_STATS mask, 0 unknown */
};

#endif
