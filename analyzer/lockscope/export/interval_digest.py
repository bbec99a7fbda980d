"""One recorder interval reduced to what the exporter serves: profile samples, thread
time per wait class, and per-file lock, DIO and sync figures.

The interval is one object of the recorder's ``series`` (docs/recorder-json.md,
*series*): its counts are the changes in that interval. Off-CPU records are classed by
``analysis.waitclass`` (the classifier ``lockscope attach`` uses), so idle time is kept
apart from loss here exactly as in an attach report.

Waits of at least the recorder's --long-wait-us (records marked ``long``) are recorded
in every phase of its duty; the others only while observed. In the profiles and the
lock-wait figures the latter are scaled by the interval's duration over its observed
time and labelled ``sampling="scaled"``; long ones are labelled ``sampling="long"``,
short ones recorded all the time (duty 100) ``sampling="every"`` (docs/long-waits.md).
Thread time stays a measure of the observed time: long records count there in the
observed share of their time.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from ..analysis.iowq import add_behind_ns
from ..analysis.lockkinds import INODE_LOCK_KINDS
from ..analysis.observed import observed_ns
from ..analysis.waitclass import CLASSES, UserClassifier, classify, syscall_of
from ..schema import OffcpuRecord
from .device_metrics import DeviceTotals, interval_devices
from .pprof_writer import SampleKey
from .stack_carry import StackMemories

# the direct-I/O write classes exported per file (they overlap: see docs/fleet.md)
WRITE_CLASSES = ("aligned", "unaligned", "extending", "hole", "unwritten", "mapped",
                 "dsync", "allocating", "aio")
# per-file sync calls: the recorder's dio[].fsync, and dio[].sync_file_range where a
# recorder counts the writeback hints apart from fsync/fdatasync, and dio[].dsync_writes:
# writes on a file opened O_DSYNC/O_SYNC, each a durability write of its own
SYNC_KEYS = {"fsync": "fsync", "sync_file_range": "sync_file_range",
             "dsync_writes": "dsync_write"}
MAX_LOCKS_REMEMBERED = 65536


@dataclass(frozen=True)
class LockInfo:
    """What the exporter says about a lock address."""

    kind: str
    label: str      # the `lock` label: the kind, or the kernel symbol / member path
    path: str | None
    dev: str | None
    ino: int | None
    wait_class: str  # inode_lock or kernel_lock

    def file(self, names: FileNames) -> str:
        """The file key (path, else dev:ino) or "" for a lock of no file."""
        return names.key(self.path, self.dev, self.ino)


def lock_mode(flag_names: Collection[str] | None) -> str:
    """The mode of a wait from its ``contention_begin`` flag names."""
    names = set(flag_names or ())
    for flag, mode in (("WRITE", "write"), ("READ", "read"), ("MUTEX", "mutex"),
                       ("SPIN", "spin")):
        if flag in names:
            return mode
    return "other"


class FileNames:
    """(dev, ino) → path, from every entry that names both. The recorder resolves paths
    by scanning /proc, so an inode may first come without one: once its path is known
    it keeps that key (``learn`` says which dev:ino keys got a path, for the caller to
    move their figures)."""

    def __init__(self, limit: int = MAX_LOCKS_REMEMBERED) -> None:
        self.limit = limit
        self._paths: OrderedDict[str, str] = OrderedDict()

    def learn(self, iv: Mapping[str, Any]) -> dict[str, str]:
        found: dict[str, str] = {}
        for section in ("locks", "dio"):
            for e in iv.get(section) or []:
                path, ino = e.get("path"), e.get("ino")
                if not path or not ino:
                    continue
                k = f"{e.get('dev')}:{ino}"
                if k not in self._paths:
                    found[k] = path
                self._paths[k] = path
                self._paths.move_to_end(k)
        while len(self._paths) > self.limit:
            self._paths.popitem(last=False)
        return found

    def key(self, path: str | None, dev: str | None, ino: int | None) -> str:
        """A file as the exporter keys it: its path, else ``dev:ino``; "" for none."""
        if path:
            return path
        if ino:
            k = f"{dev}:{ino}"
            return self._paths.get(k, k)
        return ""


class LockBook:
    """Lock address → LockInfo, learned from the intervals' ``locks`` (an off-CPU
    record names its lock by address only); the oldest addresses are forgotten first."""

    def __init__(self, limit: int = MAX_LOCKS_REMEMBERED) -> None:
        self.limit = limit
        self._by_addr: OrderedDict[str, LockInfo] = OrderedDict()

    def learn(self, lk: Mapping[str, Any]) -> LockInfo:
        kind = lk.get("kind") or "unknown"
        label = kind if kind in INODE_LOCK_KINDS else (lk.get("name") or kind)
        info = LockInfo(kind, label, lk.get("path"), lk.get("dev"), lk.get("ino"),
                        "inode_lock" if kind in INODE_LOCK_KINDS else "kernel_lock")
        addr = lk.get("addr") or ""
        self._by_addr[addr] = info
        self._by_addr.move_to_end(addr)
        while len(self._by_addr) > self.limit:
            self._by_addr.popitem(last=False)
        return info

    def get(self, addr: str | None) -> LockInfo | None:
        return self._by_addr.get(addr or "")

    def kinds(self) -> dict[str | None, str]:
        return {a: i.kind for a, i in self._by_addr.items()}


@dataclass
class Digest:
    """One interval's figures (mutable while built, then only read)."""

    start_mono_ns: int
    end_mono_ns: int
    duration_ns: int
    observed_ns: int
    mutex: dict[SampleKey, tuple[int, int]] = field(default_factory=dict)
    block: dict[SampleKey, tuple[int, int]] = field(default_factory=dict)
    # thread time: wait class (and "oncpu") -> ns
    classes_ns: dict[str, float] = field(default_factory=dict)
    # (file, lock, mode) -> [count, ns]
    lock_waits: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)
    # (lock, mode) -> [log2 slots..]
    lock_hist: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    # file -> {"writes", "write_bytes", "buffered_writes", "buffered_bytes", class...}
    dio: dict[str, dict[str, int]] = field(default_factory=dict)
    # (file, call) -> [count, ns]
    syncs: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    # syscall name -> [count, ns]
    syscalls: dict[str, list[int]] = field(default_factory=dict)
    # file -> ns the traced threads spent on it (lock waits, DIO, syncs): its rank
    file_activity: dict[str, float] = field(default_factory=dict)
    # dev:ino keys whose path became known in this interval -> the path
    named: dict[str, str] = field(default_factory=dict)
    # block device name -> what it did (device_metrics), and the interval's length if
    # it reported block devices at all (0: it had no block section)
    devices: dict[str, DeviceTotals] = field(default_factory=dict)
    block_span_ns: int = 0
    bpf_ns: int = 0
    user_cpu_ns: int = 0
    cpu_share: float | None = None


def _add(table: dict[Any, list[int]], key: Any, count: int, ns: int) -> None:
    row = table.setdefault(key, [0, 0])
    row[0] += count
    row[1] += ns


def _add_sample(table: dict[SampleKey, tuple[int, int]], key: SampleKey, count: int,
                ns: int) -> None:
    c, n = table.get(key, (0, 0))
    table[key] = (c + count, n + ns)


# The scheduler's own frames at the top of a stack taken in the waiter's context at
# sched_switch. A long wait's stack is the sleeping task's (bpf_get_task_stack), which
# the kernel takes without them (kernel/stacktrace.c stack_trace_save_tsk() skips
# in_sched_functions() for another task): without these two the same place to wait is
# one frame in the profile, whichever way its stack was taken.
SCHED_TOP_FRAMES = ("__schedule", "schedule")


def profile_kstack(frames: list[str] | None) -> tuple[str, ...]:
    """An off-CPU record's kernel stack as the block profile has it: from the frame
    that called the scheduler."""
    out = list(frames or ())
    while out and out[0].split("+0x", 1)[0] in SCHED_TOP_FRAMES:
        out.pop(0)
    return tuple(out)


def _labels(**kv: str | None) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in kv.items() if v)


@dataclass(frozen=True)
class Weighting:
    """How one interval's records count: ``scale`` multiplies the waits recorded only
    while observed (duration over observed time, 1 at duty 100)."""

    scale: float

    @classmethod
    def of(cls, iv: Mapping[str, Any], observed: float) -> Weighting:
        duration = float((iv.get("interval") or {}).get("duration_ns", 0) or 0)
        if observed <= 0 or duration <= observed:
            return cls(1.0)
        return cls(duration / observed)

    def label(self, long: bool) -> str:
        if long:
            return "long"
        return "scaled" if self.scale > 1.0005 else "every"

    def apply(self, long: bool, count: int, ns: int) -> tuple[int, int]:
        if long or self.scale == 1.0:
            return count, ns
        return round(count * self.scale), round(ns * self.scale)


def digest_interval(iv: Mapping[str, Any], locks: LockBook, names: FileNames,
                    idle_tids: Collection[int | None],
                    user_classifier: UserClassifier | None,
                    memory: StackMemories | None = None) -> Digest:
    """The digest of one series object; ``names`` and ``locks`` learn the interval's
    paths and lock addresses first, ``idle_tids`` are threads that waited for work all
    along (analysis.waitclass), ``memory`` the earlier intervals' stack samples
    (export.stack_carry)."""
    span = iv.get("interval") or {}
    d = Digest(start_mono_ns=int(span.get("start_mono_ns", 0)),
               end_mono_ns=int(span.get("end_mono_ns", 0)),
               duration_ns=int(span.get("duration_ns", 0)),
               observed_ns=int(observed_ns(iv)))
    d.named = names.learn(iv)
    weighting = Weighting.of(iv, d.observed_ns)
    _locks(iv, locks, names, weighting, d, memory)
    _offcpu(iv, locks, names, idle_tids, user_classifier, weighting, d, memory)
    _dio(iv, names, d)
    d.devices = interval_devices(iv, weighting.scale)
    d.block_span_ns = d.duration_ns if "block" in iv else 0
    for e in iv.get("syscalls") or []:
        if e.get("name"):
            count, ns, timed = int(e.get("count", 0)), int(e.get("total_ns", 0)), e.get("timed")
            if timed:  # the write family is timed on a sample of its calls: scaled to all
                ns = ns * count // int(timed)
            _add(d.syscalls, e["name"], count, ns)
    ov = iv.get("overhead") or {}
    d.bpf_ns = int(ov.get("bpf_ns") or 0)
    d.user_cpu_ns = int(ov.get("user_cpu_ns") or 0)
    d.cpu_share = ov.get("cpu_share")
    return d


def _locks(iv: Mapping[str, Any], book: LockBook, names: FileNames, weighting: Weighting,
           d: Digest, memory: StackMemories | None) -> None:
    infos: dict[str | None, LockInfo] = {}
    waits: list[dict[str, Any]] = []
    for lk in iv.get("locks") or []:
        info = infos[lk.get("addr")] = book.learn(lk)
        file = info.file(names)
        for w in lk.get("waits") or []:
            long = bool(w.get("long"))
            count, ns = weighting.apply(long, int(w.get("count", 0)), int(w.get("total_ns", 0)))
            mode = lock_mode(w.get("flag_names"))
            _add(d.lock_waits, (file, info.label, mode), count, ns)
            hist = d.lock_hist.setdefault((info.label, mode), [])
            for i, n in enumerate(w.get("hist_log2_ns") or []):
                if i >= len(hist):
                    hist.append(0)
                hist[i] += weighting.apply(long, int(n), 0)[0]
            if file:
                d.file_activity[file] = d.file_activity.get(file, 0.0) + ns
            waits.append({**w, "lock_addr": lk.get("addr")})
    profiled: list[tuple[Mapping[str, Any], bool]] = (
        memory.mutex.carry(waits, d.end_mono_ns, lambda w: True) if memory
        else [(w, False) for w in waits])
    for w, carried in profiled:
        info = infos[w["lock_addr"]]
        long = bool(w.get("long"))
        count, ns = weighting.apply(long, int(w.get("count", 0)), int(w.get("total_ns", 0)))
        key = (tuple(w.get("kstack") or ()), tuple(w.get("ustack") or ()),
               _labels(wait_class=info.wait_class, lock=info.label,
                       mode=lock_mode(w.get("flag_names")), file=info.file(names),
                       comm=w.get("comm"), sampling=weighting.label(long),
                       stack="carried" if carried else None))
        _add_sample(d.mutex, key, count, ns)


def _offcpu(iv: Mapping[str, Any], book: LockBook, names: FileNames,
            idle_tids: Collection[int | None], user_classifier: UserClassifier | None,
            weighting: Weighting, d: Digest, memory: StackMemories | None) -> None:
    """Thread time per class, as analysis.series.thread_classes counts it, and the
    block profile's samples: every off-CPU record whose class is a loss, a short one
    without a stack spread over its wait's earlier samples where ``memory`` has them."""
    classes = {**{c: 0.0 for c in CLASSES}, "oncpu": 0.0}
    recorded: dict[int | None, float] = {}
    kinds = book.kinds()

    known: dict[int, str] = {}   # by id(): each record classed once

    def class_of(r: Mapping[str, Any]) -> str:
        if id(r) not in known:
            known[id(r)] = "runqueue" if r.get("reason") == "runqueue" else \
                classify(cast(OffcpuRecord, r), kinds, idle_tids, user_classifier).cls
        return known[id(r)]

    records: list[OffcpuRecord] = list(iv.get("offcpu") or [])
    for r in records:
        cls = class_of(r)
        if cls != "runqueue":
            # thread time is of the observed part: a long record's time is all of it
            ns = int(r.get("total_ns", 0))
            observed_part = ns / weighting.scale if r.get("long") else ns
            classes[cls] += observed_part
            recorded[r.get("tid")] = recorded.get(r.get("tid"), 0.0) + observed_part
    profiled: list[tuple[Mapping[str, Any], bool]] = (
        memory.block.carry(records, d.end_mono_ns, lambda r: class_of(r) != "idle") if memory
        else [(r, False) for r in records])
    for p, carried in profiled:
        cls = class_of(p)
        if cls == "idle":
            continue
        long = bool(p.get("long"))
        count, ns = weighting.apply(long, int(p.get("count", 0)), int(p.get("total_ns", 0)))
        info = book.get(p.get("lock_addr")) if p.get("reason") == "lock" else None
        key = (profile_kstack(p.get("kstack")), tuple(p.get("ustack") or ()),
               _labels(wait_class=cls, lock=info.label if info else None,
                       file=info.file(names) if info else None,
                       syscall=syscall_of(p.get("kstack") or [], p.get("syscall")),
                       comm=p.get("comm"), sampling=weighting.label(long),
                       stack="carried" if carried else None))
        _add_sample(d.block, key, count, ns)
    for t in iv.get("threads") or []:
        classes["runqueue"] += float(t.get("runqueue_ns", 0))
        classes["oncpu"] += float(t.get("oncpu_ns", 0))
        # off-CPU periods below --min-block-us have no record (analysis.series)
        rest = max(float(t.get("offcpu_ns", 0)) - recorded.get(t.get("tid"), 0.0), 0.0)
        classes["idle" if t.get("tid") in idle_tids else "unclassified"] += rest
    add_behind_ns(iv, classes)
    d.classes_ns = classes


def _dio(iv: Mapping[str, Any], names: FileNames, d: Digest) -> None:
    for e in iv.get("dio") or []:
        key = names.key(e.get("path"), e.get("dev"), e.get("ino"))
        if not key:
            continue
        row = d.dio.setdefault(key, {})
        w = e.get("writes") or {}
        b = e.get("buffered_writes") or {}
        add = {"writes": int(w.get("count", 0)), "write_bytes": int(w.get("bytes", 0)),
               "buffered_writes": int(b.get("count", 0)),
               "buffered_bytes": int(b.get("bytes", 0))}
        for c in WRITE_CLASSES:
            v = e.get(c)
            if isinstance(v, dict):
                add[c] = int(v.get("count", 0))
        for name, value in add.items():
            row[name] = row.get(name, 0) + value
        active = float((e.get("latency") or {}).get("total_ns", 0))
        for src, call in SYNC_KEYS.items():
            s = e.get(src)
            if isinstance(s, dict) and s.get("count"):
                _add(d.syncs, (key, call), int(s["count"]), int(s.get("total_ns", 0)))
                active += float(s.get("total_ns", 0))
        # a file written only through the page cache still ranks above an untouched one
        active += int(w.get("count", 0)) + int(b.get("count", 0))
        if active:
            d.file_activity[key] = d.file_activity.get(key, 0.0) + active
