"""Why an inode lock was taken exclusive: DIO write classes matched against each
filesystem's locking rules. Every rule cites the kernel code it rests on; the rules,
their sources and the commits behind them are in docs/kernel-locking.md.

ext4 (fs/ext4/file.c, ext4_dio_write_checks): a DIO write keeps i_rwsem shared
only for an overwrite of allocated blocks that does not extend i_size, on an
IS_NOSEC inode; unaligned writes also need written (not unwritten) blocks.
Anything else takes it exclusive, and unaligned+unwritten also waits for all
in-flight DIO (inode_dio_wait).

XFS (fs/xfs/xfs_file.c): aligned DIO writes run under a shared IOLOCK, even
when they allocate (allocation is serialized by the ILOCK inside
xfs_iomap_write_direct); xfs_file_write_checks takes it exclusive to zero the
gap past EOF or to strip privileges of a !IS_NOSEC inode;
xfs_file_dio_write_unaligned goes exclusive when a block needs zeroing or
allocation (a hole or an unwritten extent); buffered writes take it exclusive
(xfs_file_buffered_write).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

from ..schema import Cause, ClassKey, WriteClasses


class FileFacts(TypedDict, total=False):
    """What the rules know of a file besides its writes (runs[].files[] and the points)."""

    setuid: bool
    setgid: bool
    security_xattrs: list[str]
    journal_share: float    # the largest share of thread time in the journal, any point

# Below this fraction of a file's writes, a class does not explain contention.
MIN_FRACTION = 0.05


@dataclass(frozen=True)
class Rule:
    reason: str
    fstypes: tuple[str, ...]
    rule: str
    kernel_source: dict[str, str]
    # (classes, facts) -> (fraction of writes that hit the rule, evidence text)
    test: Callable[[WriteClasses, FileFacts], tuple[float, str]]
    remedy: dict[str, str]


def _frac(classes: WriteClasses, key: ClassKey) -> float:
    total = classes.get("writes", 0)
    return classes.get(key, 0) / total if total else 0.0


def _extending(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    f = _frac(c, "extending")
    return f, f"{f:.0%} of {c.get('writes', 0)} DIO writes extended i_size (pos + count > isize)"


def _holes(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    f = _frac(c, "hole")
    return f, f"{f:.0%} of {c.get('writes', 0)} DIO writes mapped a hole (not an overwrite)"


def _unaligned_unwritten(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    un, uw = _frac(c, "unaligned"), _frac(c, "unwritten")
    f = min(un, uw)
    return f, (f"{un:.0%} of DIO writes were unaligned to the {c.get('block_size') or 'fs'}-byte "
               f"block and {uw:.0%} landed on unwritten extents")


def _unaligned_needs_block(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    un, fresh = _frac(c, "unaligned"), _frac(c, "hole") + _frac(c, "unwritten")
    f = min(un, fresh)
    return f, (f"{un:.0%} of {c.get('writes', 0)} DIO writes were unaligned to the fs block "
               f"and {fresh:.0%} found a hole or unwritten extent")


def _buffered(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    total = c.get("writes", 0) + c.get("buffered_writes", 0)
    f = c.get("buffered_writes", 0) / total if total else 0.0
    return f, f"{c.get('buffered_writes', 0)} buffered writes ({f:.0%} of writes to the file)"


def _not_nosec(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    why = []
    if facts.get("setuid") or facts.get("setgid"):
        why.append("setuid/setgid bits")
    if facts.get("security_xattrs"):
        why.append("security xattrs " + ", ".join(facts["security_xattrs"]))
    return (1.0 if why else 0.0), "the file has " + " and ".join(why) if why else ""


def _dsync(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    f = _frac(c, "dsync")
    jshare = facts.get("journal_share", 0.0)
    hit = f if (f >= MIN_FRACTION and jshare >= 0.02) else 0.0
    return hit, (f"{f:.0%} of DIO writes were O_DSYNC/O_SYNC and {jshare:.0%} of thread time "
                 "went to the journal")


RULES = [
    Rule("extending", ("ext4", "xfs"), "a write past i_size must update the size under the "
         "exclusive lock",
         {"ext4": "fs/ext4/file.c: ext4_dio_write_checks() -> ext4_extending_io()",
          "xfs": "fs/xfs/xfs_file.c: xfs_file_write_checks() -> xfs_file_write_zero_eof()"},
         _extending,
         {"ext4": "size the file before the timed writes (write or fallocate it to its final "
                  "size) so that writes do not extend i_size",
          "xfs": "size the file before writing so that no write starts past EOF"}),
    Rule("holes", ("ext4",), "a DIO write into holes is not a pure overwrite, so ext4 takes "
         "i_rwsem exclusive to allocate",
         {"ext4": "fs/ext4/file.c: ext4_dio_write_checks() -> ext4_overwrite_io()"},
         _holes,
         {"ext4": "preallocate the file with written blocks (write it once, e.g. "
                  "lockscope-load --layout=written) so DIO writes are overwrites under a "
                  "shared i_rwsem"}),
    Rule("unaligned_unwritten", ("ext4",), "an unaligned DIO write onto unwritten extents is "
         "exclusive and waits for all in-flight DIO",
         {"ext4": "fs/ext4/file.c: ext4_dio_write_checks() -> ext4_unaligned_io(), "
                  "inode_dio_wait()"},
         _unaligned_unwritten,
         {"ext4": "align the writes to the fs block size (the extents are already "
                  "allocated: aligned writes onto unwritten extents keep i_rwsem shared)"}),
    Rule("unaligned", ("xfs",), "an unaligned DIO write that needs zeroing or allocation "
         "retries with the IOLOCK exclusive",
         {"xfs": "fs/xfs/xfs_file.c: xfs_file_dio_write_unaligned()"},
         _unaligned_needs_block,
         {"xfs": "align the writes to the fs block size"}),
    Rule("buffered", ("ext4", "xfs"), "buffered writes take the inode lock exclusive",
         {"ext4": "fs/ext4/file.c: ext4_buffered_write_iter() -> inode_lock()",
          "xfs": "fs/xfs/xfs_file.c: xfs_file_buffered_write() -> xfs_ilock(XFS_IOLOCK_EXCL)"},
         _buffered,
         {"ext4": "use O_DIRECT overwrites, or a file per thread",
          "xfs": "use O_DIRECT, or a file per thread"}),
    Rule("not_nosec", ("ext4", "xfs"), "an inode that is not IS_NOSEC must drop privileges "
         "on write, which needs the exclusive lock",
         {"ext4": "fs/ext4/file.c: ext4_dio_write_checks() (IS_NOSEC test)",
          "xfs": "fs/xfs/xfs_file.c: xfs_file_write_checks() (IS_NOSEC test)"},
         _not_nosec,
         {"ext4": "remove setuid/setgid bits and security.* xattrs from the data file",
          "xfs": "remove setuid/setgid bits and security.* xattrs from the data file"}),
    Rule("dsync_commit", ("ext4", "xfs"), "O_DSYNC writes wait for journal commits while "
         "others queue on the inode lock",
         {"ext4": "fs/ext4/file.c: ext4_dio_write_iter() -> generic_write_sync(); "
                  "fs/jbd2/transaction.c: start_this_handle()",
          "xfs": "fs/xfs/xfs_file.c: xfs_file_dio_write() -> generic_write_sync()"},
         _dsync,
         {"ext4": "batch durability (fdatasync every N writes) instead of O_DSYNC on every "
                  "write, or put the journal on a faster device",
          "xfs": "batch durability (fdatasync every N writes) instead of O_DSYNC on every write"}),
]

GENERAL_REMEDIES = {
    "ext4": ["use a file per thread, so threads do not share one i_rwsem",
             "XFS issues aligned DIO writes, allocating or not, under a shared IOLOCK"],
    "xfs": ["use a file per thread, so threads do not share one inode lock"],
}


def match_causes(fstype: str, classes: WriteClasses, facts: FileFacts,
                 min_fraction: float = MIN_FRACTION) -> list[Cause]:
    """The rules that fire for one file's write classes, strongest first.

    ``min_fraction``: the share of writes a class needs to count as a cause."""
    causes: list[Cause] = []
    for rule in RULES:
        if fstype not in rule.fstypes:
            continue
        fraction, evidence = rule.test(classes, facts)
        if fraction >= min_fraction:
            causes.append({
                "reason": rule.reason, "rule": rule.rule,
                "kernel_source": rule.kernel_source[fstype],
                "evidence": evidence, "fraction": round(fraction, 4),
                "remedy": rule.remedy[fstype],
            })
    causes.sort(key=lambda c: -c["fraction"])
    return causes
