"""The wait classes: one entry each, and every table keyed by class derives from here.

A class is what a thread's time (or, for a request-time class, a request's time) was
spent waiting on. Its entry gives the words the report and the metrics use, its colour in
the plots, whether it is lost time (waiting for work is not), the verdict it gives when
it holds the lost time, the remedies that verdict offers, and whether it is thread time
classed per off-CPU record (analysis/waitclass.py) or request time measured on its own
(io-wq's hashed queue, analysis/iowq.py: present only where the recorder measured it,
never a zero). Adding a class: an entry here, its classifier rule, its test, its doc
lines (results-schema.md's classes, fleet.md's labels).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..schema import VerdictKind

ONCPU = "oncpu"
ONCPU_WORDS = "on CPU"
ONCPU_COLOUR = "#4daf4a"


@dataclass(frozen=True)
class WaitClass:
    key: str
    words: str
    colour: str
    verdict: VerdictKind | None = None   # None: not lost time (waiting for work)
    remedies: tuple[str, ...] = ()
    per_record: bool = True               # False: request time, where measured

    @property
    def loss(self) -> bool:
        return self.verdict is not None


# in report order
WAIT_CLASSES: tuple[WaitClass, ...] = (
    WaitClass("idle", "idle / waiting for work", "#e0e0e0"),
    WaitClass("user_lock", "user-space lock", "#fdae61", VerdictKind.USER_LOCK_CONTENTION,
              ("read the user function in the off-CPU flame graph: it names the server's "
               "own mutex",)),
    WaitClass("durability", "fsync / durability", "#9e76c8", VerdictKind.DURABILITY_BOUND,
              ("group commits (MariaDB: binlog_commit_wait_count / "
               "innodb_flush_log_at_trx_commit=2 where losing the last second is "
               "acceptable; PostgreSQL: commit_delay, synchronous_commit=off for "
               "non-critical transactions)",
               "put the log on a device with a fast cache flush (power-loss protected)")),
    WaitClass("writeback", "sync_file_range / writeback", "#74add1", VerdictKind.DEVICE_BOUND,
              ("sync_file_range waits for the device to write back: a faster device, or "
               "fewer forced writebacks (PostgreSQL: checkpoint_flush_after, "
               "bgwriter_flush_after, backend_flush_after; 0 turns them off)",)),
    WaitClass("journal", "journal", "#c2a5cf", VerdictKind.JOURNAL_BOUND,
              ("put the filesystem journal on a faster device, or use a larger journal",)),
    WaitClass("block_io", "block I/O", "#4575b4", VerdictKind.DEVICE_BOUND,
              ("a faster device or more parallel I/O; check the device's queue depth",)),
    WaitClass("inode_lock", "inode lock", "#b2182b", VerdictKind.INODE_LOCK_CONTENTION,
              ("see the rule below: each names the write pattern that takes the lock "
               "exclusive",)),
    WaitClass("kernel_lock", "other kernel locks", "#f46d43", VerdictKind.OTHER_LOCK_CONTENTION,
              ("read the lock's kernel function in the off-CPU flame graph",)),
    WaitClass("memory", "page faults / reclaim", "#8c510a", VerdictKind.MEMORY_PRESSURE,
              ("more memory for the page cache, or a smaller buffer pool / shared_buffers "
               "if the host swaps",)),
    WaitClass("runqueue", "runqueue", "#b8e186", VerdictKind.CPU_BOUND,
              ("more CPUs, or fewer busy threads (connection pool, thread pool size)",)),
    WaitClass("unclassified", "unclassified", "#969696", VerdictKind.INCONCLUSIVE),
    WaitClass("io_uring_hashed", "io_uring writes queued one per file (io-wq hash)", "#1b7837",
              VerdictKind.IO_URING_SERIALIZED,
              ("see the rule below: io-wq runs the writes it was given one per file at a "
               "time",), per_record=False),
)
BY_KEY = {c.key: c for c in WAIT_CLASSES}

# the classes of the off-CPU records, and of them the lost time
RECORD_CLASSES = tuple(c.key for c in WAIT_CLASSES if c.per_record)
# request-time classes, each present where measured
REQUEST_CLASSES = tuple(c.key for c in WAIT_CLASSES if not c.per_record)
# every class that is lost time, request time included
LOSS_KEYS = tuple(c.key for c in WAIT_CLASSES if c.loss)
WORDS = {ONCPU: ONCPU_WORDS, **{c.key: c.words for c in WAIT_CLASSES}}
COLOURS = {ONCPU: ONCPU_COLOUR, **{c.key: c.colour for c in WAIT_CLASSES}}


def kind_of(key: str) -> str:
    """The metrics' ``kind`` label: oncpu, idle or loss."""
    if key == ONCPU:
        return ONCPU
    return "loss" if BY_KEY[key].loss else "idle"
