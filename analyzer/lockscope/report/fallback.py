"""Throughput and latency points from the runs' fio-style workload JSON.

Used only when results.json has no ``analysis`` for a filesystem (for example
a recording made before the analyzer ran): the report can still draw the
scaling curve and the latency percentiles, but no verdict or lock ranking.
"""

from __future__ import annotations

import math
from typing import Any

from .fmt import as_float

_PCT = {"p50": "50.000000", "p99": "99.000000", "p999": "99.900000"}


def _side(job: dict[str, Any]) -> dict[str, Any]:
    """The write stats of a job, else its read stats (whichever did I/O)."""
    for name in ("write", "read"):
        side = job.get(name)
        if isinstance(side, dict) and (as_float(side.get("iops")) or 0) > 0:
            return side
    return {}


def run_stats(run: dict[str, Any]) -> dict[str, Any] | None:
    """(iops, bw_bytes, clat) of one run, summed over its fio jobs; None if unreadable."""
    wl = run.get("workload")
    jobs = wl.get("jobs") if isinstance(wl, dict) else None
    if not isinstance(jobs, list) or not jobs:
        return None
    iops = bw = 0.0
    clat_sum = clat_n = 0.0
    pct: dict[str, float] = {}
    for job in jobs:
        if not isinstance(job, dict):
            continue
        side = _side(job)
        iops += as_float(side.get("iops")) or 0.0
        b = as_float(side.get("bw_bytes"))
        bw += b if b is not None else (as_float(side.get("bw")) or 0.0) * 1024
        clat = side.get("clat_ns") if isinstance(side.get("clat_ns"), dict) else {}
        n = as_float(clat.get("N")) or 1.0
        mean = as_float(clat.get("mean"))
        if mean is not None:
            clat_sum += mean * n
            clat_n += n
        for key, fio_key in _PCT.items():
            v = as_float((clat.get("percentile") or {}).get(fio_key))
            if v is not None:
                # Several jobs: the slowest job's percentile, an upper bound.
                pct[key] = max(pct.get(key, 0.0), v)
    if iops <= 0:
        return None
    if clat_n:
        pct["mean"] = clat_sum / clat_n
    return {"iops": iops, "bw_bytes": bw, "clat_ns": pct}


def _summary(values: list[float]) -> dict[str, float]:
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / (len(values) - 1) if len(values) > 1 else 0.0
    return {"mean": mean, "min": min(values), "max": max(values), "stddev": math.sqrt(var)}


def points_from_runs(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """analysis-shaped points (threads, iops, bw_bytes, mib_s, efficiency, clat_ns)."""
    by_n: dict[int, list[dict[str, Any]]] = {}
    for run in runs:
        stats = run_stats(run)
        try:
            n = int(run.get("threads"))
        except (TypeError, ValueError):
            continue
        if stats:
            by_n.setdefault(n, []).append(stats)
    points = []
    x_per_thread = None
    for n in sorted(by_n):
        reps = by_n[n]
        iops = _summary([r["iops"] for r in reps])
        bw = _summary([r["bw_bytes"] for r in reps])
        if x_per_thread is None:
            x_per_thread = iops["mean"] / n
        clat: dict[str, float] = {}
        for key in ("p50", "p99", "p999", "mean"):
            vals = [r["clat_ns"][key] for r in reps if key in r["clat_ns"]]
            if vals:
                clat[key] = sum(vals) / len(vals)
        points.append({"threads": n, "repeats": len(reps), "iops": iops, "bw_bytes": bw,
                       "mib_s": bw["mean"] / 2**20,
                       "efficiency": iops["mean"] / (n * x_per_thread) if x_per_thread else None,
                       "clat_ns": clat, "traced": any(isinstance(r.get("trace"), dict)
                                                      for r in runs
                                                      if r.get("threads") == n)})
    return points
