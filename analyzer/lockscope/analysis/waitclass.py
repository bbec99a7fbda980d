"""Off-CPU wait classes of a live server's threads: waiting for work apart from loss.

Every rule lives in the tables below. A record of the recorder's ``offcpu``
list (kernel stack leaf first, user stack, the recorder's reason: ``lock``,
``runqueue`` or ``blocked``, the blocking system call when recorded) gets exactly
one class and says how it was classed. The recorder does not class blocked time
itself: this module is the one classifier, for attach and for the sweep
(``analysis.runs.trace_breakdown`` through ``sweep_part``).

- ``scheduler``: the recorder saw the thread preempted while runnable;
- ``kernel lock``: the recorder saw it in a sleeping kernel lock wait
  (``lock:contention_begin``), the lock's kind deciding inode vs other;
- ``kernel function``: a frame of the kernel stack matched a rule;
- ``syscall``: the blocking system call decided (entry frame or recorded nr);
- ``user function``: a user frame decided a futex wait (analysis.userwait);
- ``thread``: a futex wait of a thread that did nothing else all window long
  (an idle pool thread);
- otherwise ``unclassified``, said as such.

Kernel facts the frame rules rest on:

- fsync and fdatasync go through ``vfs_fsync_range`` (fs/sync.c, do_fsync),
  O_DSYNC/O_SYNC writes through ``generic_write_sync`` → ``vfs_fsync_range``
  (include/linux/fs.h); ext4 waits for the commit in ``jbd2_log_wait_commit``
  (fs/ext4/fsync.c, ext4_sync_file), XFS in ``xfs_log_force_seq``
  (fs/xfs/xfs_file.c, xfs_file_fsync). Inside those the wait is durability,
  whatever it waits on below (journal, writeback, the device).
- ``sync_file_range`` (fs/sync.c, ksys_sync_file_range) starts writeback and may wait
  for it, but never flushes metadata or the device cache: it promises no durability
  (its man page says so), so its waits are ``writeback``, not durability.
- a write on a file opened O_DSYNC/O_SYNC syncs itself: a direct one may wait only for
  its FUA write (fs/iomap/direct-io.c, IOMAP_DIO_WRITE_THROUGH), under block I/O
  frames; the recorder marks such records ``dsync``, and their wait is durability.
- journal handles wait in ``start_this_handle``/``wait_transaction_locked``/
  ``add_transaction_credits`` (fs/jbd2/transaction.c).
- block I/O waits sleep in ``io_schedule`` (kernel/sched/core.c), page and
  buffer waits in ``folio_wait_bit_common`` (mm/filemap.c), ``__wait_on_buffer``.
- page faults enter through ``exc_page_fault``/``handle_mm_fault`` (mm/memory.c);
  direct reclaim through ``__alloc_pages_direct_reclaim``/``try_to_free_pages``
  (mm/page_alloc.c, mm/vmscan.c); dirty throttling in ``balance_dirty_pages``
  (mm/page-writeback.c).
- waiting for a client: ``do_sys_poll`` (fs/select.c), ``do_epoll_wait``
  (fs/eventpoll.c), ``do_select``, ``inet_csk_accept``, socket receive waits
  ``sk_wait_data`` (net/core/sock.c), ``unix_stream_data_wait``
  (net/unix/af_unix.c), ``pipe_read`` (fs/pipe.c), timed sleeps
  ``hrtimer_nanosleep`` (kernel/time/hrtimer.c).
- futex waits (``futex_wait``, kernel/futex/waitwake.c) are both mutex
  contention and condition-variable waits of idle threads: only the user
  stack tells them apart.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from ..schema import OffcpuRecord, TraceThread
from .lockkinds import INODE_LOCK_KINDS
from .userwait import UserWait
from .wait_classes import BY_KEY, RECORD_CLASSES

# userwait.classify: (user frames, kernel frames) -> idle or lock, when it can tell;
# a bare kind ("idle", "user_lock") is taken too
UserClassifier = Callable[[Sequence[str], Sequence[str]], "UserWait | str | None"]

# The off-CPU records' classes in report order, with the words the report uses
# (analysis/wait_classes.py holds each class's entry).
CLASSES = {k: BY_KEY[k].words for k in RECORD_CLASSES}
# Lost time is everything but waiting for work.
LOSS_CLASSES = tuple(c for c in CLASSES if BY_KEY[c].loss)

# System calls by name: what blocking in each means.
SYSCALL_CLASSES = {
    "fsync": "durability", "fdatasync": "durability", "sync_file_range": "writeback",
    "msync": "durability", "syncfs": "durability", "sync": "durability",
    "poll": "idle", "ppoll": "idle", "select": "idle", "pselect6": "idle",
    "epoll_wait": "idle", "epoll_pwait": "idle", "epoll_pwait2": "idle",
    "accept": "idle", "accept4": "idle", "nanosleep": "idle", "clock_nanosleep": "idle",
    "pause": "idle", "rt_sigtimedwait": "idle", "rt_sigsuspend": "idle", "wait4": "idle",
    "waitid": "idle", "io_getevents": "idle", "io_pgetevents": "idle",
    "recvfrom": "idle", "recvmsg": "idle", "recvmmsg": "idle",
}
FUTEX_SYSCALLS = ("futex", "futex_wait", "futex_waitv")
# x86_64 numbers (arch/x86/entry/syscalls/syscall_64.tbl) of the calls above, for a
# record that carries the number and no entry frame.
X86_64_SYSCALL_NAMES = {
    0: "read", 1: "write", 7: "poll", 17: "pread64", 18: "pwrite64", 23: "select",
    26: "msync", 35: "nanosleep", 43: "accept", 45: "recvfrom", 47: "recvmsg",
    61: "wait4", 74: "fsync", 75: "fdatasync", 128: "rt_sigtimedwait", 130: "rt_sigsuspend",
    162: "sync", 202: "futex", 208: "io_getevents", 230: "clock_nanosleep",
    232: "epoll_wait", 247: "waitid", 270: "pselect6", 271: "ppoll", 277: "sync_file_range",
    281: "epoll_pwait", 288: "accept4", 299: "recvmmsg", 306: "syncfs", 426: "io_uring_enter",
    441: "epoll_pwait2", 449: "futex_waitv",
}

# Kernel-function rules: (class, exact names, name prefixes), checked in this order
# against every frame; the first rule with a matching frame wins.
FRAME_RULES: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("memory", ("exc_page_fault", "handle_mm_fault", "do_user_addr_fault",
                "__alloc_pages_direct_reclaim", "try_to_free_pages",
                "try_to_free_mem_cgroup_pages", "mem_cgroup_handle_over_high",
                "balance_dirty_pages", "balance_dirty_pages_ratelimited_flags",
                "do_swap_page", "filemap_fault", "__do_fault"),
     ("shrink_", "compact_zone", "__alloc_pages_slowpath")),
    ("writeback", ("ksys_sync_file_range", "sync_file_range", "__x64_sys_sync_file_range",
                   "__arm64_sys_sync_file_range", "__ia32_sys_sync_file_range"), ()),
    ("durability", ("vfs_fsync_range", "do_fsync", "generic_write_sync", "ext4_sync_file",
                    "xfs_file_fsync", "jbd2_log_wait_commit",
                    "jbd2_complete_transaction", "xfs_log_force_seq", "file_write_and_wait_range",
                    "__x64_sys_fsync", "__x64_sys_fdatasync",
                    "__arm64_sys_fsync", "__arm64_sys_fdatasync", "__x64_sys_msync",
                    "__arm64_sys_msync"), ()),
    ("journal", ("start_this_handle", "wait_transaction_locked", "add_transaction_credits",
                 "jbd2_journal_start_reserved"), ("jbd2_", "__jbd2_", "xlog_", "xfs_log_")),
    ("block_io", ("__wait_on_buffer", "blk_mq_get_tag",
                  "folio_wait_bit_common", "folio_wait_writeback"),
     ("io_schedule", "bit_wait_io", "iomap_dio", "__iomap_dio", "blk_", "bio_", "submit_bio",
      "folio_wait", "__folio_lock", "wait_on_page", "filemap_fdatawait",
      "__filemap_fdatawait")),
    ("kernel_lock", ("__mutex_lock", "mutex_lock", "down_read", "down_write",
                     "rwsem_down_read_slowpath", "rwsem_down_write_slowpath",
                     "percpu_down_read", "percpu_rwsem_wait", "__down_common"),
     ("rwsem_down_", "__rt_mutex", "rt_mutex_")),
    ("idle", ("do_sys_poll", "do_epoll_wait", "ep_poll", "do_select", "core_sys_select",
              "inet_csk_accept", "sk_wait_data", "unix_stream_data_wait",
              "unix_stream_read_generic", "__skb_wait_for_more_packets", "tcp_recvmsg_locked",
              "pipe_read", "hrtimer_nanosleep", "do_nanosleep", "io_cqring_wait",
              "read_events", "do_sigtimedwait", "do_wait", "wait_woken"), ()),
]
# Futex waits for another thread's log flush are durability, whoever does the fsync:
# InnoDB's redo group commit (log_write_up_to, group_commit_lock), the binary log's
# group commit, PostgreSQL's WAL flush (XLogFlush waits on WALWriteLock) and
# synchronous replication.
USER_DURABILITY = ("log_write_up_to", "group_commit_lock::acquire", "log_flush_up_to",
                   "MYSQL_BIN_LOG::queue_for_group_commit",
                   "MYSQL_BIN_LOG::write_transaction_to_binlog_events",
                   "wait_for_commit::wait_for_prior_commit", "XLogFlush",
                   "SyncRepWaitForLSN")
# What an O_DSYNC write (``dsync`` record) waits on for its own durability; a lock,
# a page fault or reclaim on the way keep their class.
DSYNC_BELOW = ("durability", "journal", "block_io", "writeback")
ENTRY_PREFIXES = ("__x64_sys_", "__arm64_sys_", "__ia32_sys_", "__se_sys_", "__do_sys_")


@dataclass(frozen=True)
class Classed:
    """One record's class and how it was decided."""

    cls: str
    method: str      # scheduler, kernel lock, kernel function, syscall, user function, thread
    detail: str      # the frame, syscall, lock or function that decided


def frame_name(frame: str) -> str:
    """``do_fsync+0x3a`` → ``do_fsync``; user frames keep their module in brackets."""
    return frame.split("+", 1)[0] if not frame.startswith("[") else frame


def syscall_of(kstack: list[str], nr: int | str | None = None) -> str | None:
    """The blocking system call: the entry frame of the kernel stack, else the recorded
    number (x86_64 table) or name."""
    for frame in reversed(kstack or []):
        name = frame_name(frame)
        for pre in ENTRY_PREFIXES:
            if name.startswith(pre):
                return name[len(pre):]
    if isinstance(nr, str) and nr:
        return nr
    if isinstance(nr, int) and nr >= 0:
        return X86_64_SYSCALL_NAMES.get(nr)
    return None


def _frame_rule(names: list[str], skip: tuple[str, ...] = ()) -> Classed | None:
    for cls, exact, prefixes in FRAME_RULES:
        if cls in skip:
            continue
        for name in names:
            if name in exact or (prefixes and name.startswith(prefixes)):
                return Classed(cls, "kernel function", name)
    return None


def classify(record: OffcpuRecord, lock_kinds: dict[str | None, str] | None = None,
             idle_tids: Collection[int | None] = frozenset(),
             user_classifier: UserClassifier | None = None) -> Classed:
    """The class of one ``offcpu`` record.

    ``lock_kinds`` maps lock addresses to the recorder's lock kind; ``idle_tids``
    are threads that did nothing but wait all window; ``user_classifier`` is
    ``userwait.classify`` when available.
    """
    reason = record.get("reason")
    kstack = record.get("kstack") or []
    names = [frame_name(f) for f in kstack]
    syscall = syscall_of(kstack, record.get("syscall"))
    if reason == "runqueue":
        return Classed("runqueue", "scheduler", "preempted while runnable")
    if reason == "lock":
        kind = (lock_kinds or {}).get(record.get("lock_addr") or "", "unknown")
        if kind in INODE_LOCK_KINDS:
            return Classed("inode_lock", "kernel lock", kind)
        return Classed("kernel_lock", "kernel lock", kind)
    if syscall in FUTEX_SYSCALLS or "futex_wait" in names or "futex_do_wait" in names:
        return _futex(record, idle_tids, user_classifier)
    by_frame = _frame_rule(names)
    if record.get("dsync") and (by_frame is None or by_frame.cls in DSYNC_BELOW):
        below = f" → {by_frame.detail}" if by_frame else ""
        return Classed("durability", "syscall", f"{syscall or 'write'} on an O_DSYNC file{below}")
    # A rule on the waiting path (durability first) beats what the call is in general;
    # an idle call's own wait frames (ep_poll, sk_wait_data) land in idle either way.
    if by_frame and by_frame.cls != "idle":
        return Classed(by_frame.cls, by_frame.method,
                       f"{syscall} → {by_frame.detail}" if syscall else by_frame.detail)
    if syscall in SYSCALL_CLASSES:
        return Classed(SYSCALL_CLASSES[syscall], "syscall", syscall)
    if by_frame:
        return by_frame
    # Documents of older recorders classed blocked time themselves.
    if reason == "io":
        return Classed("block_io", "kernel function", "recorder: io")
    if reason == "journal":
        return Classed("journal", "kernel function", "recorder: journal")
    return Classed("unclassified", "none",
                   f"in {syscall}" if syscall else (names[2] if len(names) > 2 else "no stack"))


# The sweep's off-CPU parts (time_share): the classes it names, the rest is other_offcpu.
SWEEP_PARTS = {"block_io": "block_io", "journal": "journal"}


def sweep_part(record: OffcpuRecord) -> str:
    """The sweep's part of one blocked ``offcpu`` record: ``block_io``, ``journal`` or
    ``other_offcpu``, by ``classify``. A durability wait (fsync, O_DSYNC) or a
    writeback one (sync_file_range) counts
    as what it waits on below: the journal commit or the device (the sweep's
    workloads write; they do not wait for clients)."""
    cls = classify(record).cls
    if cls in ("durability", "writeback"):
        below = _frame_rule([frame_name(f) for f in record.get("kstack") or []],
                            skip=("durability", "writeback"))
        cls = below.cls if below else cls
    return SWEEP_PARTS.get(cls, "other_offcpu")


def _user_function(frame: str) -> str:
    """``log_write_up_to(unsigned long, bool)+0x1a`` → ``log_write_up_to``."""
    return frame.rsplit("+0x", 1)[0].split("(", 1)[0]


def _futex(record: OffcpuRecord, idle_tids: Collection[int | None],
           user_classifier: UserClassifier | None) -> Classed:
    user = record.get("ustack") or []
    known = [f for f in user if f and f != "[unknown]"]
    for frame in known:
        name = _user_function(frame)
        if name.endswith(USER_DURABILITY):
            return Classed("durability", "user function", name)
    if user_classifier is not None and known:
        try:
            verdict = user_classifier(user, record.get("kstack") or [])
        except Exception:  # a classifier bug must not lose the recording
            verdict = None
        kind, func = verdict if isinstance(verdict, tuple) else (verdict, None)
        if kind in ("idle", "user_lock"):
            return Classed(kind, "user function", func or frame_name(known[0]))
    if record.get("tid") in idle_tids:
        return Classed("idle", "thread", "futex wait of a thread idle all window")
    return Classed("unclassified", "syscall",
                   "futex wait; user frames cannot tell a lock from waiting for work")


def load_user_classifier() -> UserClassifier | None:
    """analysis.userwait.classify if present, else None (futex waits then stay
    unclassified unless their thread idled all window)."""
    try:
        from . import userwait
    except ImportError:
        return None
    return getattr(userwait, "classify", None)


def idle_threads(threads: list[TraceThread], window_ns: float,
                 busy_share: float = 0.01) -> set[int | None]:
    """Threads on a CPU (or runnable) for less than ``busy_share`` of the window."""
    out: set[int | None] = set()
    if window_ns <= 0:
        return out
    for t in threads or []:
        busy = (t.get("oncpu_ns") or 0) + (t.get("runqueue_ns") or 0)
        if busy < busy_share * window_ns:
            out.add(t.get("tid"))
    return out
