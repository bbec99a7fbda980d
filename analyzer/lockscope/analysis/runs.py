"""Read one run of results.json: workload figures and where traced thread time went."""

from __future__ import annotations

from typing import Any, TypedDict

from ..schema import Clat, DioEntry, DirectionStats, Held, LockWait, Run, Trace, TraceLock
from .frames import MACHINERY_PREFIXES
from .lockkinds import INODE_LOCK_KINDS as INODE_LOCK_KINDS  # re-exported
from .observed import observed_ns
from .stats import add_hist
from .waitclass import sweep_part

# Frames that belong to the locking code itself (and the tracing machinery the
# recorder trims, for stacks from elsewhere); the first frame past them is the
# kernel function that waited (e.g. ext4_dio_write_iter after down_write).
LOCK_INTERNAL_PREFIXES = MACHINERY_PREFIXES + (
    "rwsem_", "down_", "up_", "__down", "__up", "__mutex", "mutex_", "__rwsem", "rwbase_",
    "schedule", "__schedule", "preempt_schedule", "io_schedule", "osq_", "_raw_", "queued_",
    "native_queued", "__pv_queued", "do_raw_", "lock_", "__lock", "percpu_down", "percpu_rwsem",
    "__percpu", "rt_mutex", "__rt_mutex", "inode_lock", "xfs_ilock", "filemap_invalidate_lock",
    "finish_task_switch",
)


class Figures(TypedDict):
    """One run's throughput from the engine's JSON."""

    iops: float
    bw_bytes: float
    clat_ns: Clat | None    # of the first direction that did I/O; None when none did


class RunLock(TypedDict):
    """One lock's waits in one run, before the runs of a filesystem are merged."""

    key: str
    kind: str
    name: str | None
    path: str | None
    dev: str | None
    ino: int | None
    addr: str | None
    inode: bool
    total_ns: int
    count: int
    max_ns: int
    hist: list[int]
    mode: str
    stack: list[str]
    function: str | None
    share: float


class Breakdown(TypedDict):
    """Where one run's traced thread time went."""

    thread_time_ns: float
    time_share: dict[str, float]
    locks: list[RunLock]
    dio: list[DioEntry]


DEFAULT_OPS_UNIT = "IOPS"


def ops_unit_of(workload: Any) -> str:
    """What one operation of a point's workload is: ``workload.ops_unit`` (TPS for a
    database client), else I/Os."""
    unit = workload.get("ops_unit") if isinstance(workload, dict) else None
    return str(unit) if unit else DEFAULT_OPS_UNIT


def workload_figures(run: Run) -> Figures:
    """IOPS, bytes/s and completion-latency percentiles from the engine's fio-style JSON."""
    jobs = (run.get("workload") or {}).get("jobs") or []
    iops = bw = 0.0
    clat: Clat | None = None
    for job in jobs:
        directions: tuple[DirectionStats, ...] = (job.get("write") or {}, job.get("read") or {})
        for d in directions:
            iops += float(d.get("iops", 0) or 0)
            bw += float(d.get("bw_bytes", 0) or 0)
            if not clat and d.get("total_ios"):
                c = d.get("clat_ns") or {}
                pct = c.get("percentile") or {}
                clat = {
                    "p50": float(pct.get("50.000000", 0)), "p99": float(pct.get("99.000000", 0)),
                    "p999": float(pct.get("99.900000", 0)), "mean": float(c.get("mean", 0)),
                }
    return {"iops": iops, "bw_bytes": bw, "clat_ns": clat}


def lock_key(lock: TraceLock) -> str:
    kind = lock.get("kind") or "unknown"
    if kind in INODE_LOCK_KINDS:
        where = lock.get("path") or f"{lock.get('dev')}:{lock.get('ino')}"
        return f"{kind}:{where}"
    if lock.get("name"):
        return f"{kind}:{lock['name']}"
    return f"{kind}:{lock.get('addr', '?')}"


def waiting_function(kstack: list[str]) -> str | None:
    """The first frame past the locking code: the kernel function that waited."""
    for frame in kstack or []:
        name = frame.split("+", 1)[0]
        if not name.startswith(LOCK_INTERNAL_PREFIXES) and name != "[unknown]":
            return name
    return None


def _lock_mode(waits: list[LockWait], exclusive_held: Held | None) -> str:
    """How the contended holders took the lock, as far as the wait flags tell.

    A WRITE waiter takes the lock exclusive. A READ waiter on an rwsem sleeps
    only behind an exclusive holder or a queued writer
    (kernel/locking/rwsem.c: rwsem_down_read_slowpath), so READ waits with
    writers present, or with the recorder seeing the lock held exclusive,
    still mean exclusive holders. Only READ waits and nothing else: shared.
    """
    write_ns = sum(w.get("total_ns", 0) for w in waits if "WRITE" in (w.get("flag_names") or []))
    read_ns = sum(w.get("total_ns", 0) for w in waits if "READ" in (w.get("flag_names") or []))
    if write_ns == 0 and read_ns == 0:
        return "unknown"
    if write_ns or (exclusive_held or {}).get("total_ns", 0):
        return "exclusive"
    return "shared"


def worker_tids(run: Run) -> set[int]:
    """TIDs of the workload's I/O threads (not its idle main thread)."""
    lk = (run.get("workload") or {}).get("lockscope") or {}
    return {int(t["tid"]) for t in lk.get("threads") or [] if t.get("tid")}


def trace_breakdown(trace: Trace | None, threads: int, duration_ns: float,
                    tids: set[int] | None = None) -> Breakdown | None:
    """Where traced thread time went in one run, in ns per category and per lock.

    With ``tids``, only those threads count: a driver's idle main thread would
    otherwise pass for off-CPU time of the workload.
    """
    if not trace:
        return None
    thr = [t for t in trace.get("threads") or [] if not tids or t.get("tid") in tids]
    oncpu = sum(t.get("oncpu_ns", 0) for t in thr)
    runq = sum(t.get("runqueue_ns", 0) for t in thr)
    offcpu = sum(t.get("offcpu_ns", 0) for t in thr)
    total = float(oncpu + runq + offcpu)
    if total <= 0:
        interval = observed_ns(trace) or duration_ns
        total = float(interval) * max(threads, 1)
    # Blocked time by the one off-CPU classifier (waitclass); lock waits are
    # counted from locks[] and runnable time from threads[].
    by_part = {"block_io": 0, "journal": 0, "other_offcpu": 0}
    for rec in trace.get("offcpu") or []:
        if tids and rec.get("tid") not in tids:
            continue
        if rec.get("reason") not in ("lock", "runqueue"):
            by_part[sweep_part(rec)] += rec.get("total_ns", 0)
    locks: list[RunLock] = []
    for lock in trace.get("locks") or []:
        waits = lock.get("waits") or []
        heaviest: LockWait = max(waits, key=lambda w: w.get("total_ns", 0), default=LockWait())
        hist: list[int] = []
        for w in waits:
            add_hist(hist, w.get("hist_log2_ns") or [])
        locks.append({
            "key": lock_key(lock), "kind": lock.get("kind") or "unknown",
            "name": lock.get("name"), "path": lock.get("path"), "dev": lock.get("dev"),
            "ino": lock.get("ino"), "addr": lock.get("addr"),
            "inode": (lock.get("kind") in INODE_LOCK_KINDS),
            "total_ns": lock.get("total_ns", sum(w.get("total_ns", 0) for w in waits)),
            "count": lock.get("count", sum(w.get("count", 0) for w in waits)),
            "max_ns": lock.get("max_ns", max((w.get("max_ns", 0) for w in waits), default=0)),
            "hist": hist, "mode": _lock_mode(waits, lock.get("exclusive_held")),
            "stack": heaviest.get("kstack") or [],
            "function": waiting_function(heaviest.get("kstack") or []),
            "share": 0.0,   # below, once thread time is known
        })
    inode_ns = sum(lk["total_ns"] for lk in locks if lk["inode"])
    other_ns = sum(lk["total_ns"] for lk in locks if not lk["inode"])
    parts: dict[str, float] = {
        "oncpu": oncpu, "runqueue": runq, "inode_lock": inode_ns, "other_lock": other_ns,
        "block_io": by_part["block_io"], "journal": by_part["journal"],
    }
    parts["other_offcpu"] = max(total - sum(parts.values()), 0)
    # Lock waits are measured apart from sched_switch, so categories can overlap
    # by a little; keep shares a partition of thread time.
    scale = total / max(sum(parts.values()), total)
    share = {k: v * scale / total for k, v in parts.items()}
    for lk in locks:
        lk["share"] = lk["total_ns"] * scale / total
    return {"thread_time_ns": total, "time_share": share, "locks": locks,
            "dio": trace.get("dio") or []}
