"""io_uring's serialization of writes to one file in io-wq, per kernel range
(docs/kernel-locking.md, *io_uring: writes serialized in io-wq*).

A request whose non-blocking issue fails (-EAGAIN) is queued to io-wq; io_prep_async_work()
hashes the work of opcodes with ``hash_reg_file`` (the writes) on a regular file by the
inode (io_wq_hash_work()), and io-wq runs one work of a hash at a time
(io_get_next_work(): the rest of the hash waits while its bit is set; io_wait_on_hash()).
6.4 stopped hashing O_DIRECT writes where the filesystem allows parallel DIO writes
(FMODE_DIO_PARALLEL_WRITE: ext4 and XFS set it, btrfs does not); 6.10 moved the flag to
the file operations (FOP_DIO_PARALLEL_WRITE). That is not an i_rwsem wait: it happens
before the filesystem is entered, so it has a wait class of its own (analysis/iowq.py).
"""

from __future__ import annotations

from .rule_types import Holds, Rule

V64, V610 = (6, 4), (6, 10)
PARALLEL = ("io_uring: avoid hashing O_DIRECT writes if the filesystem doesn't need it, "
            "with fs: add FMODE_DIO_PARALLEL_WRITE flag")
FOP = "fs: claw back a few FMODE_* bits (FMODE_DIO_PARALLEL_WRITE -> FOP_DIO_PARALLEL_WRITE)"
WQ = "; io_uring/io-wq.c: io_get_next_work(), io_wait_on_hash()"
PREP = "io_uring/io_uring.c: io_prep_async_work() "
# What ext4 and XFS refuse under IOCB_NOWAIT, so that io_uring queues it to io-wq
# (fs/ext4/file.c ext4_dio_write_checks(); fs/xfs/xfs_iomap.c
# xfs_direct_write_iomap_begin() with IOMAP_NOWAIT; fs/xfs/xfs_file.c
# xfs_file_dio_write_unaligned()).
NON_BLOCKING = ("keep the writes non-blocking, so that io_uring does not queue them to "
                "io-wq: aligned overwrites of written blocks inside i_size (lay the file out "
                "written, e.g. lockscope-load --layout=written: writes into holes, "
                "unwritten extents, past i_size or unaligned are refused without blocking "
                "and queued)")
SPREAD = "or spread the writes over several files (io-wq runs one request per file at a time)"
KIND = "O_DIRECT writes io_uring queued to io-wq"

HASHED = Rule("", None, KIND, (
    Holds(None, V64, "", PREP + "(def->hash_reg_file: io_wq_hash_work(), by the inode; "
          "fs/io_uring.c before the io_uring/ directory)" + WQ,
          "io_uring_hashed",
          "io_uring hashes every write to a regular file by its inode, O_DIRECT or not, and "
          "io-wq runs one request of a hash at a time: the writes it queued wait for each "
          "other, one file at a time",
          None,
          remedy=f"{NON_BLOCKING}; {SPREAD}",
          later="from 6.4, io_uring no longer hashes O_DIRECT writes to ext4 or XFS "
                "(FMODE_DIO_PARALLEL_WRITE): a kernel upgrade removes this"),
    Holds(V64, V610, PARALLEL,
          PREP + "(O_DIRECT and f_mode & FMODE_DIO_PARALLEL_WRITE: not hashed)" + WQ,
          "io_uring_hashed",
          "io_uring hashes an O_DIRECT write by its inode unless the filesystem allows "
          "parallel DIO writes (FMODE_DIO_PARALLEL_WRITE: ext4 and XFS; not btrfs), and "
          "every read and write of an IOPOLL ring: io-wq runs one request of a hash at a "
          "time",
          None,
          remedy=f"{NON_BLOCKING}; {SPREAD}; or put the file on ext4 or XFS"),
    Holds(V610, None, FOP,
          PREP + "(O_DIRECT and f_op->fop_flags & FOP_DIO_PARALLEL_WRITE: not hashed)" + WQ,
          "io_uring_hashed",
          "io_uring hashes an O_DIRECT write by its inode unless the filesystem allows "
          "parallel DIO writes (FOP_DIO_PARALLEL_WRITE: ext4 and XFS; not btrfs), and "
          "every read and write of an IOPOLL ring: io-wq runs one request of a hash at a "
          "time",
          None,
          remedy=f"{NON_BLOCKING}; {SPREAD}; or put the file on ext4 or XFS"),
))
# the filesystems whose O_DIRECT writes the ranges from 6.4 leave unhashed
PARALLEL_DIO_FS = ("ext4", "xfs")
