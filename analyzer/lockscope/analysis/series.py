"""Per-second series of an attach: throughput and thread time per wait class, lined up.

The recorder's ``series`` holds one entry per interval with the deltas of its
maps (threads, offcpu, syscalls, dio, net); without it the whole window is one
interval. The database's cumulative counters (dbstats) are interpolated at each
interval's edges (they share ``CLOCK_MONOTONIC``), so both views line up.
"""

from __future__ import annotations

from .dbfiles import DATA_ROLES, LOG_ROLES, file_role
from .waitclass import CLASSES, classify

WRITE_SYSCALLS = ("write", "pwrite64", "pwritev", "pwritev2", "writev")
FSYNC_SYSCALLS = ("fsync", "fdatasync", "sync_file_range")


def _dur_s(interval: dict) -> float:
    iv = interval.get("interval") or {}
    d = iv.get("duration_ns") or (iv.get("end_mono_ns", 0) - iv.get("start_mono_ns", 0))
    return max(d, 1) / 1e9


def fsync_by_file(section: dict) -> list[dict]:
    """Per-file fsync/fdatasync/sync_file_range of traced threads, where the recorder
    has them (``dio[].fsync``, a latency object): ``{path, dev, ino, count, total_ns}``."""
    out = []
    for f in section.get("dio") or []:
        fs = f.get("fsync")
        if isinstance(fs, dict) and fs.get("count"):
            out.append({"path": f.get("path"), "dev": f.get("dev"), "ino": f.get("ino"),
                        "count": fs.get("count", 0), "total_ns": fs.get("total_ns", 0)})
    return out


def _syscall_counts(section: dict) -> dict[str, dict]:
    return {e["name"]: e for e in section.get("syscalls") or []
            if isinstance(e, dict) and "name" in e}


def interval_throughput(section: dict, pg_names=None) -> dict:
    """Trace throughput of one interval (or of a whole trace), per second."""
    dur = _dur_s(section)
    calls = _syscall_counts(section)
    writes = sum((calls.get(n) or {}).get("count", 0) for n in WRITE_SYSCALLS)
    fsyncs = sum((calls.get(n) or {}).get("count", 0) for n in FSYNC_SYSCALLS)
    if not fsyncs:
        fsyncs = sum(f.get("count", 0) for f in fsync_by_file(section))
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
    # Writes to sockets and pipes are responses, not file writes.
    writes = max(writes - tx, 0)
    return {"write_calls_s": writes / dur, "fsync_calls_s": fsyncs / dur,
            "log_bytes_s": log_bytes / dur, "data_bytes_s": data_bytes / dur,
            "requests_s": rx / dur, "responses_s": tx / dur, "has_net": bool(net)}


def interval_wait_classes(section: dict, lock_kinds=None, idle_tids=frozenset(),
                          user_classifier=None) -> dict[str, float]:
    """Thread time (ns) per wait class in one interval; runqueue from ``threads``."""
    out = {c: 0.0 for c in CLASSES}
    for rec in section.get("offcpu") or []:
        if rec.get("reason") == "runqueue":
            continue  # counted from threads below (it includes wakeup → running)
        c = classify(rec, lock_kinds, idle_tids, user_classifier)
        out[c.cls] += rec.get("total_ns", 0)
    threads = section.get("threads") or []
    out["runqueue"] = float(sum(t.get("runqueue_ns", 0) for t in threads))
    blocked = sum(t.get("offcpu_ns", 0) for t in threads)
    # Off-CPU periods shorter than the recorder's --min-block-us have no record:
    # they are off-CPU time nobody can class.
    recorded = sum(v for k, v in out.items() if k != "runqueue")
    out["unclassified"] += max(blocked - recorded, 0)
    out["oncpu"] = float(sum(t.get("oncpu_ns", 0) for t in threads))
    return out


def _interp(samples: list[dict], key: str, t_ns: int) -> float | None:
    """A cumulative counter at time t_ns, linear between the samples around it."""
    pts = [(s["mono_ns"], s[key]) for s in samples if key in s]
    if len(pts) < 2 or t_ns < pts[0][0] - 1.5e9 or t_ns > pts[-1][0] + 1.5e9:
        return None
    for (t0, v0), (t1, v1) in zip(pts, pts[1:]):
        if t_ns <= t1 or (t1, v1) == pts[-1]:
            if t1 == t0:
                return float(v1)
            return v0 + (v1 - v0) * (t_ns - t0) / (t1 - t0)
    return float(pts[-1][1])


def db_rates(db: dict | None, start_ns: int, end_ns: int) -> dict[str, float]:
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


def db_waits(db: dict | None, start_ns: int, end_ns: int) -> dict[str, float]:
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


def build_series(trace: dict, db: dict | None, lock_kinds=None, idle_tids=frozenset(),
                 user_classifier=None, pg_names=None) -> list[dict]:
    """One row per interval: time, trace throughput, DB rates, thread time per class."""
    intervals = [s for s in trace.get("series") or [] if isinstance(s, dict)]
    if not intervals:
        intervals = [trace]
    start0 = (intervals[0].get("interval") or {}).get("start_mono_ns", 0)
    rows = []
    for s in intervals:
        iv = s.get("interval") or {}
        start, end = iv.get("start_mono_ns", 0), iv.get("end_mono_ns", 0)
        rows.append({
            "t_s": round((start - start0) / 1e9, 3), "duration_s": round(_dur_s(s), 3),
            "start_mono_ns": start, "end_mono_ns": end,
            "trace": interval_throughput(s, pg_names),
            "db": db_rates(db, start, end),
            "db_waits": db_waits(db, start, end),
            "classes_ns": interval_wait_classes(s, lock_kinds, idle_tids, user_classifier),
        })
    return rows


def throughput_signal(rows: list[dict], engine: str | None) -> tuple[str, list[float]]:
    """The best per-second throughput available: DB commits, else socket requests,
    else write calls."""
    key = "Com_commit" if engine == "mariadb" else "xact_commit"
    if rows and all(key in r["db"] for r in rows):
        return f"commits/s ({engine} counters)", [r["db"][key] for r in rows]
    if rows and all(r["trace"]["has_net"] for r in rows):
        return "socket requests/s (trace)", [r["trace"]["requests_s"] for r in rows]
    return "write calls/s (trace)", [r["trace"]["write_calls_s"] for r in rows]


def falls(rows: list[dict], tput: list[float], drop: float = 0.2,
          max_lag: int = 1) -> dict:
    """Intervals where throughput fell (more than ``drop`` below the median), and the
    loss class that rose with it.

    For each class, its thread time per interval is regressed on throughput at lags
    0..max_lag (class leading); the class with the strongest negative correlation is
    named, with its effect: the extra threads it held in the fallen intervals and the
    throughput lost per extra thread.
    """
    import numpy as np

    n = len(tput)
    out = {"intervals": n, "fallen": [], "median": None, "classes": [], "top": None}
    if n < 4:
        out["note"] = f"{n} interval(s): too few to relate throughput to waits"
        return out
    y = np.asarray(tput, float)
    med = float(np.median(y))
    out["median"] = med
    fallen = [i for i in range(n) if med > 0 and y[i] < (1 - drop) * med]
    out["fallen"] = [rows[i]["t_s"] for i in fallen]
    for cls in CLASSES:
        if cls == "idle":
            continue
        x = np.asarray([r["classes_ns"].get(cls, 0.0) / 1e9 / r["duration_s"] for r in rows])
        if x.std() == 0 or y.std() == 0:
            continue
        best = None
        for lag in range(max_lag + 1):
            xs, ys = x[:n - lag], y[lag:]
            if len(xs) < 4 or xs.std() == 0 or ys.std() == 0:
                continue
            r = float(np.corrcoef(xs, ys)[0, 1])
            slope = float(np.polyfit(xs, ys, 1)[0])
            if best is None or r < best["r"]:
                best = {"class": cls, "lag_s": lag, "r": round(r, 3),
                        "slope_per_thread": round(slope, 3), "n": int(len(xs))}
        if best is None:
            continue
        rest = [i for i in range(n) if i not in fallen]
        if fallen and rest:
            best["threads_in_falls"] = round(float(x[fallen].mean()), 3)
            best["threads_otherwise"] = round(float(x[rest].mean()), 3)
        out["classes"].append(best)
    out["classes"].sort(key=lambda c: c["r"])
    top = next((c for c in out["classes"] if c["r"] <= -0.5 and c["n"] >= 4), None)
    if top and fallen and top.get("threads_in_falls", 0) <= top.get("threads_otherwise", 0):
        top = None  # it did not rise when throughput fell
    out["top"] = top
    return out
