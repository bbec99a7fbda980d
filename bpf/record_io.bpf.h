/* SPDX-License-Identifier: GPL-2.0 */
/* System calls (raw_syscalls sys_enter/sys_exit): write-family latency,
 * buffered writes per inode, fsync-family latency per inode, socket and
 * pipe traffic per thread; and block-device request latency
 * (block_rq_issue/complete). */
#ifndef LOCKSCOPE_RECORD_IO_BPF_H
#define LOCKSCOPE_RECORD_IO_BPF_H

#define S_IFMT 0170000
#define S_IFREG 0100000
#define S_IFSOCK 0140000
#define S_IFIFO 0010000

/* fd -> struct file of the current task (fs/file.c, files_lookup_fd_raw).
 * The task is a BTF pointer in every program kind: direct loads. */
static __always_inline struct file *fd_file(long fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = task->files ? task->files->fdt : NULL;
	struct file **fds, *f = NULL;

	if (!fdt || fd < 0 || fd >= fdt->max_fds)
		return NULL;
	fds = fdt->fd;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

/* The system call's index + 1 in the followed list, 0 for the others: one
 * load from a table filled before load (record_session.c). */
static __always_inline __u32 syscall_slot_of(long id)
{
	__u64 nr = id;

	if (nr >= REC_SYSCALL_TABLE)
		return 0;
	barrier_var(nr); /* keep the mask: a bound the verifier sees */
	return syscall_slot[nr & (REC_SYSCALL_TABLE - 1)];
}

/* The file behind fd, remembered per thread: a thread using one file (a
 * connection's socket, a table file) skips the inode reads. A closed
 * file's struct may come back for another file, so the inode is compared
 * too. */
static __always_inline bool sys_file(struct task_val *t, long fd)
{
	struct file *file = fd_file(fd);
	struct inode *inode;
	const bool btf = false; /* file came through a probe read */
	__u32 mode;

	if (!file)
		return false;
	inode = RD(file, f_inode);
	if ((__u64)file == t->sys_file && (__u64)inode == t->sys_file_inode)
		return true;
	t->sys_file = (__u64)file;
	t->sys_file_inode = (__u64)inode;
	t->sys_file_dev = 0;
	t->sys_file_net = 0;
	t->sys_file_buffered = 0;
	if (!inode)
		return true;
	mode = RD(inode, i_mode) & S_IFMT;
	t->sys_file_net = mode == S_IFSOCK || mode == S_IFIFO;
	if (mode != S_IFREG)
		return true;
	/* A regular file: learn its i_rwsem (taken by the filesystem's
	 * write_iter before any fs tracepoint fires). */
	learn_i_rwsem(inode, btf);
	inode_ids(inode, &t->sys_file_dev, &t->sys_file_ino, btf);
	t->sys_file_buffered = !(RD(file, f_flags) & bits.o_direct);
	return true;
}

static __always_inline bool timed_call(long id)
{
	__u32 slot = syscall_slot_of(id);

	/* untimed calls are handled at exit alone */
	return slot && slot <= REC_TIMED_SYSCALLS;
}

static __always_inline void on_sys_enter(long id, long arg0)
{
	__u32 slot = syscall_slot_of(id);
	struct task_val *t;

	if (!enabled || !traced_current())
		return;
	t = current_task();
	if (!t)
		return;
	t->sys_ts = bpf_ktime_get_ns();
	t->sys_idx = slot;
	t->sys_dev = 0;
	t->sys_net = 0;
	if (slot <= REC_FD_SYSCALLS) {
		/* without O_DIRECT, counted as buffered at exit */
		if (sys_file(t, arg0)) {
			t->sys_net = t->sys_file_net;
			if (t->sys_file_buffered) {
				t->sys_dev = t->sys_file_dev;
				t->sys_ino = t->sys_file_ino;
			}
		}
	} else if (slot > REC_SYNC_FIRST && sys_file(t, arg0) && t->sys_file_dev) {
		t->sys_dev = t->sys_file_dev;
		t->sys_ino = t->sys_file_ino;
	}
}

static __always_inline void timed_exit(struct task_val *t, long ret)
{
	__u32 idx = t->sys_idx - 1;
	struct lat_stat *s;
	struct dio_val *d;
	__u64 ns;

	t->sys_idx = 0;
	if (!enabled)
		return;
	ns = bpf_ktime_get_ns() - t->sys_ts;
	s = bpf_map_lookup_elem(&syscall_stats, &idx);
	if (s)
		lat_add(s, ns);
	if (idx < REC_FD_SYSCALLS && t->sys_net && ret >= 0) {
		t->tx_calls++;
		t->tx_bytes += ret;
	}
	if (!t->sys_dev)
		return;
	if (idx < REC_FD_SYSCALLS && ret > 0) {
		d = dio_stats_of(t->sys_dev, t->sys_ino);
		if (d)
			class_add(d, DC_BUFFERED, ret);
	} else if (idx >= REC_SYNC_FIRST) {
		d = dio_stats_of(t->sys_dev, t->sys_ino);
		if (d)
			lat_add(&d->sync_lat, ns);
	}
}

/* Reads and sends need no entry: the fd is still in the user registers at
 * exit. Only sockets and pipes count. */
static __always_inline void counted_exit(__u32 slot, long ret)
{
	struct task_struct *task;
	struct pt_regs *regs;
	struct task_val *t;

	if (ret < 0 || !enabled || !traced_current())
		return;
	task = bpf_get_current_task_btf();
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return;
	t = current_task();
	if (!t || !sys_file(t, PT_REGS_PARM1_CORE_SYSCALL(regs)) || !t->sys_file_net)
		return;
	if (slot > REC_TX_FIRST) {
		t->tx_calls++;
		t->tx_bytes += ret;
	} else {
		t->rx_calls++;
		t->rx_bytes += ret;
	}
}

static __always_inline void on_sys_exit(long id, long ret)
{
	__u32 slot = syscall_slot_of(id), tid;
	struct task_val *t;

	if (!slot)
		return;
	if (slot > REC_TIMED_SYSCALLS) {
		counted_exit(slot, ret);
		return;
	}
	tid = (__u32)bpf_get_current_pid_tgid();
	t = bpf_map_lookup_elem(&tasks, &tid);
	if (t && t->sys_idx)
		timed_exit(t, ret);
}

/* The first argument is read only for a followed call. */
TP_TWIN(sys_enter, sys_enter,
	if (timed_call(id)) on_sys_enter(id, PT_REGS_PARM1_CORE_SYSCALL(regs)), struct pt_regs *regs,
	long id)
TP_TWIN(sys_exit, sys_exit, on_sys_exit(syscall_nr_core(regs, btf), ret), struct pt_regs *regs,
	long ret)

/* Attached to raw_syscalls:sys_enter/exit, or to each followed call's own
 * syscalls:sys_enter_NAME/sys_exit_NAME (record_probe.c): both records have
 * the call number at offset 8 (a long, or an int then padding: its low 32
 * bits either way) and the arguments or the return value at offset 16. */
SEC("tracepoint/raw_syscalls/sys_enter")
int sys_enter_tp(struct trace_event_raw_sys_enter *ctx)
{
	if (timed_call((int)ctx->id))
		on_sys_enter((int)ctx->id, ctx->args[0]);
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_exit")
int sys_exit_tp(struct trace_event_raw_sys_exit *ctx)
{
	on_sys_exit((int)ctx->id, ctx->ret);
	return 0;
}

/* Block requests are not filtered by thread: they are issued and completed
 * in whatever context the block layer runs. */
/* Most queues stamp requests themselves: blk_mq_start_request() sets
 * io_start_time_ns, right after block_rq_issue, when QUEUE_FLAG_STATS is on
 * (block/blk-mq.c; wbt and other rq-qos policies turn it on). Then the
 * issue needs no map entry, and the completion reads the stamp (RQF_STATS).
 * The bit numbers come from kernel BTF at run time. */
static __always_inline void on_rq_issue(__u64 key, __u32 dev, __u64 queue_flags)
{
	struct block_inflight b = {};

	if (!enabled)
		return;
	if (bits.rqf_stats && bits.queue_flag_stats < 64 &&
	    (queue_flags & (1ULL << bits.queue_flag_stats)))
		return;
	b.ts = bpf_ktime_get_ns();
	b.dev = dev;
	if (bpf_map_update_elem(&block_inflight, &key, &b, BPF_ANY))
		drop(DROP_INFLIGHT_FULL);
}

static struct lat_stat zero_lat;

static __always_inline void block_lat(__u32 dev, __u64 ns)
{
	struct lat_stat *s = lookup_or_init(&block_stats, &dev, &zero_lat, DROP_OTHER_FULL);

	if (s)
		lat_add(s, ns);
}

static __always_inline void on_rq_complete(__u64 key, bool last, __u32 rq_flags, __u64 stamp,
					   __u32 dev)
{
	struct block_inflight *b;
	__u64 now;

	if (!last || !enabled)
		return;
	now = bpf_ktime_get_ns();
	if (bits.rqf_stats && (rq_flags & bits.rqf_stats) && stamp) {
		if (stamp >= start_ns && now > stamp)
			block_lat(dev, now - stamp);
		return;
	}
	b = bpf_map_lookup_elem(&block_inflight, &key);
	if (!b)
		return;
	block_lat(b->dev, now - b->ts);
	bpf_map_delete_elem(&block_inflight, &key);
}

/* disk_devt() of include/linux/blkdev.h, as a kernel dev_t (MKDEV). */
static __always_inline __u32 rq_dev(struct request *rq, const bool btf)
{
	struct gendisk *disk = RD2(rq, q, disk);

	if (!disk)
		return 0;
	return ((__u32)RD(disk, major) << 20) | (__u32)RD(disk, first_minor);
}

TP_TWIN(block_rq_issue, block_rq_issue,
	on_rq_issue((__u64)rq, rq_dev(rq, btf), RD2(rq, q, queue_flags)), struct request *rq)
/* blk_update_request() may complete a request in parts: the last part
 * covers all remaining bytes (__data_len). */
TP_TWIN(block_rq_complete, block_rq_complete,
	on_rq_complete((__u64)rq, nr_bytes >= RD(rq, __data_len), RD(rq, rq_flags),
		       RD(rq, io_start_time_ns), rq_dev(rq, btf)),
	struct request *rq, int error, unsigned int nr_bytes)

static __always_inline __u64 sector_key(__u32 dev, __u64 sector)
{
	return ((__u64)dev << 40) ^ sector;
}

SEC("tracepoint/block/block_rq_issue")
int block_rq_issue_tp(struct trace_event_raw_block_rq *ctx)
{
	on_rq_issue(sector_key(ctx->dev, ctx->sector), ctx->dev, 0);
	return 0;
}

SEC("tracepoint/block/block_rq_complete")
int block_rq_complete_tp(struct trace_event_raw_block_rq_completion *ctx)
{
	on_rq_complete(sector_key(ctx->dev, ctx->sector), true, 0, 0, ctx->dev);
	return 0;
}

#endif
