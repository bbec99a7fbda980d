"""The exporter's state: cumulative figures over the recorder's intervals, and the
recent intervals for windowed profiles, published as immutable snapshots.

``add_interval`` (the recording side) folds one interval in and swaps in a new
snapshot; readers (the HTTP server) take ``snapshot()`` and never hold the lock while
they serve, so a slow reader cannot stall recording. Memory is bounded: file labels
(``top_files`` + `other`), remembered lock addresses, profile samples
(``max_samples`` per profile, the rest folded into one sample) and the window of
recent intervals (``window_s``).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..analysis.dbfiles import ROLES, PgNames
from ..analysis.stats import add_hist
from ..analysis.wait_classes import LOSS_KEYS
from ..analysis.waitclass import UserClassifier, load_user_classifier
from .device_metrics import DeviceTotals, add_devices
from .file_ranking import OTHER, FileRanking
from .interval_digest import Digest, FileNames, LockBook, digest_interval
from .pprof_writer import SampleKey
from .stack_carry import StackMemories

OVERFLOW_KEY: SampleKey = (("[lockscope: more stacks than --max-samples]",), (), ())
IDLE_LOOKBACK_NS = 10_000_000_000
IDLE_BUSY_SHARE = 0.01
PAGE_LINES = 60

Table = dict[tuple[str, ...], tuple[int, int]]


@dataclass(frozen=True)
class ExportContext:
    """What the recording side knows beside the intervals (``set_context``)."""

    target_up: bool | None = None
    target: str | None = None
    max_overhead_pct: float | None = None
    duty_pct: float | None = None
    online_cpus: int = os.cpu_count() or 1
    # the recorder's drops object, cumulative (made monotonic and split into parts
    # that do not overlap here: drop_kinds)
    drops: Mapping[str, Any] = field(default_factory=dict)
    # the recorder's over-budget pauses so far: {"pauses": N, "paused_ns": NS}
    # (cumulative as the recorder counts them, made monotonic here)
    pauses: Mapping[str, Any] = field(default_factory=dict)
    # map name -> (entries in use, capacity)
    map_occupancy: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    db_engine: str | None = None
    db_commits: float | None = None
    # path -> role key of analysis.dbfiles.ROLES, overriding the role found by name
    file_roles: Mapping[str, str] = field(default_factory=dict)
    pg_names: PgNames = field(default_factory=dict)
    # the exporter process: requests refused by reason (export_server.failures),
    # cumulative since it started
    http_refused: Mapping[str, int] = field(default_factory=dict)
    # the web configuration: 1 when the last reload of --web-config succeeded
    web_config_ok: bool | None = None
    # times the exporter process was started again after it died
    exporter_restarts: int | None = None
    # times a continuous attach started the recorder again, by reason (run/continuous.py);
    # None where nothing restarts it (a recording exported once)
    recorder_restarts: Mapping[str, int] | None = None


CONTEXT_KEYS = tuple(ExportContext.__dataclass_fields__)


@dataclass(frozen=True)
class ExportSnapshot:
    """Everything a scrape or a profile request reads; never changed once made."""

    intervals: int = 0
    first_wall_ns: int = 0
    last_wall_ns: int = 0
    last_end_mono_ns: int = 0
    mono_to_wall_ns: int = 0
    window_s: float = 300.0
    duration_ns: int = 0
    observed_ns: int = 0
    bpf_ns: int = 0
    user_cpu_ns: int = 0
    last_cpu_share: float | None = None
    last_observed_share: float | None = None
    thread_ns: Mapping[str, float] = field(default_factory=dict)
    lock_waits: Mapping[tuple[str, ...], tuple[int, int]] = field(default_factory=dict)
    lock_hist: Mapping[tuple[str, ...], tuple[int, ...]] = field(default_factory=dict)
    lock_hist_sum: Mapping[tuple[str, ...], int] = field(default_factory=dict)
    dio: Mapping[tuple[str, ...], int] = field(default_factory=dict)
    syncs: Mapping[tuple[str, ...], tuple[int, int]] = field(default_factory=dict)
    syscalls: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    drops: Mapping[str, int] = field(default_factory=dict)
    pauses: Mapping[str, int] = field(default_factory=dict)
    db_commits: float | None = None
    context: ExportContext = field(default_factory=ExportContext)
    files: tuple[str, ...] = ()
    mutex_total: Mapping[SampleKey, tuple[int, int]] = field(default_factory=dict)
    block_total: Mapping[SampleKey, tuple[int, int]] = field(default_factory=dict)
    devices: Mapping[str, DeviceTotals] = field(default_factory=dict)
    recent: tuple[Digest, ...] = ()
    lines: tuple[Mapping[str, Any], ...] = ()

    def file_role(self, key: str) -> str:
        """The database role of a file label (analysis.dbfiles), `other` for `other`."""
        from ..analysis.dbfiles import file_role
        if not key or key == OTHER:
            return "other" if key else ""
        given = self.context.file_roles.get(key)
        if given in ROLES:
            return given
        return file_role(key, self.context.pg_names).role

    def file_object(self, key: str) -> str:
        """The table / relation / segment a file holds, where its path says."""
        from ..analysis.dbfiles import file_role
        if not key or key == OTHER:
            return ""
        return file_role(key, self.context.pg_names).object or ""


def drop_kinds(drops: Mapping[str, Any]) -> dict[str, int]:
    """The recorder's ``drops`` object (docs/recorder-json.md) as parts that do not
    overlap: ``map_full`` by map (``map_full.locks``, ...) and ``stack_missing`` as its
    kernel and user parts when the object has them; other counts as they are."""
    out: dict[str, int] = {}
    by_map = drops.get("map_full_by_map")
    for k, v in drops.items():
        if isinstance(v, Mapping):
            for name, n in v.items():
                if isinstance(n, (int, float)) and not isinstance(n, bool):
                    out[f"{'map_full' if k == 'map_full_by_map' else k}.{name}"] = int(n)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            if k == "map_full" and isinstance(by_map, Mapping):
                continue
            if k == "stack_missing" and "kernel_stack_missing" in drops:
                continue
            out[k] = int(v)
    return out


RESTARTS_KEY = "lockscope_restarts"


def state_context(state: Mapping[str, Any]) -> dict[str, Any]:
    """What an interval's ``state`` (maps in use, drops and sampling so far) sets in the
    context."""
    kw: dict[str, Any] = {}
    maps = state.get("maps")
    if isinstance(maps, Mapping):
        kw["map_occupancy"] = {k: (int(v.get("entries", 0)), int(v.get("max_entries", 0)))
                               for k, v in maps.items() if isinstance(v, Mapping)}
    if isinstance(state.get("drops"), Mapping):
        kw["drops"] = state["drops"]
    sampling = state.get("sampling")
    if isinstance(sampling, Mapping) and sampling.get("duty_pct") is not None:
        kw["duty_pct"] = float(sampling["duty_pct"])
    if isinstance(sampling, Mapping) and "pauses" in sampling:
        kw["pauses"] = {k: sampling.get(k, 0) for k in ("pauses", "paused_ns")}
    # not the recorder's: a continuous attach adds it to each interval it drains
    if isinstance(state.get(RESTARTS_KEY), Mapping):
        kw["recorder_restarts"] = {str(k): int(v) for k, v in state[RESTARTS_KEY].items()}
    return kw


class _Monotonic:
    """A cumulative source that may restart from 0 (a database or recorder restart)
    made into a counter that only grows, adding each rise. ``from_zero``: the source
    began when the exporter did (the recorder's drops), so its first value counts
    whole; otherwise (a database's commits since its start) counting starts at 0 at
    first sight."""

    def __init__(self, from_zero: bool = False) -> None:
        self.last: float | None = 0.0 if from_zero else None
        self.total = 0.0

    def see(self, value: float) -> float:
        if self.last is not None:
            self.total += value - self.last if value >= self.last else value
        self.last = value
        return self.total


def _cumulate(sources: dict[str, _Monotonic], old: Mapping[str, int],
              new: Mapping[str, Any]) -> dict[str, int]:
    """``old`` updated with the recorder's counts ``new`` (from its start, so from 0),
    each made monotonic across recorder restarts."""
    out = dict(old)
    for k, v in new.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = int(sources.setdefault(k, _Monotonic(from_zero=True)).see(float(v)))
    return out


class ExportState:
    """Cumulative exporter state; see the package docstring for the interface."""

    def __init__(self, top_files: int = 50, window_s: float = 300.0,
                 max_samples: int = 20000,
                 user_classifier: UserClassifier | None = None) -> None:
        if window_s <= 0 or max_samples < 1:
            raise ValueError("window_s and max_samples must be positive")
        self._lock = threading.Lock()
        self._ranking = FileRanking(top_files)
        self._locks = LockBook()
        self._names = FileNames()
        self._stack_samples = StackMemories()
        self._classifier = user_classifier or load_user_classifier()
        self._max_samples = max_samples
        self._recent: deque[Digest] = deque()
        self._busy: deque[tuple[int, int, dict[int | None, float]]] = deque()
        self._lines: deque[Mapping[str, Any]] = deque(maxlen=PAGE_LINES)
        self._thread_ns: dict[str, float] = {}
        self._lock_waits: Table = {}
        self._lock_hist: dict[tuple[str, ...], tuple[int, ...]] = {}
        self._lock_hist_sum: dict[tuple[str, ...], int] = {}
        self._dio: dict[tuple[str, ...], int] = {}
        self._syncs: Table = {}
        self._syscalls: dict[str, tuple[int, int]] = {}
        self._mutex: dict[SampleKey, tuple[int, int]] = {}
        self._block: dict[SampleKey, tuple[int, int]] = {}
        self._devices: dict[str, DeviceTotals] = {}
        self._drops: dict[str, _Monotonic] = {}
        self._pauses: dict[str, _Monotonic] = {}
        self._commits = _Monotonic()
        self._snap = ExportSnapshot(window_s=window_s)

    # -- the recording side --------------------------------------------------------

    def add_interval(self, interval: Mapping[str, Any]) -> None:
        """Fold in one recorder interval (one ``series`` object: changes since the
        previous one), from one thread at a time. Raises ValueError for an object
        without an interval."""
        span = interval.get("interval")
        if not isinstance(span, Mapping) or "end_mono_ns" not in span:
            raise ValueError("not a recorder interval: no interval.end_mono_ns")
        if isinstance(interval.get("state"), Mapping):
            self.set_context(**state_context(interval["state"]))
        idle = self._idle_tids(interval)
        d = digest_interval(interval, self._locks, self._names, idle, self._classifier,
                            self._stack_samples)
        wall = time.time_ns()
        mono_to_wall = wall - time.monotonic_ns()
        for unnamed, path in d.named.items():
            self._move_file(unnamed, path)
        for key in self._ranking.update(d.file_activity, d.duration_ns / 1e9):
            self._fold_into_other(key)
        label = self._ranking.label
        self._bump(self._thread_ns, d.classes_ns)
        for (file, lock, mode), (c, n) in d.lock_waits.items():
            _add_pair(self._lock_waits, (label(file), lock, mode), c, n)
        for hkey, slots in d.lock_hist.items():
            self._lock_hist[hkey] = tuple(add_hist(list(self._lock_hist.get(hkey, ())), slots))
        for (_file, lock, mode), (_c, n) in d.lock_waits.items():
            self._lock_hist_sum[(lock, mode)] = self._lock_hist_sum.get((lock, mode), 0) + n
        for file, row in d.dio.items():
            for k, v in row.items():
                dkey = (label(file), k)
                self._dio[dkey] = self._dio.get(dkey, 0) + v
        for (file, call), (c, n) in d.syncs.items():
            _add_pair(self._syncs, (label(file), call), c, n)
        for name, (c, n) in d.syscalls.items():
            _add_pair(self._syscalls, name, c, n)
        self._merge_samples(self._mutex, d.mutex)
        self._merge_samples(self._block, d.block)
        add_devices(self._devices, d.devices)
        self._recent.append(d)
        while self._recent and self._recent[0].end_mono_ns <= \
                d.end_mono_ns - self._snap.window_s * 1e9:
            self._recent.popleft()
        self._lines.append(_page_line(d, wall))
        s = self._snap
        share = d.observed_ns / d.duration_ns if d.duration_ns else None
        new = replace(
            s, intervals=s.intervals + 1, first_wall_ns=s.first_wall_ns or
            wall - d.duration_ns, last_wall_ns=wall, last_end_mono_ns=d.end_mono_ns,
            mono_to_wall_ns=mono_to_wall, duration_ns=s.duration_ns + d.duration_ns,
            observed_ns=s.observed_ns + d.observed_ns, bpf_ns=s.bpf_ns + d.bpf_ns,
            user_cpu_ns=s.user_cpu_ns + d.user_cpu_ns, last_cpu_share=d.cpu_share,
            last_observed_share=share, thread_ns=dict(self._thread_ns),
            lock_waits=dict(self._lock_waits), lock_hist=dict(self._lock_hist),
            lock_hist_sum=dict(self._lock_hist_sum), dio=dict(self._dio),
            syncs=dict(self._syncs), syscalls=dict(self._syscalls),
            files=tuple(sorted(self._ranking.scores)), mutex_total=dict(self._mutex),
            block_total=dict(self._block), devices=dict(self._devices),
            recent=tuple(self._recent),
            lines=tuple(self._lines))
        with self._lock:
            self._snap = replace(new, context=self._snap.context, drops=self._snap.drops,
                                 db_commits=self._snap.db_commits)

    def set_context(self, **kw: Any) -> None:
        """Set what the intervals do not carry; keys are ExportContext's fields
        (an unknown key is a TypeError). ``drops`` and ``db_commits`` are cumulative
        as their sources count them; restarts of the source are absorbed."""
        unknown = set(kw) - set(CONTEXT_KEYS)
        if unknown:
            raise TypeError(f"unknown export context: {', '.join(sorted(unknown))}")
        with self._lock:
            snap = self._snap
            ctx = replace(snap.context, **kw)
            drops = _cumulate(self._drops, snap.drops, drop_kinds(kw.get("drops") or {}))
            pauses = _cumulate(self._pauses, snap.pauses, kw.get("pauses") or {})
            commits = snap.db_commits
            if kw.get("db_commits") is not None:
                commits = self._commits.see(float(kw["db_commits"]))
            self._snap = replace(snap, context=ctx, drops=drops, pauses=pauses,
                                 db_commits=commits)

    # -- the reading side -------------------------------------------------------------

    def snapshot(self) -> ExportSnapshot:
        """The current snapshot (immutable; safe to read from any thread)."""
        with self._lock:
            return self._snap

    # -- internals ----------------------------------------------------------------------

    def _idle_tids(self, interval: Mapping[str, Any]) -> set[int | None]:
        """Threads on a CPU (or runnable) for under 1% of the last 10 s of intervals:
        the analysis's idle_threads over a rolling window."""
        span = interval.get("interval") or {}
        end = int(span.get("end_mono_ns", 0))
        obs = int(span.get("observed_ns", span.get("duration_ns", 0)) or 0)
        busy = {t.get("tid"): float(t.get("oncpu_ns", 0)) + float(t.get("runqueue_ns", 0))
                for t in interval.get("threads") or []}
        self._busy.append((end, obs, busy))
        while self._busy and self._busy[0][0] <= end - IDLE_LOOKBACK_NS:
            self._busy.popleft()
        window = sum(o for _, o, _ in self._busy)
        total: dict[int | None, float] = {}
        for _, _, b in self._busy:
            for tid, ns in b.items():
                total[tid] = total.get(tid, 0.0) + ns
        return {tid for tid, ns in total.items() if window and ns < IDLE_BUSY_SHARE * window}

    def _fold_into_other(self, key: str) -> None:
        """A file lost its label: its counters continue under `other`."""
        self._rekey(key, OTHER)

    def _move_file(self, old: str, path: str) -> None:
        """An inode counted as dev:ino got its path: its counters and rank move there."""
        if old not in self._ranking.scores:
            return  # under `other`, mixed with other files: it stays there
        self._ranking.rename(old, path)
        self._rekey(old, path)

    def _rekey(self, old: str, new: str) -> None:
        for table in (self._lock_waits, self._syncs):
            for k in [k for k in table if k[0] == old]:
                c, n = table.pop(k)
                _add_pair(table, (new, *k[1:]), c, n)
        for k in [k for k in self._dio if k[0] == old]:
            v = self._dio.pop(k)
            self._dio[(new, k[1])] = self._dio.get((new, k[1]), 0) + v

    def _merge_samples(self, total: dict[SampleKey, tuple[int, int]],
                       new: Mapping[SampleKey, tuple[int, int]]) -> None:
        for key, (c, n) in new.items():
            if key not in total and len(total) >= self._max_samples:
                key = OVERFLOW_KEY
            oc, on = total.get(key, (0, 0))
            total[key] = (oc + c, on + n)

    @staticmethod
    def _bump(table: dict[str, float], add: Mapping[str, float]) -> None:
        for k, v in add.items():
            table[k] = table.get(k, 0.0) + v


def _add_pair(table: dict[Any, tuple[int, int]], key: Any, c: int, n: int) -> None:
    oc, on = table.get(key, (0, 0))
    table[key] = (oc + c, on + n)


def _page_line(d: Digest, wall_ns: int) -> Mapping[str, Any]:
    """One per-second line of the live page."""
    obs = max(d.observed_ns, 1)
    loss = {c: d.classes_ns.get(c, 0.0) for c in LOSS_KEYS}
    top_loss = max(loss, key=lambda c: loss[c]) if any(loss.values()) else None
    by_file: dict[str, int] = {}
    for (file, _lock, _mode), (_c, n) in d.lock_waits.items():
        by_file[file] = by_file.get(file, 0) + n
    top_file = max(by_file, key=lambda f: by_file[f]) if by_file else None
    writes = sum(r.get("writes", 0) for r in d.dio.values())
    syncs = sum(c for (c, _n) in d.syncs.values())
    return {"wall_ns": wall_ns, "duration_s": d.duration_ns / 1e9,
            "observed_share": d.observed_ns / d.duration_ns if d.duration_ns else None,
            "oncpu_threads": d.classes_ns.get("oncpu", 0.0) / obs,
            "idle_threads": d.classes_ns.get("idle", 0.0) / obs,
            "loss_threads": sum(loss.values()) / obs, "top_loss": top_loss,
            "top_loss_threads": loss[top_loss] / obs if top_loss else 0.0,
            "lock_wait_threads": sum(by_file.values()) / obs,
            "top_lock_file": top_file or None,
            "top_lock_file_threads": by_file[top_file] / obs if top_file else 0.0,
            "dio_writes_s": writes / obs * 1e9, "syncs_s": syncs / obs * 1e9,
            "recorder_cpu_share": d.cpu_share}
