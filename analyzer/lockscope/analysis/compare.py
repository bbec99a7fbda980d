"""Side by side: the same workload on several filesystems at the highest common thread count."""

from __future__ import annotations

from ..schema import Comparison, ComparisonRow, FsAnalysis

# A lock whose share of thread time differs by less than this is not named.
MIN_DIFFERENCE = 0.01


def compare(per_fs: dict[str, FsAnalysis]) -> Comparison | None:
    usable = {fs: a for fs, a in per_fs.items() if a.get("points")}
    if len(usable) < 2:
        return None
    common = set.intersection(*({p["threads"] for p in a["points"]} for a in usable.values()))
    if len(common) < 2:
        return None
    n, n0 = max(common), min(common)
    rows: dict[str, ComparisonRow] = {}
    shares: dict[str, dict[str, float]] = {}
    for fs, a in usable.items():
        pts = {p["threads"]: p for p in a["points"]}
        x0, x = pts[n0]["iops"]["mean"], pts[n]["iops"]["mean"]
        rows[fs] = {"speedup": x / x0 if x0 else 0.0, "efficiency": pts[n]["efficiency"],
                    "iops": x, "mib_s": pts[n]["mib_s"], "verdict": a["verdict"]["kind"]}
        shares[fs] = {lk["kind"]: lk["share"] for lk in pts[n].get("inode_locks") or []}
        for lk in pts[n].get("other_locks") or []:
            shares[fs][lk["name"] or lk["key"]] = lk["share"]
    names: set[str] = set().union(*shares.values())
    best = max(rows, key=lambda fs: rows[fs]["speedup"])
    worst = min(rows, key=lambda fs: rows[fs]["speedup"])
    ratio = rows[best]["speedup"] / rows[worst]["speedup"] if rows[worst]["speedup"] else None

    def spread(k: str) -> float:
        return (max(s.get(k, 0.0) for s in shares.values())
                - min(s.get(k, 0.0) for s in shares.values()))

    diff_lock = max(names, key=spread, default=None)
    if diff_lock is not None and spread(diff_lock) < MIN_DIFFERENCE:
        diff_lock = None
    summary = (f"at {n} threads {best} reaches {rows[best]['speedup']:.2f}x its {n0}-thread "
               f"throughput and {worst} {rows[worst]['speedup']:.2f}x")
    if diff_lock:
        summary += "; the wait that differs most is " + diff_lock + " (" + ", ".join(
            f"{fs} {shares[fs].get(diff_lock, 0):.0%}" for fs in rows) + " of thread time)"
    else:
        summary += (f"; no lock wait differs between them by {MIN_DIFFERENCE:.0%} of thread "
                    "time or more")
    return {"threads": n, "base_threads": n0, "filesystems": rows, "best": best,
            "ratio": ratio, "difference_lock": diff_lock, "summary": summary + "."}
