"""Did a remedy remove the wait the verdict blamed? ``sweep --verify``'s outcome of one
remedied rerun, from the analysis of the sweep and of the rerun (the same scaling
analysis, analysis/scaling.py, and verdict, analysis/verdict.py, for both).

The blamed lock's share at a thread count is the share of the workload's thread time
spent waiting on locks of the blamed lock's name (i_rwsem, ...) and kind (inode or not),
summed over every file: a file-per-thread rerun spreads the waits over one lock per file.

- *verified*: at the highest thread count the blamed lock's share is below GONE_SHARE of
  thread time, and throughput scales: the rerun's own verdict is *scales*
  (efficiency >= verdict.SCALES_EFFICIENCY), or *cpu_bound* with more threads than CPUs
  (the machine, not a wait, is the limit), and its efficiency at the highest thread
  count is above the sweep's.
- *partly*: the share fell (below GONE_SHARE, or to at most FELL_RATIO of the sweep's)
  but throughput does not scale: the rerun's own verdict names what limits it now.
- *not verified*: the share stayed; the diagnosis loses a step of confidence
  (lower_confidence) when none of the remedies run for it was verified or partly.
"""

from __future__ import annotations

from typing import Any

from ..schema import LOCK_VERDICTS, Analysis, FsAnalysis, Point, VerdictKind
from .verdict import SCALES_EFFICIENCY

GONE_SHARE = 0.05     # of thread time at the highest thread count: the wait is gone
FELL_RATIO = 0.5      # at most this fraction of the sweep's share: the wait fell
CONFIDENCE_STEPS = ("low", "medium", "high")
THRESHOLDS = {"gone_share": GONE_SHARE, "fell_ratio": FELL_RATIO,
              "scales_efficiency": SCALES_EFFICIENCY}


def blamed_lock(fs: FsAnalysis) -> dict[str, Any] | None:
    """The lock a lock verdict blames: its name and whether it is an inode lock."""
    verdict = fs.get("verdict") or {}
    if verdict.get("kind") not in LOCK_VERDICTS or not fs.get("locks"):
        return None
    top = fs["locks"][0]
    return {"name": top["name"], "inode": bool(top["inode"]), "path": top["path"]}


def lock_share(point: Point, lock: dict[str, Any]) -> float | None:
    """The blamed lock's share of thread time at a point (None: not traced)."""
    if not point.get("traced"):
        return None
    rows = (point.get("inode_locks") if lock["inode"] else point.get("other_locks")) or []
    return sum(r["share"] for r in rows if (r.get("name") or r.get("kind")) == lock["name"])


def curve(fs: FsAnalysis, lock: dict[str, Any]) -> dict[str, list[Any]]:
    """Threads, IOPS, efficiency and the blamed lock's share per point."""
    points = fs.get("points") or []
    return {"threads": [p["threads"] for p in points],
            "iops": [round(p["iops"]["mean"], 1) for p in points],
            "efficiency": [round(p["efficiency"], 4) for p in points],
            "lock_share": [None if (s := lock_share(p, lock)) is None else round(s, 4)
                           for p in points]}


def _scales(after: FsAnalysis, cpus: int | None) -> bool:
    verdict = after.get("verdict") or {}
    points = after.get("points") or []
    top = points[-1]["threads"] if points else 0
    return verdict.get("kind") == VerdictKind.SCALES or (
        verdict.get("kind") == VerdictKind.CPU_BOUND and cpus is not None and top > cpus)


def outcome(before: FsAnalysis, after: FsAnalysis, lock: dict[str, Any],
            cpus: int | None) -> dict[str, Any]:
    """``verify.filesystems.<fs>.remedies[]``'s outcome, line and limit."""
    b, a = curve(before, lock), curve(after, lock)
    top = a["threads"][-1] if a["threads"] else None
    share_b = b["lock_share"][b["threads"].index(top)] if top in b["threads"] else None
    if share_b is None:
        share_b = b["lock_share"][-1] if b["lock_share"] else None
    share_a = a["lock_share"][-1] if a["lock_share"] else None
    verdict = after.get("verdict") or {}
    res: dict[str, Any] = {"share_before": share_b, "share_after": share_a,
                           "efficiency_before": b["efficiency"][-1] if b["efficiency"] else None,
                           "efficiency_after": a["efficiency"][-1] if a["efficiency"] else None,
                           "limit": None}
    if share_a is None or len(a["threads"]) < 2:
        res.update(outcome="not_measured", line="the remedied run has no trace at two thread "
                   "counts: the wait was not measured")
        return res
    name = f"{lock['name']} ({share_b:.0%} -> {share_a:.0%} of thread time at {top} threads)" \
        if share_b is not None else f"{lock['name']} ({share_a:.0%} at {top} threads)"
    gone = share_a < GONE_SHARE
    fell = gone or (share_b is not None and share_a <= FELL_RATIO * share_b)
    better = (res["efficiency_before"] is None
              or res["efficiency_after"] > res["efficiency_before"])
    eff = f"efficiency {res['efficiency_before']:.0%} -> {res['efficiency_after']:.0%}" \
        if res["efficiency_before"] is not None else f"efficiency {res['efficiency_after']:.0%}"
    if gone and better and _scales(after, cpus):
        res.update(outcome="verified", line=f"verified: the wait is gone, {name}, and "
                   f"throughput scales ({eff}; the rerun's verdict: {verdict.get('kind')})")
    elif fell:
        res["limit"] = verdict.get("summary") or str(verdict.get("kind"))
        res.update(outcome="partly", line=f"partly: the wait fell, {name}, but {eff}; now "
                   f"{verdict.get('kind')}: {res['limit']}")
    else:
        res.update(outcome="not_verified", line=f"not verified: the wait stayed, {name}; "
                   "the diagnosis is lowered in confidence")
    return res


def lower_confidence(analysis: Analysis, verify: dict[str, Any]) -> None:
    """A verdict whose remedies were all run and none moved the wait loses a step of
    confidence, and says why (also when results.json is analyzed again)."""
    for fs, entry in (verify.get("filesystems") or {}).items():
        ran = [r for r in entry.get("remedies") or [] if r.get("outcome") in
               ("verified", "partly", "not_verified")]
        fs_analysis: Any = analysis.get(fs)
        if not ran or any(r["outcome"] != "not_verified" for r in ran) or \
                not isinstance(fs_analysis, dict) or "verdict" not in fs_analysis:
            continue
        verdict = fs_analysis["verdict"]
        if any(e.startswith("sweep --verify:") for e in verdict["evidence"]):
            continue
        step = CONFIDENCE_STEPS.index(verdict["confidence"]) \
            if verdict["confidence"] in CONFIDENCE_STEPS else 0
        verdict["confidence"] = CONFIDENCE_STEPS[max(step - 1, 0)]
        verdict["evidence"].append(
            "sweep --verify: the remedy did not remove the wait ("
            + "; ".join(r["remedy"] for r in ran) + "), so this diagnosis is less certain")
