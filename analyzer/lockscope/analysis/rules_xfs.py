"""XFS's DIO locking rules per kernel range (docs/kernel-locking.md has the history).

fs/xfs/xfs_file.c: aligned DIO writes run under a shared IOLOCK (i_rwsem), allocating
or not, appending or not: allocation is serialized by the ILOCK inside
xfs_iomap_write_direct(). Up to 5.11 every unaligned write took the IOLOCK exclusive;
from 5.12 (ed1128c2d0c8) it first tries shared with IOMAP_DIO_OVERWRITE_ONLY and goes
exclusive only when a block needs allocation or zeroing, or the write reaches EOF. The
same 5.12 series renamed the functions (ee1b218b0956: xfs_file_*_aio_* -> xfs_file_*).
"""

from __future__ import annotations

from . import write_shares as ws
from .rule_types import Holds, Rule

UNALIGNED = "ed1128c2d0c8 (xfs: reduce exclusive locking on unaligned dio)"
RENAMED = "ee1b218b0956 (xfs: cleanup the read/write helper naming)"
FILE = "fs/xfs/xfs_file.c: "
V512 = (5, 12)

EXTENDING = Rule("xfs", "extending", "unaligned writes that reach EOF", (
    Holds(None, V512, "", FILE + "xfs_file_dio_aio_write() (aligned: XFS_IOLOCK_SHARED)",
          None, "an aligned extending write keeps the IOLOCK shared; unaligned ones are "
          "exclusive by the unaligned rule", None),
    Holds(V512, None, UNALIGNED,
          FILE + "xfs_file_dio_write_unaligned() (ki_pos + count >= isize: "
                 "XFS_IOLOCK_EXCL, IOMAP_DIO_FORCE_WAIT)",
          "extending", "an unaligned DIO write that ends at or past EOF takes the IOLOCK "
          "exclusive at once (the DIO code zeroes partial tail blocks beyond EOF)",
          ws.unaligned_extending,
          remedy="align the writes to the fs block size, or size the file first, so that "
                 "no unaligned write reaches EOF",
          fix="align"),
))

UNALIGNED_WRITES = Rule("xfs", "unaligned", "unaligned overwrites of written blocks", (
    Holds(None, V512, "", FILE + "xfs_file_dio_aio_write() (unaligned_io: XFS_IOLOCK_EXCL, "
          "inode_dio_wait())",
          "unaligned", "every unaligned DIO write takes the IOLOCK exclusive and drains "
          "in-flight DIO", ws.unaligned,
          remedy="align the writes to the fs block size",
          fix="align",
          later="from 5.12, unaligned overwrites of written blocks run under a shared IOLOCK "
                "(ed1128c2d0c8): a kernel upgrade also removes this for them",
          relieved=ws.unaligned_overwrites),
    Holds(V512, None, UNALIGNED,
          FILE + "xfs_file_dio_write_unaligned() (IOMAP_DIO_OVERWRITE_ONLY, retried "
                 "exclusive on -EAGAIN)",
          "unaligned", "an unaligned DIO write that needs zeroing or allocation retries with "
          "the IOLOCK exclusive", ws.unaligned_needs_block,
          remedy="align the writes to the fs block size",
          fix="align"),
))

BUFFERED = Rule("xfs", None, "buffered writes", (
    Holds(None, V512, "", FILE + "xfs_file_buffered_aio_write() -> "
          "xfs_ilock(XFS_IOLOCK_EXCL)",
          "buffered", "buffered writes take the inode lock exclusive", ws.buffered,
          remedy="use O_DIRECT, or a file per thread",
          fix="direct_io"),
    Holds(V512, None, RENAMED, FILE + "xfs_file_buffered_write() -> xfs_ilock(XFS_IOLOCK_EXCL)",
          "buffered", "buffered writes take the inode lock exclusive", ws.buffered,
          remedy="use O_DIRECT, or a file per thread",
          fix="direct_io"),
))

NOT_NOSEC = Rule("xfs", "writes", "writes to a file that is not IS_NOSEC", (
    Holds(None, V512, "", FILE + "xfs_file_aio_write_checks() (IS_NOSEC test)",
          "not_nosec", "an inode that is not IS_NOSEC must drop privileges on write, which "
          "needs the exclusive lock", ws.not_nosec,
          remedy="remove setuid/setgid bits and security.* xattrs from the data file"),
    Holds(V512, None, RENAMED, FILE + "xfs_file_write_checks() (IS_NOSEC test)",
          "not_nosec", "an inode that is not IS_NOSEC must drop privileges on write, which "
          "needs the exclusive lock", ws.not_nosec,
          remedy="remove setuid/setgid bits and security.* xattrs from the data file"),
))

DSYNC = Rule("xfs", None, "O_DSYNC writes", (
    Holds(None, None, "", "fs/iomap/direct-io.c: iomap_dio_complete() -> "
          "generic_write_sync() -> xfs_file_fsync()",
          "dsync_commit", "O_DSYNC writes wait for journal commits while others queue on "
          "the inode lock", ws.dsync,
          remedy="batch durability (fdatasync every N writes) instead of O_DSYNC on every "
                 "write",
          fix="batch_fdatasync"),
))

RULES = (EXTENDING, UNALIGNED_WRITES, BUFFERED, NOT_NOSEC, DSYNC)
