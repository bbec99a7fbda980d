"""Per-thread-count points of one filesystem: throughput spread, efficiency, time shares."""

from __future__ import annotations

from collections import defaultdict

from .runs import trace_breakdown, worker_tids, workload_figures
from .stats import add_hist, log2_percentile, spread

SHARE_KEYS = ("oncpu", "runqueue", "inode_lock", "other_lock", "block_io", "journal",
              "other_offcpu")


def _duration_ns(run: dict) -> float:
    lk = (run.get("workload") or {}).get("lockscope") or {}
    t = lk.get("timed_phase") or {}
    if t.get("duration_ns"):
        return float(t["duration_ns"])
    jobs = (run.get("workload") or {}).get("jobs") or [{}]
    return float(jobs[0].get("job_runtime", 0)) * 1e6


def build_points(runs: list[dict]) -> tuple[list[dict], dict]:
    """Points ascending by threads, plus the locks aggregated over all runs by key."""
    by_n: dict[int, list[dict]] = defaultdict(list)
    for run in runs:
        by_n[int(run["threads"])].append(run)
    points = []
    locks: dict[str, dict] = {}
    for n in sorted(by_n):
        figs = [workload_figures(r) for r in by_n[n]]
        breakdowns = [trace_breakdown(r.get("trace"), n, _duration_ns(r), worker_tids(r))
                      for r in by_n[n]]
        traced = [b for b in breakdowns if b]
        point = {
            "threads": n, "repeats": len(figs),
            "iops": spread(f["iops"] for f in figs),
            "bw_bytes": spread(f["bw_bytes"] for f in figs),
            "clat_ns": _mean_clat([f["clat_ns"] for f in figs]),
            "traced": bool(traced),
        }
        point["mib_s"] = point["bw_bytes"]["mean"] / 2**20
        if traced:
            tt = sum(b["thread_time_ns"] for b in traced)
            point["thread_time_ns"] = tt / len(traced)
            point["time_share"] = {
                k: sum(b["time_share"][k] * b["thread_time_ns"] for b in traced) / tt
                for k in SHARE_KEYS}
            point["inode_locks"], point["other_locks"] = _lock_shares(traced, tt)
            for b in traced:
                _merge_locks(locks, b["locks"], n, b["thread_time_ns"] / tt)
        points.append(point)
    x1 = points[0]["iops"]["mean"] if points else 0.0
    n1 = points[0]["threads"] if points else 1
    for p in points:
        p["efficiency"] = (p["iops"]["mean"] / p["threads"]) / (x1 / n1) if x1 > 0 else 0.0
    return points, locks


def _mean_clat(clats: list[dict]) -> dict:
    keys = ("p50", "p99", "p999", "mean")
    present = [c for c in clats if c]
    return {k: sum(c.get(k, 0.0) for c in present) / len(present) for k in keys} if present \
        else {k: 0.0 for k in keys}


def _lock_shares(traced: list[dict], tt: float) -> tuple[list[dict], list[dict]]:
    acc: dict[str, dict] = {}
    for b in traced:
        for lk in b["locks"]:
            row = acc.setdefault(lk["key"], {"key": lk["key"], "kind": lk["kind"],
                                             "path": lk["path"], "name": lk["name"],
                                             "inode": lk["inode"], "share": 0.0,
                                             "total_ns": 0, "count": 0})
            row["share"] += lk["share"] * b["thread_time_ns"] / tt
            row["total_ns"] += lk["total_ns"]
            row["count"] += lk["count"]
    rows = sorted(acc.values(), key=lambda r: -r["share"])
    inode = [{k: v for k, v in r.items() if k != "inode"} for r in rows if r["inode"]]
    other = [{k: v for k, v in r.items() if k != "inode"} for r in rows if not r["inode"]]
    return inode, other


def _merge_locks(locks: dict, run_locks: list[dict], n: int, weight: float) -> None:
    for lk in run_locks:
        agg = locks.setdefault(lk["key"], {
            "key": lk["key"], "kind": lk["kind"], "name": lk["name"] or lk["kind"],
            "path": lk["path"], "dev": lk["dev"], "ino": lk["ino"], "addr": lk["addr"],
            "inode": lk["inode"], "count": 0, "total_ns": 0, "max_ns": 0, "hist": [],
            "share_by_threads": {}, "_modes": defaultdict(float), "_funcs": defaultdict(float),
            "stack": [], "_stack_ns": -1})
        agg["count"] += lk["count"]
        agg["total_ns"] += lk["total_ns"]
        agg["max_ns"] = max(agg["max_ns"], lk["max_ns"])
        add_hist(agg["hist"], lk["hist"])
        key = str(n)
        agg["share_by_threads"][key] = agg["share_by_threads"].get(key, 0.0) + lk["share"] * weight
        agg["_modes"][lk["mode"]] += lk["total_ns"]
        if lk["function"]:
            agg["_funcs"][lk["function"]] += lk["total_ns"]
        if lk["total_ns"] > agg["_stack_ns"]:
            agg["stack"], agg["_stack_ns"] = lk["stack"], lk["total_ns"]


def finish_locks(locks: dict) -> list[dict]:
    """Drop accumulator fields; add p99, mode and the functions that waited."""
    out = []
    for agg in locks.values():
        modes = agg.pop("_modes")
        funcs = agg.pop("_funcs")
        agg.pop("_stack_ns")
        agg["mode"] = max(modes, key=modes.get) if modes else "unknown"
        agg["functions"] = sorted(funcs, key=lambda f: -funcs[f])[:3]
        agg["p99_ns"] = log2_percentile(agg.pop("hist"), 99.0)
        out.append(agg)
    return out
