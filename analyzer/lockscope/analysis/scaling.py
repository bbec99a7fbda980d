"""Per-thread-count points of one filesystem: throughput spread, efficiency, time shares."""

from __future__ import annotations

from collections import defaultdict

from ..schema import Clat, Lock, LockIdentity, Point, PointLock, Run
from .iowq_sweep import point_hashed
from .runs import Breakdown, RunLock, trace_breakdown, worker_tids, workload_figures
from .stats import add_hist, log2_percentile, spread

SHARE_KEYS = ("oncpu", "runqueue", "inode_lock", "other_lock", "block_io", "journal",
              "other_offcpu")


class LockTotals(LockIdentity):
    """One lock summed over a filesystem's runs, before finish_locks."""

    count: int
    total_ns: int
    max_ns: int
    hist: list[int]
    share_by_threads: dict[str, float]
    modes: dict[str, float]         # wait ns by how holders took it
    functions: dict[str, float]     # wait ns by the function that waited
    stack: list[str]                # the heaviest run's stack
    stack_ns: int


def _duration_ns(run: Run) -> float:
    lk = (run.get("workload") or {}).get("lockscope") or {}
    t = lk.get("timed_phase") or {}
    if t.get("duration_ns"):
        return float(t.get("duration_ns") or 0)
    jobs = (run.get("workload") or {}).get("jobs") or [{}]
    return float(jobs[0].get("job_runtime", 0)) * 1e6


def build_points(runs: list[Run]) -> tuple[list[Point], dict[str, LockTotals]]:
    """Points ascending by threads, plus the locks aggregated over all runs by key."""
    by_n: dict[int, list[Run]] = defaultdict(list)
    for run in runs:
        by_n[int(run["threads"])].append(run)
    points: list[Point] = []
    locks: dict[str, LockTotals] = {}
    for n in sorted(by_n):
        figs = [workload_figures(r) for r in by_n[n]]
        breakdowns = [trace_breakdown(r.get("trace"), n, _duration_ns(r), worker_tids(r))
                      for r in by_n[n]]
        traced = [b for b in breakdowns if b]
        bw = spread(f["bw_bytes"] for f in figs)
        point: Point = {
            "threads": n, "repeats": len(figs),
            "iops": spread(f["iops"] for f in figs),
            "bw_bytes": bw, "mib_s": bw["mean"] / 2**20,
            "efficiency": 0.0,  # below, once the lowest thread count is known
            "clat_ns": _mean_clat([f["clat_ns"] for f in figs]),
            "traced": bool(traced),
        }
        if traced:
            tt = sum(b["thread_time_ns"] for b in traced)
            point["thread_time_ns"] = tt / len(traced)
            point["time_share"] = {
                k: sum(b["time_share"][k] * b["thread_time_ns"] for b in traced) / tt
                for k in SHARE_KEYS}
            point["inode_locks"], point["other_locks"] = _lock_shares(traced, tt)
            for b in traced:
                _merge_locks(locks, b["locks"], n, b["thread_time_ns"] / tt)
            hashed = point_hashed(by_n[n])
            if hashed:
                point["io_uring_hashed"] = hashed
        points.append(point)
    x1 = points[0]["iops"]["mean"] if points else 0.0
    n1 = points[0]["threads"] if points else 1
    for p in points:
        p["efficiency"] = (p["iops"]["mean"] / p["threads"]) / (x1 / n1) if x1 > 0 else 0.0
    return points, locks


def _mean_clat(clats: list[Clat | None]) -> Clat:
    present = [c for c in clats if c]
    if not present:
        return {"p50": 0.0, "p99": 0.0, "p999": 0.0, "mean": 0.0}
    return {"p50": sum(c["p50"] for c in present) / len(present),
            "p99": sum(c["p99"] for c in present) / len(present),
            "p999": sum(c["p999"] for c in present) / len(present),
            "mean": sum(c["mean"] for c in present) / len(present)}


def _lock_shares(traced: list[Breakdown], tt: float) -> tuple[list[PointLock], list[PointLock]]:
    acc: dict[str, PointLock] = {}
    inode: dict[str, bool] = {}
    for b in traced:
        for lk in b["locks"]:
            row = acc.setdefault(lk["key"], {"key": lk["key"], "kind": lk["kind"],
                                             "path": lk["path"], "name": lk["name"],
                                             "share": 0.0, "total_ns": 0, "count": 0})
            inode[lk["key"]] = lk["inode"]
            row["share"] += lk["share"] * b["thread_time_ns"] / tt
            row["total_ns"] += lk["total_ns"]
            row["count"] += lk["count"]
    rows = sorted(acc.values(), key=lambda r: -r["share"])
    return [r for r in rows if inode[r["key"]]], [r for r in rows if not inode[r["key"]]]


def _merge_locks(locks: dict[str, LockTotals], run_locks: list[RunLock], n: int,
                 weight: float) -> None:
    for lk in run_locks:
        agg = locks.setdefault(lk["key"], {
            "key": lk["key"], "kind": lk["kind"], "name": lk["name"] or lk["kind"],
            "path": lk["path"], "dev": lk["dev"], "ino": lk["ino"], "addr": lk["addr"],
            "inode": lk["inode"], "count": 0, "total_ns": 0, "max_ns": 0, "hist": [],
            "share_by_threads": {}, "modes": defaultdict(float),
            "functions": defaultdict(float), "stack": [], "stack_ns": -1})
        agg["count"] += lk["count"]
        agg["total_ns"] += lk["total_ns"]
        agg["max_ns"] = max(agg["max_ns"], lk["max_ns"])
        add_hist(agg["hist"], lk["hist"])
        key = str(n)
        agg["share_by_threads"][key] = agg["share_by_threads"].get(key, 0.0) + lk["share"] * weight
        agg["modes"][lk["mode"]] += lk["total_ns"]
        if lk["function"]:
            agg["functions"][lk["function"]] += lk["total_ns"]
        if lk["total_ns"] > agg["stack_ns"]:
            agg["stack"], agg["stack_ns"] = lk["stack"], lk["total_ns"]


def finish_locks(locks: dict[str, LockTotals]) -> list[Lock]:
    """The locks as analysis.<fs>.locks has them: p99, mode and the functions that
    waited; explained_loss and what_if are the caller's (they need the points)."""
    out: list[Lock] = []
    for agg in locks.values():
        modes, funcs = agg["modes"], agg["functions"]
        out.append({
            "key": agg["key"], "kind": agg["kind"], "name": agg["name"], "path": agg["path"],
            "dev": agg["dev"], "ino": agg["ino"], "addr": agg["addr"], "inode": agg["inode"],
            "count": agg["count"], "total_ns": agg["total_ns"], "max_ns": agg["max_ns"],
            "share_by_threads": agg["share_by_threads"], "stack": agg["stack"],
            "mode": max(modes, key=lambda m: modes[m]) if modes else "unknown",
            "functions": sorted(funcs, key=lambda f: -funcs[f])[:3],
            "p99_ns": log2_percentile(agg["hist"], 99.0),
            "explained_loss": 0.0, "what_if": None,
        })
    return out
