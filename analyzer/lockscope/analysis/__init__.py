"""The analyzer: from runs (workload stats + traces) to points, locks, causes and a verdict.

Analysis reads only results.json content, so it runs anywhere, without root.
"""

from __future__ import annotations

from collections import defaultdict

from .compare import compare
from .dio import classes_for, file_classes
from .explain import what_if
from .holders import annotate, lock_samples, releasers, split
from .rules import match_causes
from .runs import lock_key
from .scaling import build_points, finish_locks
from .usl import fit_usl
from .verdict import decide


def analyze_fs(label: str, fstype: str, runs: list[dict], cpus: int | None = None) -> dict:
    """Everything analysis.<fs> holds (docs/results-schema.md) for one filesystem."""
    points, raw_locks = build_points(runs)
    locks = finish_locks(raw_locks)
    for lk in locks:
        lk.update(what_if(points, lk["share_by_threads"], cpus) if points else
                  {"explained_loss": 0.0, "what_if": None})
    locks.sort(key=lambda lk: (-lk["explained_loss"], -lk["total_ns"]))
    classes = file_classes(runs)
    causes: list[dict] = []
    top_inode = next((lk for lk in locks if lk["inode"]), None)
    if top_inode:
        row = classes_for(classes, top_inode["path"], top_inode["dev"], top_inode["ino"])
        facts = _file_facts(runs, top_inode["path"])
        facts["journal_share"] = max(
            ((p.get("time_share") or {}).get("journal", 0.0) for p in points), default=0.0)
        causes = match_causes(fstype, row, facts)
    usl = fit_usl([p["threads"] for p in points], [p["iops"]["mean"] for p in points]) \
        if points else {"ok": False, "note": "no points"}
    verdict = decide(fstype, points, locks, causes, cpus)
    verdict["holders"], verdict["releasers"] = [], []
    if verdict["kind"] in ("inode_lock_contention", "other_lock_contention") and locks:
        _add_holders(verdict, locks[0], runs, points[-1]["threads"])
    return {"fs": label, "fstype": fstype, "points": points, "usl": usl, "locks": locks,
            "dio_classes": classes, "causes": causes, "verdict": verdict}


def _add_holders(verdict: dict, top: dict, runs: list[dict], threads: int) -> None:
    """What the verdict lock's holder did, from the runs at the highest thread count."""
    traces = [run["trace"] for run in runs if run.get("threads") == threads and run.get("trace")]
    samples = [s for t in traces for s in lock_samples(t, top["key"], lock_key)]
    wakes = [r for t in traces for r in lock_samples(t, top["key"], lock_key, "releasers")]
    if samples:
        annotate(verdict, split(samples), f"{top['name']} of {top['path'] or top['key']}",
                 releasers(wakes))


def _file_facts(runs: list[dict], path: str | None) -> dict:
    """setuid/setgid and security xattrs of the file, as the sweep saw them."""
    for run in runs:
        for f in run.get("files") or []:
            if f.get("path") == path:
                return dict(f)
    return {}


def analyze(doc: dict) -> dict:
    """analysis for a whole results.json: one entry per filesystem plus the comparison;
    for an attach, ``{"attach": ...}`` (analysis.attach)."""
    if doc.get("kind") == "attach":
        from .attach import analyze_attach

        return {"attach": analyze_attach(doc)}
    by_fs: dict[str, list[dict]] = defaultdict(list)
    for run in doc.get("runs") or []:
        by_fs[run["fs"]].append(run)
    fsinfo = (doc.get("host") or {}).get("filesystems") or {}
    out: dict = {}
    for label, runs in by_fs.items():
        fstype = (fsinfo.get(label) or {}).get("fstype") or label
        out[label] = analyze_fs(label, fstype, runs, (doc.get("host") or {}).get("cpus"))
        if any(run.get("server") for run in runs):
            _server_analysis(out[label], runs, doc.get("host") or {})
    out["comparison"] = compare(out)
    return out


def _server_analysis(fs_analysis: dict, runs: list[dict], host: dict) -> None:
    """A database preset's runs: where the server's time went at each client count, and
    the verdict from it (analysis.<fs>.server, server_time.py) in place of the one from
    the workload's own threads."""
    from .attach import analyze_attach
    from .server_time import server_points, server_verdict

    points = server_points(runs)
    hi = max((r for r in runs if r.get("trace")), key=lambda r: r["threads"], default=None)
    top = analyze_attach({"runs": [hi], "host": host, "db": None}) if hi else None
    fs_analysis["server"] = {"points": points,
                             "kind": next(r["server"]["kind"] for r in runs if r.get("server")),
                             "top_point_verdict": (top or {}).get("verdict")}
    fs_analysis["verdict"] = server_verdict(points, top)
