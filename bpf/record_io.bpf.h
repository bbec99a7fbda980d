/* SPDX-License-Identifier: GPL-2.0 */
/* Write-syscall latency (raw_syscalls sys_enter/sys_exit), buffered writes
 * per inode, and block-device request latency (block_rq_issue/complete). */
#ifndef LOCKSCOPE_RECORD_IO_BPF_H
#define LOCKSCOPE_RECORD_IO_BPF_H

#define S_IFMT 0170000
#define S_IFREG 0100000

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

static __always_inline int syscall_index(long id)
{
	int i;

	for (i = 0; i < REC_NR_SYSCALLS; i++)
		if (syscall_nrs[i] == (__u32)id)
			return i;
	return -1;
}

/* A write to a regular file: learn its i_rwsem (taken by the filesystem's
 * write_iter before any fs tracepoint fires) and, without O_DIRECT, keep
 * the inode so the write is counted as buffered at sys_exit. The last file
 * is remembered: a thread writing one file skips all of this. */
static __always_inline void sys_write_file(struct task_val *t, long fd)
{
	struct file *file = fd_file(fd);
	struct inode *inode;
	const bool btf = false; /* file came through a probe read */

	t->sys_dev = 0;
	if (!file)
		return;
	if ((__u64)file != t->sys_file) {
		t->sys_file = (__u64)file;
		t->sys_file_dev = 0;
		inode = RD(file, f_inode);
		if (!inode || (RD(inode, i_mode) & S_IFMT) != S_IFREG)
			return;
		learn_i_rwsem(inode, btf);
		inode_ids(inode, &t->sys_file_dev, &t->sys_file_ino, btf);
		t->sys_file_buffered = !(RD(file, f_flags) & bits.o_direct);
	}
	if (t->sys_file_buffered) {
		t->sys_dev = t->sys_file_dev;
		t->sys_ino = t->sys_file_ino;
	}
}

static __always_inline void on_sys_enter(long id, long arg0)
{
	int idx = syscall_index(id);
	struct task_val *t;

	if (idx < 0 || !enabled || !traced_current())
		return;
	t = current_task();
	if (!t)
		return;
	t->sys_ts = bpf_ktime_get_ns();
	t->sys_idx = idx + 1;
	t->sys_dev = 0;
	if (idx < REC_FD_SYSCALLS)
		sys_write_file(t, arg0);
}

static __always_inline void on_sys_exit(long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), idx;
	struct task_val *t = bpf_map_lookup_elem(&tasks, &tid);
	struct lat_stat *s;
	struct dio_val *d;

	if (!t || !t->sys_idx)
		return;
	idx = t->sys_idx - 1;
	t->sys_idx = 0;
	if (!enabled)
		return;
	s = bpf_map_lookup_elem(&syscall_stats, &idx);
	if (s)
		lat_add(s, bpf_ktime_get_ns() - t->sys_ts);
	if (t->sys_dev && ret > 0) {
		d = dio_stats_of(t->sys_dev, t->sys_ino);
		if (d)
			class_add(d, DC_BUFFERED, ret);
	}
}

TP_TWIN(sys_enter, sys_enter,
	on_sys_enter(id, PT_REGS_PARM1_CORE_SYSCALL(regs)), struct pt_regs *regs, long id)
TP_TWIN(sys_exit, sys_exit, on_sys_exit(ret), struct pt_regs *regs, long ret)

SEC("tracepoint/raw_syscalls/sys_enter")
int sys_enter_tp(struct trace_event_raw_sys_enter *ctx)
{
	on_sys_enter(ctx->id, ctx->args[0]);
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_exit")
int sys_exit_tp(struct trace_event_raw_sys_exit *ctx)
{
	on_sys_exit(ctx->ret);
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
