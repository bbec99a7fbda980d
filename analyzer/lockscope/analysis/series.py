"""Per-second series of an attach: throughput and thread time per wait class, lined up.

The recorder's ``series`` holds one entry per interval with the deltas of its
maps (threads, offcpu, syscalls, dio, net); without it the whole window is one
interval. The database's cumulative counters (dbstats) are interpolated at each
interval's edges (they share ``CLOCK_MONOTONIC``), so both views line up.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Sequence
from typing import Any, cast

from ..schema import (
    DbDoc,
    FallClass,
    Falls,
    OffcpuRecord,
    SeriesRow,
    SyscallEntry,
    Trace,
    TraceRates,
    TraceSection,
)
from .dbfiles import DATA_ROLES, LOG_ROLES, PgNames, file_role
from .iowq import add_behind_ns
from .observed import observed_ns, observed_share, record_observed_ns
from .syscall_kinds import calls_of_kind
from .waitclass import CLASSES, UserClassifier, classify

# per-thread time by class: {tid: {class or "oncpu": ns}}
ThreadClasses = dict[Any, dict[str, float]]
RecordKey = tuple[Any, ...]



def _dur_s(interval: TraceSection) -> float:
    """Seconds the probes watched this interval: the base of its rates."""
    return max(observed_ns(interval), 1.0) / 1e9


# dio[] latency objects of the durability calls per file -> the names of their figures
SYNC_FIELDS = {"fsync": ("fsyncs", "fsync_ns"),
               "sync_file_range": ("sync_file_ranges", "sync_file_range_ns"),
               "dsync_writes": ("dsync_writes", "dsync_write_ns")}


def fsync_by_file(section: TraceSection) -> list[dict[str, Any]]:
    """Per-file durability calls of traced threads, where the recorder has them
    (``dio[].fsync``: fsync and fdatasync; ``dio[].sync_file_range``; ``dio[].dsync_writes``:
    writes on O_DSYNC/O_SYNC files): ``{path, dev, ino, fsyncs, fsync_ns, sync_file_ranges,
    sync_file_range_ns, dsync_writes, dsync_write_ns}``, files with any of them. Older
    recordings counted sync_file_range in ``fsync``."""
    out = []
    for f in section.get("dio") or []:
        row: dict[str, Any] = {"path": f.get("path"), "dev": f.get("dev"), "ino": f.get("ino")}
        for key, (count, ns) in SYNC_FIELDS.items():
            lat = f.get(key)
            row[count] = lat.get("count", 0) if isinstance(lat, dict) else 0
            row[ns] = lat.get("total_ns", 0) if isinstance(lat, dict) else 0
        if any(row[c] for c, _ in SYNC_FIELDS.values()):
            out.append(row)
    return out


def _syscall_counts(section: TraceSection) -> dict[str, SyscallEntry]:
    """Entries by name; a merged tail (``_merge_short_tail``) holds one per interval,
    summed here."""
    out: dict[str, SyscallEntry] = {}
    for e in section.get("syscalls") or []:
        if not isinstance(e, dict) or "name" not in e:
            continue
        if e["name"] in out:
            prev = out[e["name"]]
            e = {**prev, "count": prev.get("count", 0) + e.get("count", 0),
                 "timed": prev.get("timed", 0) + e.get("timed", 0),
                 "total_ns": prev.get("total_ns", 0) + e.get("total_ns", 0)}
        out[e["name"]] = e
    return out


def interval_throughput(section: TraceSection, pg_names: PgNames | None = None) -> TraceRates:
    """Trace throughput of one interval (or of a whole trace), per second."""
    dur = _dur_s(section)
    calls = _syscall_counts(section)
    writes = calls_of_kind(calls.values(), "write")
    # durability calls; sync_file_range only starts (and may wait for) writeback
    fsyncs = calls_of_kind(calls.values(), "sync")
    ranges = calls_of_kind(calls.values(), "sync_range")
    by_file = fsync_by_file(section)
    if not fsyncs:
        fsyncs = sum(f["fsyncs"] for f in by_file)
    dsync = sum(f["dsync_writes"] for f in by_file)
    log_bytes = data_bytes = 0
    for f in section.get("dio") or []:
        role = file_role(f.get("path"), pg_names).role
        b = (f.get("writes") or {}).get("bytes", 0) + \
            (f.get("buffered_writes") or {}).get("bytes", 0)
        if role in LOG_ROLES:
            log_bytes += b
        elif role in DATA_ROLES:
            data_bytes += b
    net = section.get("net") or []
    rx = sum(n.get("rx_calls", 0) for n in net if isinstance(n, dict))
    tx = sum(n.get("tx_calls", 0) for n in net if isinstance(n, dict))
    # Writes to sockets and pipes are responses, not file writes. The recorder counts
    # those made with a write call apart (tx_write_calls; sendto and sendmsg never were
    # among the writes); an older recording has only tx_calls, all taken as such.
    tx_writes = sum(n.get("tx_write_calls", n.get("tx_calls", 0))
                    for n in net if isinstance(n, dict))
    writes = max(writes - tx_writes, 0)
    return {"write_calls_s": writes / dur, "fsync_calls_s": fsyncs / dur,
            "sync_file_range_calls_s": ranges / dur, "dsync_writes_s": dsync / dur,
            "log_bytes_s": log_bytes / dur, "data_bytes_s": data_bytes / dur,
            "requests_s": rx / dur, "responses_s": tx / dur, "has_net": bool(net)}


def _record_key(rec: OffcpuRecord) -> RecordKey:
    return (rec.get("tid"), rec.get("reason"), rec.get("lock_addr"),
            tuple(rec.get("kstack") or ()))


def window_classes(trace: Trace, lock_kinds: dict[str | None, str] | None = None,
                   idle_tids: Collection[int | None] = frozenset(),
                   user_classifier: UserClassifier | None = None) -> dict[RecordKey, str]:
    """The class of each off-CPU record of the whole window, by (thread, reason, lock,
    kernel stack), where all its records agree. Interval records take it: the
    recorder may resolve user stacks only in the final document."""
    seen: dict[RecordKey, set[str]] = {}
    for rec in trace.get("offcpu") or []:
        if rec.get("reason") != "runqueue":
            c = classify(rec, lock_kinds, idle_tids, user_classifier)
            seen.setdefault(_record_key(rec), set()).add(c.cls)
    return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1}


def thread_classes(section: TraceSection, lock_kinds: dict[str | None, str] | None = None,
                   idle_tids: Collection[int | None] = frozenset(),
                   user_classifier: UserClassifier | None = None,
                   known: dict[RecordKey, str] | None = None) -> ThreadClasses:
    """Per thread, time (ns) per wait class and ``oncpu`` in one interval (or window);
    ``known`` gives the window's class of a record (window_classes)."""
    per: ThreadClasses = {}

    def row(tid: int | None) -> dict[str, float]:
        return per.setdefault(tid, {**{c: 0.0 for c in CLASSES}, "oncpu": 0.0})

    share = observed_share(section)
    for rec in section.get("offcpu") or []:
        if rec.get("reason") == "runqueue":
            continue  # counted from threads below (it includes wakeup → running)
        cls = (known or {}).get(_record_key(rec)) or \
            classify(rec, lock_kinds, idle_tids, user_classifier).cls
        # thread time is of the observed part (threads[]): long waits count their share
        row(rec.get("tid"))[cls] += record_observed_ns(rec, share)
    for t in section.get("threads") or []:
        r = row(t.get("tid"))
        r["runqueue"] = float(t.get("runqueue_ns", 0))
        r["oncpu"] = float(t.get("oncpu_ns", 0))
        recorded = sum(v for k, v in r.items() if k not in ("runqueue", "oncpu"))
        # Off-CPU periods shorter than the recorder's --min-block-us have no record:
        # nobody can class them, unless the thread waited for work all window.
        rest = max(t.get("offcpu_ns", 0) - recorded, 0)
        r["idle" if t.get("tid") in idle_tids else "unclassified"] += rest
    return per


def interval_wait_classes(section: TraceSection,
                          lock_kinds: dict[str | None, str] | None = None,
                          idle_tids: Collection[int | None] = frozenset(),
                          user_classifier: UserClassifier | None = None) -> dict[str, float]:
    """Thread time (ns) per wait class (and ``oncpu``) in one interval."""
    out = {**{c: 0.0 for c in CLASSES}, "oncpu": 0.0}
    for r in thread_classes(section, lock_kinds, idle_tids, user_classifier).values():
        for k, v in r.items():
            out[k] += v
    return out


def _spread_backwards(per_interval: list[ThreadClasses],
                      durations_ns: list[float]) -> None:
    """A period counts in the interval where it ends, so a thread blocked for several
    intervals shows all of it at once. Move each thread's time beyond an interval's
    length back into the earlier intervals where it had room (its class mix kept)."""
    tids = {tid for per in per_interval for tid in per}
    for tid in tids:
        carry: dict[str, float] = {}
        for i in range(len(per_interval) - 1, -1, -1):
            r = per_interval[i].setdefault(tid, {})
            for k, v in carry.items():
                r[k] = r.get(k, 0.0) + v
            total = sum(r.values())
            excess = total - durations_ns[i]
            carry = {}
            if excess > 0 and i > 0:
                frac = excess / total
                carry = {k: v * frac for k, v in r.items() if k != "oncpu"}
                moved = sum(carry.values())
                if moved:
                    carry = {k: v * excess / moved for k, v in carry.items()}
                for k, v in carry.items():
                    r[k] -= v


def _interp(samples: list[dict[str, Any]], key: str, t_ns: int) -> float | None:
    """A cumulative counter at time t_ns, linear between the samples around it."""
    pts = [(s["mono_ns"], s[key]) for s in samples if key in s]
    if len(pts) < 2 or t_ns < pts[0][0] - 1.5e9 or t_ns > pts[-1][0] + 1.5e9:
        return None
    for (t0, v0), (t1, v1) in zip(pts, pts[1:]):
        if t_ns <= t1 or (t1, v1) == pts[-1]:
            if t1 == t0:
                return float(v1)
            return float(v0 + (v1 - v0) * (t_ns - t0) / (t1 - t0))
    return float(pts[-1][1])


def db_rates(db: DbDoc | None, start_ns: int, end_ns: int) -> dict[str, float]:
    """Per-second rates of the database's counters over [start, end]."""
    if not db or len(db.get("samples") or []) < 2:
        return {}
    samples = db["samples"]
    dur = max(end_ns - start_ns, 1) / 1e9
    out = {}
    for key in db.get("counters") or []:
        a, b = _interp(samples, key, start_ns), _interp(samples, key, end_ns)
        if a is None or b is None:
            continue
        out[key] = (b - a) / dur
    own = db.get("own_xacts_per_sample")
    if own and "xact_commit" in out and len(samples) > 1:
        period = (samples[-1]["mono_ns"] - samples[0]["mono_ns"]) / 1e9 / (len(samples) - 1)
        out["xact_commit"] = max(out["xact_commit"] - own / max(period, 1e-3), 0.0)
    return out


def db_waits(db: DbDoc | None, start_ns: int, end_ns: int) -> dict[str, float]:
    """PostgreSQL's active sessions by wait event, averaged over the samples in [start, end]."""
    if not db:
        return {}
    picked = [s for s in db.get("samples") or [] if start_ns <= s["mono_ns"] < end_ns
              and "waits" in s]
    out: dict[str, float] = {}
    for s in picked:
        for w in s["waits"]:
            key = f"{w.get('type')}:{w.get('event')}"
            out[key] = out.get(key, 0.0) + w.get("n", 0) / len(picked)
    return out


def _merge_short_tail(intervals: list[TraceSection]) -> list[TraceSection]:
    """The last interval ends with the window and may be a sliver: fold one shorter than
    half the one before into it (sections are deltas, so their entries concatenate)."""
    if len(intervals) < 2 or _dur_s(intervals[-1]) >= 0.5 * _dur_s(intervals[-2]):
        return intervals
    a, b = intervals[-2], intervals[-1]
    # sections are dicts of lists (and their interval): concatenate every list
    ad: dict[str, Any] = dict(a)
    bd: dict[str, Any] = dict(b)
    lists = {k: list(ad.get(k) or []) + list(bd.get(k) or [])
             for k in set(ad) | set(bd) if isinstance(ad.get(k) or bd.get(k), list)}
    merged = cast(TraceSection, lists)
    ia, ib = a.get("interval") or {}, b.get("interval") or {}
    merged["interval"] = {"start_mono_ns": ia.get("start_mono_ns", 0),
                          "end_mono_ns": ib.get("end_mono_ns", 0),
                          "duration_ns": ib.get("end_mono_ns", 0) - ia.get("start_mono_ns", 0),
                          "observed_ns": int(observed_ns(a) + observed_ns(b))}
    return intervals[:-2] + [merged]


def build_series(trace: Trace, db: DbDoc | None, lock_kinds: dict[str | None, str] | None = None,
                 idle_tids: Collection[int | None] = frozenset(),
                 user_classifier: UserClassifier | None = None,
                 pg_names: PgNames | None = None) -> list[SeriesRow]:
    """One row per interval: time, trace throughput, DB rates, thread time per class."""
    intervals: list[TraceSection] = [s for s in trace.get("series") or [] if isinstance(s, dict)]
    if not intervals:
        intervals = [trace]
    intervals = _merge_short_tail(intervals)
    start0 = (intervals[0].get("interval") or {}).get("start_mono_ns", 0)
    known = window_classes(trace, lock_kinds, idle_tids, user_classifier)
    per_interval = [thread_classes(s, lock_kinds, idle_tids, user_classifier, known)
                    for s in intervals]
    _spread_backwards(per_interval, [_dur_s(s) * 1e9 for s in intervals])
    rows: list[SeriesRow] = []
    for s, per in zip(intervals, per_interval):
        classes = {**{c: 0.0 for c in CLASSES}, "oncpu": 0.0}
        for r in per.values():
            for k, v in r.items():
                classes[k] += v
        add_behind_ns(s, classes)      # request time, where measured
        iv = s.get("interval") or {}
        start, end = iv.get("start_mono_ns", 0), iv.get("end_mono_ns", 0)
        rows.append({
            "t_s": round((start - start0) / 1e9, 3), "duration_s": round(_dur_s(s), 3),
            "start_mono_ns": start, "end_mono_ns": end,
            "trace": interval_throughput(s, pg_names),
            "db": db_rates(db, start, end),
            "db_waits": db_waits(db, start, end),
            "classes_ns": classes,
        })
    return rows


def throughput_signal(rows: list[SeriesRow], engine: str | None) -> tuple[str, list[float]]:
    """The best per-second throughput available: DB commits, else socket requests,
    else write calls."""
    key = "Com_commit" if engine == "mariadb" else "xact_commit"
    if rows and all(key in r["db"] for r in rows):
        return f"commits/s ({engine} counters)", [r["db"][key] for r in rows]
    if rows and all(r["trace"]["has_net"] for r in rows):
        return "socket requests/s (trace)", [r["trace"]["requests_s"] for r in rows]
    return "write calls/s (trace)", [r["trace"]["write_calls_s"] for r in rows]


def falls(rows: list[SeriesRow], tput: Sequence[float], drop: float = 0.2,
          max_lag: int = 1) -> Falls:
    """Intervals where throughput fell (more than ``drop`` below the median), and the
    loss class that rose with it.

    For each class, its thread time per interval is regressed on throughput at lags
    0..max_lag (class leading); the class with the strongest negative correlation is
    named, with its effect: the extra threads it held in the fallen intervals and the
    throughput lost per extra thread.
    """
    # (statistics, not numpy: an attach need not pay numpy's import, seconds on a
    # small host, for a few dozen points)
    # An interval the probes never watched (--duty detached them throughout) has no
    # waits to relate: it is left out, not read as one without waits.
    watched = [i for i, r in enumerate(rows) if r["duration_s"] > 0]
    rows, tput = [rows[i] for i in watched], [tput[i] for i in watched]
    n = len(tput)
    classes: list[FallClass] = []
    out: Falls = {"intervals": n, "fallen": [], "median": None, "classes": classes, "top": None}
    if n < 4:
        out["note"] = f"{n} interval(s): too few to relate throughput to waits"
        return out
    y = [float(v) for v in tput]
    med = float(statistics.median(y))
    out["median"] = med
    fallen = [i for i in range(n) if med > 0 and y[i] < (1 - drop) * med]
    out["fallen"] = [rows[i]["t_s"] for i in fallen]
    for cls in CLASSES:
        if cls == "idle":
            continue
        x = [r["classes_ns"].get(cls, 0.0) / 1e9 / r["duration_s"] for r in rows]
        if _constant(x) or _constant(y):
            continue
        best: FallClass | None = None
        for lag in range(max_lag + 1):
            xs, ys = x[:n - lag], y[lag:]
            if len(xs) < 4 or _constant(xs) or _constant(ys):
                continue
            r = statistics.correlation(xs, ys)
            slope = statistics.linear_regression(xs, ys).slope
            if best is None or r < best["r"]:
                best = {"class": cls, "lag_s": lag, "r": round(r, 3),
                        "slope_per_thread": round(slope, 3), "n": len(xs)}
        if best is None:
            continue
        rest = [i for i in range(n) if i not in fallen]
        if fallen and rest:
            best["threads_in_falls"] = round(statistics.fmean(x[i] for i in fallen), 3)
            best["threads_otherwise"] = round(statistics.fmean(x[i] for i in rest), 3)
        classes.append(best)
    classes.sort(key=lambda c: c["r"])
    top = next((c for c in classes if c["r"] <= -0.5 and c["n"] >= 4), None)
    if top and (not fallen
                or top.get("threads_in_falls", 0) <= top.get("threads_otherwise", 0)):
        top = None  # throughput never fell, or the class did not rise when it did
    out["top"] = top
    return out


def _constant(values: Sequence[float]) -> bool:
    """No spread, so no correlation to compute."""
    return min(values) == max(values)
