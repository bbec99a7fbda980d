/* SPDX-License-Identifier: GPL-2.0 */
/* Direct-I/O classes and latency per inode, from the iomap tracepoints
 * (fs/iomap/direct-io.c, fs/iomap/iter.c).
 *
 * iomap_dio_rw_begin fires in __iomap_dio_rw() after the filesystem took
 * i_rwsem, so &file_inode(iocb->ki_filp)->i_rwsem is that lock's address.
 * Each DIO is tracked by its kiocb until iomap_dio_complete (which runs in
 * the completion context for AIO); the extent state the write found is added
 * in between (record_extent.bpf.h). */
#ifndef LOCKSCOPE_RECORD_DIO_BPF_H
#define LOCKSCOPE_RECORD_DIO_BPF_H

/* classes bits above enum rec_dio_class: begun inside the window (so
 * counted); the state came from the filesystem's own lookup (ext4), so
 * iomap_iter_dstmap is not needed; the write has begun allocating or
 * converting, so later lookups see its own blocks (record_extent.bpf.h). */
#define IN_WINDOW (1u << 31)
#define STATE_FROM_FS (1u << 30)
#define STATE_DONE (1u << 29)

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

static __always_inline void dio_count(struct dio_val *d, __u32 classes, __u64 bytes)
{
	int i;

	for (i = 0; i < DC_MAX; i++)
		if (classes & (1u << i))
			class_add(d, i, bytes);
}

/* The classes known at begin; the extent state is added while it runs. */
static __always_inline __u32 begin_classes(const struct dio_args *a)
{
	__u32 cls = 1u << (a->write ? DC_WRITE : DC_READ);

	if (!a->write)
		return cls;
	if (a->blksize)
		cls |= 1u << (((a->pos | a->count) & (a->blksize - 1)) ? DC_UNALIGNED : DC_ALIGNED);
	if (a->pos + a->count > a->isize)
		cls |= 1u << DC_EXTENDING;
	if (a->ki_flags & (bits.iocb_dsync | bits.iocb_sync))
		cls |= 1u << DC_DSYNC;
	if (a->aio)
		cls |= 1u << DC_AIO;
	return cls;
}

/* A DIO is counted when it completes without error, so that an attempt the
 * filesystem refuses and retries is counted once: XFS tries an unaligned
 * write under the shared IOLOCK with IOMAP_DIO_OVERWRITE_ONLY, gets -EAGAIN
 * when a block needs allocation or zeroing, and issues it again exclusive
 * (fs/xfs/xfs_file.c, xfs_file_dio_write_unaligned); both attempts fire
 * iomap_dio_rw_begin and iomap_dio_complete. */
static __always_inline void dio_begin(struct dio_args *a)
{
	struct dio_inflight in = {};
	struct task_val *t;
	struct dio_val *d;
	__u32 cls = begin_classes(a);
	__u64 now;

	now = bpf_ktime_get_ns();
	t = current_task();
	/* Tracked from attach on, counted only inside the window (so that a
	 * DIO in flight when it opens is not taken for a lost one). */
	d = enabled ? dio_stats_of(a->dev, a->ino) : NULL;
	if (d) {
		if (a->blksize)
			d->blksize = a->blksize;
		if (t && t->entry_ts) {
			lat_add(&d->pre_iomap, now - t->entry_ts);
			t->entry_ts = 0;
		}
	}
	if (!a->key || !t) {
		/* not tracked to its completion: counted now, without a state */
		if (d)
			dio_count(d, cls, a->count);
		return;
	}
	in.ts = now;
	in.classes = cls | (d ? IN_WINDOW : 0);
	in.ino = a->ino;
	in.dev = a->dev;
	in.bytes = a->count;
	in.write = a->write;
	t->dio_iocb = 0;
	if (!a->aio) {
		/* completes in this thread (__iomap_dio_rw waits for it) */
		t->dio = in;
	} else if (bpf_map_update_elem(&dio_inflight, &a->key, &in, BPF_ANY)) {
		drop(DROP_INFLIGHT_FULL);
		return;
	} else {
		aio_tracked = 1;
	}
	t->dio_iocb = a->key;
}

/* The in-flight DIO of key: in the thread's entry when synchronous. */
static __always_inline struct dio_inflight *dio_find(__u64 key, bool aio, struct task_val **tp)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct task_val *t;

	*tp = NULL;
	if (aio) /* most AIO is not ours (the loop device's, say): skip the map until one is */
		return aio_tracked ? bpf_map_lookup_elem(&dio_inflight, &key) : NULL;
	if (!traced_current())
		return NULL;
	t = bpf_map_lookup_elem(&tasks, &tid);
	if (!t || t->dio_iocb != key || !t->dio.ts)
		return NULL;
	*tp = t;
	return &t->dio;
}

static __always_inline void dio_complete(__u64 key, bool aio, int error)
{
	struct task_val *t;
	struct dio_inflight *in = dio_find(key, aio, &t);
	struct dio_val *d;
	__u64 ns;

	if (!in) {
		/* An AIO completes in whatever context the I/O ends, often an
		 * interrupt on an unrelated (maybe traced) thread: only a
		 * synchronous DIO's completion is surely the submitter's. */
		if (!aio && enabled && traced_current())
			drop(DROP_DIO_UNTRACKED);
		return;
	}
	ns = bpf_ktime_get_ns() - in->ts;
	d = (in->classes & IN_WINDOW) && error >= 0 ? dio_stats_of(in->dev, in->ino) : NULL;
	if (d) {
		lat_add(in->write ? &d->write_lat : &d->read_lat, ns);
		dio_count(d, in->classes, in->bytes);
	}
	if (t) {
		t->dio.ts = 0;
		t->dio_iocb = 0;
	} else {
		bpf_map_delete_elem(&dio_inflight, &key);
	}
}

static __always_inline void on_dio_rw_begin(struct kiocb *iocb, struct iov_iter *iter,
					    const bool btf)
{
	struct inode *inode;
	struct dio_args a = {};

	if (!traced_current())
		return;
	inode = RD2(iocb, ki_filp, f_inode);
	learn_i_rwsem(inode, btf);
	inode_ids(inode, &a.dev, &a.ino, btf);
	a.key = (__u64)iocb;
	a.pos = RD(iocb, ki_pos);
	a.ki_flags = RD(iocb, ki_flags);
	a.aio = RD(iocb, ki_complete) != NULL;
	a.count = RD(iter, count);
	a.isize = RD(inode, i_size);
	a.blksize = RD2(inode, i_sb, s_blocksize);
	/* Synchronous writes do not carry IOCB_WRITE (only AIO and io_uring
	 * set it, include/linux/fs.h); the iterator's direction always says. */
	if (bpf_core_field_exists(iter->data_source)) {
		__u8 source = 0; /* as a byte: a bool may be assumed 0 or 1 */

		bpf_core_read(&source, sizeof(source), &iter->data_source);
		a.write = source != 0;
	} else {
		a.write = a.ki_flags & bits.iocb_write;
	}
	dio_begin(&a);
}

TP_TWIN(iomap_dio_rw_begin, dio_rw_begin,
	on_dio_rw_begin(iocb, iter, btf), struct kiocb *iocb, struct iov_iter *iter,
	unsigned int dio_flags, size_t done_before)
TP_TWIN(iomap_dio_complete, dio_complete,
	dio_complete((__u64)iocb, RD(iocb, ki_complete) != NULL, error),
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

	if (!traced_current())
		return 0;
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
		dio_complete(bpf_get_current_pid_tgid(), false, ctx->error);
	return 0;
}

#endif
