/* SPDX-License-Identifier: GPL-2.0 */
/* Learning which lock addresses belong to which inode, from filesystem
 * tracepoints that carry an inode (or an xfs_inode) pointer. Only traced
 * threads teach: they take the locks of the files they use themselves. */
#ifndef LOCKSCOPE_RECORD_INODE_BPF_H
#define LOCKSCOPE_RECORD_INODE_BPF_H

/* The current thread's in-flight DIO write on inode ino, if any. */
static __always_inline struct dio_inflight *active_dio_write(__u64 ino)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct task_val *t = bpf_map_lookup_elem(&tasks, &tid);
	struct dio_inflight *in;

	if (!t || !t->dio_iocb)
		return NULL;
	in = t->dio.ts ? &t->dio : bpf_map_lookup_elem(&dio_inflight, &t->dio_iocb);
	if (!in || !in->write || in->ino != ino)
		return NULL;
	return in;
}

/* fs/xfs/xfs_inode.c, xfs_ilock(): fires before the lock is taken. The
 * IOLOCK is the VFS inode's i_rwsem, the MMAPLOCK is the mapping's
 * invalidate_lock, the ILOCK is xfs_inode->i_lock. */
static __always_inline void on_xfs_ilock(struct xfs_inode *ip, __u32 lock_flags, const bool btf)
{
	struct inode *inode = &ip->i_vnode;
	__u32 dev;
	__u64 ino;

	if (!traced_current())
		return;
	inode_ids(inode, &dev, &ino, btf);
	if (lock_flags & bits.xfs_iolock)
		learn((__u64)&inode->i_rwsem, dev, ino, KIND_I_RWSEM);
	if (lock_flags & bits.xfs_ilock)
		learn((__u64)&ip->i_lock, dev, ino, KIND_XFS_ILOCK);
	if (lock_flags & bits.xfs_mmaplock)
		learn((__u64)&RD(inode, i_mapping)->invalidate_lock, dev, ino, KIND_INVALIDATE_LOCK);
}

TP_TWIN(xfs_ilock, xfs_ilock,
	on_xfs_ilock(ip, lock_flags, btf), struct xfs_inode *ip, unsigned int lock_flags,
	unsigned long caller_ip)

/* fs/ext4/inode.c, ext4_map_blocks(): i_data_sem is held around
 * ext4_ext_map_blocks(); the inode is embedded in struct ext4_inode_info.
 * (Allocation is taken from ext4_allocate_blocks, record_extent.bpf.h: the
 * NEW map flag is also set for unwritten extents a write converts.) */
static __always_inline void on_ext4_map_exit(struct inode *inode, const bool btf)
{
	__u64 base = (__u64)inode - bpf_core_field_offset(struct ext4_inode_info, vfs_inode);
	__u32 dev;
	__u64 ino;

	if (!traced_current())
		return;
	inode_ids(inode, &dev, &ino, btf);
	learn(base + bpf_core_field_offset(struct ext4_inode_info, i_data_sem), dev, ino,
	      KIND_I_DATA_SEM);
}

TP_TWIN(ext4_ext_map_blocks_exit, ext4_map_exit,
	on_ext4_map_exit(inode, btf), struct inode *inode, unsigned int flags,
	struct ext4_map_blocks *map, int ret)

/* fs/xfs/xfs_iomap.c: blocks allocated for a write (xfs_iomap_write_direct
 * and the buffered-write delalloc conversion). */
static __always_inline void on_xfs_iomap_alloc(struct xfs_inode *ip, const bool btf)
{
	struct dio_inflight *in = active_dio_write(RD(ip, i_ino));

	if (in)
		in->classes |= 1u << DC_ALLOCATING;
}

TP_TWIN(xfs_iomap_alloc, xfs_iomap_alloc,
	on_xfs_iomap_alloc(ip, btf), struct xfs_inode *ip, long long offset, long count,
	int whichfork, void *irec)

/* Unwritten extents converted at I/O completion (a worker, not the writer). */
static __always_inline void on_xfs_unwritten_convert(struct xfs_inode *ip, long count,
						     const bool btf)
{
	struct dio_val *d;
	__u32 dev;
	__u64 ino;

	if (!enabled)
		return;
	inode_ids(&ip->i_vnode, &dev, &ino, btf);
	d = dio_stats_of(dev, ino);
	if (d)
		class_add(d, DC_CONVERTED, count);
}

TP_TWIN(xfs_unwritten_convert, xfs_unwritten_convert,
	on_xfs_unwritten_convert(ip, count, btf), struct xfs_inode *ip, long long offset, long count)

/* Buffered writes: fs/xfs/xfs_file.c xfs_file_buffered_write() fires with
 * the IOLOCK held; fs/ext4/inode.c ext4_(da_)write_begin() with i_rwsem held
 * (ext4_buffered_write_iter). */
static __always_inline void on_xfs_buffered_write(struct kiocb *iocb, struct iov_iter *from,
						  const bool btf)
{
	struct inode *inode = RD2(iocb, ki_filp, f_inode);
	struct dio_val *d;
	__u32 dev;
	__u64 ino;

	if (!traced_current())
		return;
	learn_i_rwsem(inode, btf);
	if (!count_buffered_in_fs || !enabled)
		return;
	inode_ids(inode, &dev, &ino, btf);
	d = dio_stats_of(dev, ino);
	if (d)
		class_add(d, DC_BUFFERED, RD(from, count));
}

static __always_inline void on_ext4_write_begin(struct inode *inode, const bool btf)
{
	if (traced_current())
		learn_i_rwsem(inode, btf);
}

TP_TWIN(xfs_file_buffered_write, xfs_buffered_write,
	on_xfs_buffered_write(iocb, from, btf), struct kiocb *iocb, struct iov_iter *from)
TP_TWIN(ext4_da_write_begin, ext4_da_write_begin,
	on_ext4_write_begin(inode, btf), struct inode *inode, long long pos, unsigned int len)
TP_TWIN(ext4_write_begin, ext4_write_begin,
	on_ext4_write_begin(inode, btf), struct inode *inode, long long pos, unsigned int len)

#endif
