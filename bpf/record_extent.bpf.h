/* SPDX-License-Identifier: GPL-2.0 */
/* The extent state a DIO write found before it changed anything: hole,
 * unwritten or mapped (docs/kernel-locking.md). It decides how ext4 locks
 * the write, so it must not be confused with what the write itself does:
 * both filesystems report blocks a write allocates, and ext4 also unwritten
 * extents it converts, as IOMAP_F_NEW mappings afterwards.
 *
 * ext4: the lookups without EXT4_GET_BLOCKS_CREATE that ext4_iomap_begin()
 * (fs/ext4/inode.c) makes before allocating, like ext4_overwrite_io()
 * (fs/ext4/file.c) does for the locking decision. ext4_map_blocks() answers
 * from the extent-status cache (ext4_es_lookup_extent) and only on a miss
 * from the extent tree (ext4_ext_map_blocks); either event tells the state.
 * Once a map with CREATE returns, the write has allocated or converted, and
 * later lookups see its own blocks.
 *
 * XFS: the mapping xfs_direct_write_iomap_begin() (fs/xfs/xfs_iomap.c)
 * returns, seen in iomap_iter_dstmap: blocks it allocated through
 * xfs_iomap_write_direct() carry IOMAP_F_NEW (they were a hole); a found
 * extent is UNWRITTEN or MAPPED as it is on disk. */
#ifndef LOCKSCOPE_RECORD_EXTENT_BPF_H
#define LOCKSCOPE_RECORD_EXTENT_BPF_H

static __always_inline void dio_state(struct dio_inflight *in, __u32 cls, bool from_fs)
{
	if (in->classes & STATE_DONE)
		return;
	if (!from_fs && (in->classes & STATE_FROM_FS))
		return;
	in->classes |= 1u << cls;
}

/* The traced thread's DIO write on ino that has not yet allocated. */
static __always_inline struct dio_inflight *ext4_lookup_write(__u64 ino)
{
	struct dio_inflight *in;

	if (!traced_current() || !(in = active_dio_write(ino)))
		return NULL;
	in->classes |= STATE_FROM_FS;
	return in;
}

SEC("tracepoint/ext4/ext4_es_lookup_extent_exit")
int ext4_es_lookup_tp(struct trace_event_raw_ext4_es_lookup_extent_exit *ctx)
{
	struct dio_inflight *in = ext4_lookup_write(ctx->ino);
	__u32 status = (__u8)ctx->status;

	if (!in || !ctx->found)
		return 0;
	if (status & bits.ext4_es_written)
		dio_state(in, DC_MAPPED, true);
	else if (status & bits.ext4_es_unwritten)
		dio_state(in, DC_UNWRITTEN, true);
	else if (status & bits.ext4_es_hole)
		dio_state(in, DC_HOLE, true);
	return 0;
}

SEC("tracepoint/ext4/ext4_ext_map_blocks_exit")
int ext4_map_state_tp(struct trace_event_raw_ext4__map_blocks_exit *ctx)
{
	struct dio_inflight *in = ext4_lookup_write(ctx->ino);

	if (!in)
		return 0;
	if (ctx->flags & bits.ext4_gb_create) {
		in->classes |= STATE_DONE;
		return 0;
	}
	if (ctx->ret == 0)
		dio_state(in, DC_HOLE, true);
	else if (ctx->ret > 0 && (ctx->mflags & bits.ext4_map_unwritten))
		dio_state(in, DC_UNWRITTEN, true);
	else if (ctx->ret > 0 && (ctx->mflags & bits.ext4_map_mapped))
		dio_state(in, DC_MAPPED, true);
	return 0;
}

/* fs/ext4/mballoc.c ext4_mb_new_blocks(): data blocks carry
 * EXT4_MB_HINT_DATA (fs/ext4/extents.c ext4_ext_map_blocks); extent-tree
 * blocks split off for a conversion do not, and are not the write's data. */
SEC("tracepoint/ext4/ext4_allocate_blocks")
int ext4_alloc_tp(struct trace_event_raw_ext4_allocate_blocks *ctx)
{
	struct dio_inflight *in;

	if (!(ctx->flags & bits.ext4_mb_hint_data) || !traced_current())
		return 0;
	in = active_dio_write(ctx->ino);
	if (in)
		in->classes |= 1u << DC_ALLOCATING;
	return 0;
}

static __always_inline void on_dstmap(__u64 ino, __u32 type, __u32 flags)
{
	struct dio_inflight *in;

	if (!traced_current() || !(in = active_dio_write(ino)))
		return;
	if (type == bits.iomap_hole || (flags & bits.iomap_f_new))
		dio_state(in, DC_HOLE, false);
	else if (type == bits.iomap_unwritten)
		dio_state(in, DC_UNWRITTEN, false);
	else if (type == bits.iomap_mapped)
		dio_state(in, DC_MAPPED, false);
}

TP_TWIN(iomap_iter_dstmap, dstmap,
	on_dstmap(RD(inode, i_ino), RD(iomap, type), RD(iomap, flags)),
	struct inode *inode, struct iomap *iomap)

SEC("tracepoint/iomap/iomap_iter_dstmap")
int dstmap_tp(struct trace_event_raw_iomap_class *ctx)
{
	on_dstmap(ctx->ino, ctx->type, ctx->flags);
	return 0;
}

#endif
