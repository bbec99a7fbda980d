/* SPDX-License-Identifier: GPL-2.0 */
/* Direct-I/O classes and latency per inode, from the iomap tracepoints
 * (fs/iomap/direct-io.c, fs/iomap/iter.c).
 *
 * iomap_dio_rw_begin fires in __iomap_dio_rw() after the filesystem took
 * i_rwsem, so &file_inode(iocb->ki_filp)->i_rwsem is that lock's address.
 * Each DIO is tracked by its kiocb until iomap_dio_complete (which runs in
 * the completion context for AIO); iomap_iter_dstmap events between the two
 * mark the mapping types the write landed on. */
#ifndef LOCKSCOPE_RECORD_DIO_BPF_H
#define LOCKSCOPE_RECORD_DIO_BPF_H

struct dio_args {
	__u64 key;        /* kiocb, or pid_tgid for the classic tracepoint */
	__u64 ino;
	__u64 pos;
	__u64 count;
	__u64 isize;
	__u64 blksize;    /* 0 when unknown */
	__u32 dev;
	__u32 ki_flags;
	bool aio;
	bool write;
};

static __always_inline void dio_begin(struct dio_args *a)
{
	struct dio_inflight in = {};
	struct task_val *t;
	struct dio_val *d;
	__u64 now;
	bool write = a->write;

	if (!traced_current())
		return;
	now = bpf_ktime_get_ns();
	t = current_task();
	/* Tracked from attach on, counted only inside the window (so that a
	 * DIO in flight when it opens is not taken for a lost one). */
	d = enabled ? dio_stats_of(a->dev, a->ino) : NULL;
	if (d) {
		if (a->blksize)
			d->blksize = a->blksize;
		class_add(d, write ? DC_WRITE : DC_READ, a->count);
		if (write) {
			if (a->blksize)
				class_add(d, ((a->pos | a->count) & (a->blksize - 1)) ?
					  DC_UNALIGNED : DC_ALIGNED, a->count);
			if (a->pos + a->count > a->isize)
				class_add(d, DC_EXTENDING, a->count);
			if (a->ki_flags & (bits.iocb_dsync | bits.iocb_sync))
				class_add(d, DC_DSYNC, a->count);
			if (a->aio)
				class_add(d, DC_AIO, a->count);
		}
		if (t && t->entry_ts) {
			lat_add(&d->pre_iomap, now - t->entry_ts);
			t->entry_ts = 0;
		}
	}
	if (!a->key)
		return;
	in.ts = now;
	in.ino = a->ino;
	in.dev = a->dev;
	in.bytes = a->count;
	in.write = write;
	if (bpf_map_update_elem(&dio_inflight, &a->key, &in, BPF_ANY)) {
		drop(DROP_INFLIGHT_FULL);
		return;
	}
	if (t)
		t->dio_iocb = a->key;
}

static __always_inline void dio_complete(__u64 key, bool aio)
{
	static const __u32 map_classes[] = { DC_HOLE, DC_UNWRITTEN, DC_MAPPED, DC_ALLOCATING };
	struct dio_inflight *in = bpf_map_lookup_elem(&dio_inflight, &key);
	struct dio_val *d;
	__u64 ns;
	int i;

	if (!in) {
		/* An AIO completes in whatever context the I/O ends, often an
		 * interrupt on an unrelated (maybe traced) thread: only a
		 * synchronous DIO's completion is surely the submitter's. */
		if (!aio && enabled && traced_current())
			drop(DROP_DIO_UNTRACKED);
		return;
	}
	ns = bpf_ktime_get_ns() - in->ts;
	d = start_ns && in->ts >= start_ns ? dio_stats_of(in->dev, in->ino) : NULL;
	if (d) {
		lat_add(in->write ? &d->write_lat : &d->read_lat, ns);
		for (i = 0; in->write && i < 4; i++)
			if (in->classes & (1u << map_classes[i]))
				class_add(d, map_classes[i], in->bytes);
	}
	bpf_map_delete_elem(&dio_inflight, &key);
}

static __always_inline void on_dio_rw_begin(struct kiocb *iocb, struct iov_iter *iter)
{
	struct inode *inode = BPF_CORE_READ(iocb, ki_filp, f_inode);
	struct dio_args a = {};

	learn_i_rwsem(inode);
	inode_ids(inode, &a.dev, &a.ino);
	a.key = (__u64)iocb;
	a.pos = BPF_CORE_READ(iocb, ki_pos);
	a.ki_flags = BPF_CORE_READ(iocb, ki_flags);
	a.aio = BPF_CORE_READ(iocb, ki_complete) != NULL;
	a.count = BPF_CORE_READ(iter, count);
	/* Synchronous writes do not carry IOCB_WRITE (only AIO and io_uring
	 * set it, include/linux/fs.h); the iterator's direction always says. */
	if (bpf_core_field_exists(iter->data_source)) {
		__u8 source = 0; /* as a byte: a bool may be assumed 0 or 1 */

		bpf_core_read(&source, sizeof(source), &iter->data_source);
		a.write = source != 0;
	} else
		a.write = a.ki_flags & bits.iocb_write;
	a.isize = BPF_CORE_READ(inode, i_size);
	a.blksize = BPF_CORE_READ(inode, i_sb, s_blocksize);
	dio_begin(&a);
}

TP_TWIN(iomap_dio_rw_begin, dio_rw_begin,
	on_dio_rw_begin(iocb, iter), struct kiocb *iocb, struct iov_iter *iter,
	unsigned int dio_flags, size_t done_before)
TP_TWIN(iomap_dio_complete, dio_complete,
	dio_complete((__u64)iocb, BPF_CORE_READ(iocb, ki_complete) != NULL),
	struct kiocb *iocb, int error, ssize_t ret)

/* The classic tracepoints carry no kiocb: synchronous DIOs are matched by
 * thread, AIO latency is lost, no lock address is learned, and a write is
 * told from a read by IOCB_WRITE or by the thread being in a write syscall
 * (needs the syscalls group). */
SEC("tracepoint/iomap/iomap_dio_rw_begin")
int dio_rw_begin_tp(struct trace_event_raw_iomap_dio_rw_begin *ctx)
{
	struct dio_args a = {
		.dev = ctx->dev, .ino = ctx->ino, .pos = ctx->pos, .count = ctx->count,
		.isize = ctx->isize, .ki_flags = ctx->ki_flags, .aio = ctx->aio,
	};

	a.key = a.aio ? 0 : bpf_get_current_pid_tgid();
	a.write = a.ki_flags & bits.iocb_write;
	if (!a.write) { /* a synchronous write: the thread is in a write syscall */
		__u32 tid = (__u32)a.key;
		struct task_val *t = bpf_map_lookup_elem(&tasks, &tid);

		a.write = t && t->sys_idx && t->sys_idx <= REC_FD_SYSCALLS;
	}
	dio_begin(&a);
	return 0;
}

SEC("tracepoint/iomap/iomap_dio_complete")
int dio_complete_tp(struct trace_event_raw_iomap_dio_complete *ctx)
{
	if (!ctx->aio)
		dio_complete(bpf_get_current_pid_tgid(), false);
	return 0;
}

/* A new block allocation reports the mapping after the fact (unwritten or
 * mapped with IOMAP_F_NEW, fs/ext4/inode.c ext4_set_iomap and
 * fs/xfs/xfs_iomap.c xfs_bmbt_to_iomap), so NEW counts as a hole. */
static __always_inline void on_dstmap(__u64 ino, __u32 type, __u32 flags)
{
	struct dio_inflight *in = active_dio_write(ino);
	__u32 cls;

	if (!in)
		return;
	if (type == bits.iomap_hole || (flags & bits.iomap_f_new))
		cls = DC_HOLE;
	else if (type == bits.iomap_unwritten)
		cls = DC_UNWRITTEN;
	else if (type == bits.iomap_mapped)
		cls = DC_MAPPED;
	else
		return;
	in->classes |= 1u << cls;
}

TP_TWIN(iomap_iter_dstmap, dstmap,
	on_dstmap(BPF_CORE_READ(inode, i_ino), BPF_CORE_READ(iomap, type),
		  BPF_CORE_READ(iomap, flags)), struct inode *inode, struct iomap *iomap)

SEC("tracepoint/iomap/iomap_iter_dstmap")
int dstmap_tp(struct trace_event_raw_iomap_class *ctx)
{
	on_dstmap(ctx->ino, ctx->type, ctx->flags);
	return 0;
}

#endif
