"""ext4's DIO locking rules per kernel range (docs/kernel-locking.md has the history).

fs/ext4/file.c: since 5.6 a DIO write starts with i_rwsem shared and
ext4_dio_write_checks() takes it exclusive (and rechecks) unless the write is a
non-extending overwrite on an IS_NOSEC inode. What counts as an overwrite widened
twice: 6.3 accepts unwritten (fallocate()d) extents, 6.5 lets unaligned writes onto
written blocks stay shared. Kernels older than 5.6 get the 5.6 rules.
"""

from __future__ import annotations

from . import write_shares as ws
from .rule_types import Holds, Rule

SHARED_DIO = ("aa9714d0e397 (ext4: start with shared i_rwsem in case of DIO instead of "
              "exclusive), bc6385dab125 (without dioread_nolock)")
PREALLOCATED = ("240930fb7e6b (ext4: dio take shared inode lock when overwriting "
                "preallocated blocks)")
UNALIGNED = "310ee0902b8d (ext4: allow concurrent unaligned dio overwrites)"
FILE = "fs/ext4/file.c: "
V56, V63, V65 = (5, 6), (6, 3), (6, 5)

EXTENDING = Rule("ext4", "extending", "writes that extend i_size", (
    Holds(V56, None, SHARED_DIO, FILE + "ext4_dio_write_checks() -> ext4_extending_io()",
          "extending", "a write past i_size must update the size under the exclusive lock",
          ws.extending,
          remedy="size the file before the timed writes (write or fallocate it to its final "
                 "size) so that writes do not extend i_size",
          fix="presize"),
))

HOLES = Rule("ext4", "hole", "writes into holes", (
    Holds(V56, V63, SHARED_DIO,
          FILE + "ext4_dio_write_checks() -> ext4_overwrite_io() (every block mapped and "
                 "written: EXT4_MAP_MAPPED)",
          "holes", "a DIO write into holes is not a pure overwrite, so ext4 takes i_rwsem "
          "exclusive to allocate", ws.holes,
          remedy="preallocate the file with written blocks (write it once, e.g. "
                 "lockscope-load --layout=written): before 6.3 only overwrites of written "
                 "blocks keep i_rwsem shared, fallocate()d extents do not",
          fix="written_layout"),
    Holds(V63, None, PREALLOCATED,
          FILE + "ext4_dio_write_checks() -> ext4_overwrite_io(..., &unwritten)",
          "holes", "a DIO write into holes is not a pure overwrite, so ext4 takes i_rwsem "
          "exclusive to allocate", ws.holes,
          remedy="preallocate the file (write it once or fallocate it, e.g. lockscope-load "
                 "--layout=written) so DIO writes are overwrites under a shared i_rwsem",
          fix="written_layout"),
))

PREALLOCATED_EXTENTS = Rule("ext4", "unwritten", "writes onto preallocated extents", (
    Holds(V56, V63, SHARED_DIO,
          FILE + "ext4_dio_write_checks() -> ext4_overwrite_io() (EXT4_MAP_MAPPED: an "
                 "unwritten extent is no overwrite)",
          "unwritten", "a DIO write onto unwritten (fallocate()d) extents is not an overwrite "
          "of written blocks, so ext4 takes i_rwsem exclusive", ws.unwritten,
          remedy="write the file once instead of fallocate() (lockscope-load "
                 "--layout=written): only written blocks are overwritten under a shared "
                 "i_rwsem here",
          fix="written_layout",
          later="from 6.3, preallocated extents are overwritten under a shared lock "
                "(240930fb7e6b): a kernel upgrade also removes this",
          relieved=ws.aligned_unwritten),
    Holds(V63, None, PREALLOCATED,
          FILE + "ext4_overwrite_io() counts unwritten extents as overwrites (*unwritten); "
                 "the extent split is serialized by i_data_sem",
          None, "aligned DIO writes onto unwritten extents keep i_rwsem shared", None),
))

UNALIGNED_WRITES = Rule("ext4", "unaligned", "unaligned overwrites of written blocks", (
    Holds(V56, V65, SHARED_DIO,
          FILE + "ext4_dio_write_iter() -> ext4_unaligned_io() (starts exclusive), "
                 "inode_dio_wait()",
          "unaligned", "every unaligned DIO write takes i_rwsem exclusive and waits for all "
          "in-flight DIO", ws.unaligned,
          remedy="align the writes to the fs block size",
          fix="align",
          later="from 6.5, unaligned overwrites of written blocks run under a shared lock "
                "(310ee0902b8d): a kernel upgrade also removes this for them",
          relieved=ws.unaligned_overwrites),
    Holds(V65, None, UNALIGNED,
          FILE + "ext4_dio_write_checks() -> ext4_unaligned_io(), "
                 "ext4_overwrite_io(..., &unwritten), inode_dio_wait()",
          "unaligned_unwritten", "an unaligned DIO write onto unwritten extents is exclusive "
          "and waits for all in-flight DIO", ws.unaligned_unwritten,
          remedy="align the writes to the fs block size (the extents are already "
                 "allocated: aligned writes onto unwritten extents keep i_rwsem shared)",
          fix="align"),
))

BUFFERED = Rule("ext4", None, "buffered writes", (
    Holds(None, None, "378f32bab371 (ext4: introduce direct I/O write using iomap "
          "infrastructure) split it out", FILE + "ext4_buffered_write_iter() -> inode_lock()",
          "buffered", "buffered writes take the inode lock exclusive", ws.buffered,
          remedy="use O_DIRECT overwrites, or a file per thread",
          fix="direct_io"),
))

NOT_NOSEC = Rule("ext4", "writes", "writes to a file that is not IS_NOSEC", (
    Holds(V56, None, SHARED_DIO, FILE + "ext4_dio_write_checks() (IS_NOSEC test)",
          "not_nosec", "an inode that is not IS_NOSEC must drop privileges on write, which "
          "needs the exclusive lock", ws.not_nosec,
          remedy="remove setuid/setgid bits and security.* xattrs from the data file"),
))

DSYNC = Rule("ext4", None, "O_DSYNC writes", (
    Holds(None, None, "", FILE + "ext4_dio_write_iter() -> generic_write_sync(); "
          "fs/jbd2/transaction.c: start_this_handle()",
          "dsync_commit", "O_DSYNC writes wait for journal commits while others queue on "
          "the inode lock", ws.dsync,
          remedy="batch durability (fdatasync every N writes) instead of O_DSYNC on every "
                 "write, or put the journal on a faster device",
          fix="batch_fdatasync"),
))

RULES = (EXTENDING, HOLES, PREALLOCATED_EXTENTS, UNALIGNED_WRITES, BUFFERED, NOT_NOSEC, DSYNC)
