"""The analyzer: from runs (workload stats + traces) to points, locks, causes and a verdict.

Analysis reads only results.json content, so it runs anywhere, without root.
"""

from __future__ import annotations

from collections import defaultdict

from ..schema import (
    LOCK_VERDICTS,
    Analysis,
    Cause,
    DeviceFigures,
    FsAnalysis,
    Host,
    Lock,
    Point,
    ResultsDoc,
    Run,
    UslFit,
    Verdict,
    window_of_run,
)
from .compare import compare
from .device_busy import device_figures
from .dio import classes_for, file_classes, no_writes
from .explain import what_if
from .holders import annotate, lock_releasers, lock_samples, releasers, split
from .iowq_sweep import sweep_hashed
from .kernel_release import parse_release, release_of
from .lock_mode import mode_share
from .remedy_outcome import lower_confidence
from .rules import FileFacts, Judgment, judge, kernel_rules
from .runs import lock_key
from .scaling import build_points, finish_locks
from .usl import fit_usl
from .verdict import decide, note_inode_lock, note_iowq, say_disagreement
from .waitclass import sweep_part


def analyze_fs(label: str, fstype: str, runs: list[Run], cpus: int | None = None,
               release: str | None = None, ioengine: str | None = None) -> FsAnalysis:
    """Everything analysis.<fs> holds (docs/results-schema.md) for one filesystem;
    `release`: the kernel it ran on (uname -r), whose locking rules apply; `ioengine`:
    the job's, when the sweep ran its engine (io_uring: io-wq is said even unmeasured)."""
    points, raw_locks = build_points(runs)
    locks = finish_locks(raw_locks)
    for lk in locks:
        if points:
            bound = what_if(points, lk["share_by_threads"], cpus)
            lk["explained_loss"], lk["what_if"] = bound["explained_loss"], bound["what_if"]
    locks.sort(key=lambda lk: (-lk["explained_loss"], -lk["total_ns"]))
    classes = file_classes(runs)
    judged = Judgment([], [])
    top_inode = next((lk for lk in locks if lk["inode"]), None)
    row = None
    if top_inode:
        row = classes_for(classes, top_inode["path"], top_inode["dev"], top_inode["ino"])
        facts = _file_facts(runs, top_inode["path"])
        facts["journal_share"] = max(
            ((p.get("time_share") or {}).get("journal", 0.0) for p in points), default=0.0)
        judged = judge(fstype, row or no_writes(), facts, parse_release(release))
    causes: list[Cause] = judged.causes
    usl: UslFit = fit_usl([p["threads"] for p in points], [p["iops"]["mean"] for p in points]) \
        if points else {"ok": False, "note": "no points"}
    # the measured mode of what the first cause blames, else of all the file's DIO writes
    mode = (causes[0]["mode"] if causes and causes[0]["mode"]
            else mode_share(row, "writes") if row else None)
    iowq = sweep_hashed(fstype, points, runs, cpus, parse_release(release))
    device = _top_device(runs, points)
    verdict = decide(fstype, points, locks, causes, cpus, mode=mode,
                     disagreements=judged.disagreements, iowq=iowq, device=device)
    note_iowq(verdict, iowq, ioengine == "io_uring")
    if top_inode and verdict["kind"] not in LOCK_VERDICTS:
        note_inode_lock(verdict, top_inode, points, causes)
    verdict["holders"], verdict["releasers"] = [], []
    if verdict["kind"] in LOCK_VERDICTS and locks:
        _add_holders(verdict, locks[0], runs, points[-1]["threads"])
    say_disagreement(verdict, judged.disagreements)
    disagreements = judged.disagreements + ([iowq["disagreement"]]
                                            if iowq and iowq["disagreement"] else [])
    out: FsAnalysis = {"fs": label, "fstype": fstype, "points": points, "usl": usl,
                       "locks": locks, "dio_classes": classes, "causes": causes,
                       "kernel_rules": kernel_rules(release, disagreements, fstype),
                       "verdict": verdict}
    if iowq:
        out["io_uring_hashed"] = iowq
    out["device"] = device
    return out


def _top_device(runs: list[Run], points: list[Point]) -> DeviceFigures | None:
    """The device figures of a traced run at the highest thread count, against its
    threads' block waits (the sweep's block_io part)."""
    if not points:
        return None
    run = next((r for r in runs if r.get("threads") == points[-1]["threads"]
                and r.get("trace")), None)
    trace = run.get("trace") if run else None
    if not run or not trace:
        return None
    waits = [r for r in trace.get("offcpu") or [] if r.get("reason") != "runqueue"
             and sweep_part(r) == "block_io"]
    return device_figures(trace, run.get("devices"), waits)


def _add_holders(verdict: Verdict, top: Lock, runs: list[Run], threads: int) -> None:
    """What the verdict lock's holder did, from the runs at the highest thread count."""
    traces = [t for run in runs if run.get("threads") == threads and (t := run.get("trace"))]
    samples = [s for t in traces for s in lock_samples(t, top["key"], lock_key)]
    wakes = [r for t in traces for r in lock_releasers(t, top["key"], lock_key)]
    if samples:
        annotate(verdict, split(samples), f"{top['name']} of {top['path'] or top['key']}",
                 releasers(wakes))


def _file_facts(runs: list[Run], path: str | None) -> FileFacts:
    """setuid/setgid and security xattrs of the file, as the sweep saw them."""
    for run in runs:
        for f in run.get("files") or []:
            if f.get("path") == path:
                facts: FileFacts = {"setuid": f.get("setuid", False),
                                    "setgid": f.get("setgid", False),
                                    "security_xattrs": f.get("security_xattrs", [])}
                return facts
    return {}


def analyze(doc: ResultsDoc) -> Analysis:
    """analysis of a sweep's results.json: one entry per filesystem plus the comparison
    (an attach's is ``{"attach": attach.analyze_attach(doc)}``)."""
    by_fs: dict[str, list[Run]] = defaultdict(list)
    for run in doc.get("runs") or []:
        by_fs[run["fs"]].append(run)
    host = doc.get("host") or {}
    fsinfo = host.get("filesystems") or {}
    per_fs: dict[str, FsAnalysis] = {}
    for label, runs in by_fs.items():
        fstype = (fsinfo.get(label) or {}).get("fstype") or label
        per_fs[label] = analyze_fs(label, fstype, runs, host.get("cpus"), release_of(doc),
                                   ((doc.get("workload") or {}).get("job") or {})
                                   .get("ioengine"))
        if any(run.get("server") for run in runs):
            _server_analysis(per_fs[label], runs, host)
    out: Analysis = dict(per_fs)
    out["comparison"] = compare(per_fs)
    if doc.get("verify"):
        lower_confidence(out, dict(doc["verify"]))   # what --verify found stays said
    return out


def _server_analysis(fs_analysis: FsAnalysis, runs: list[Run], host: Host) -> None:
    """A database preset's runs: where the server's time went at each client count, and
    the verdict from it (analysis.<fs>.server, server_time.py) in place of the one from
    the workload's own threads."""
    from .attach import analyze_attach
    from .server_time import server_points, server_verdict

    points = server_points(runs)
    hi = max((r for r in runs if r.get("trace")), key=lambda r: r["threads"], default=None)
    top = analyze_attach({"window": window_of_run(hi), "host": host, "db": None}) if hi else None
    fs_analysis["server"] = {"points": points,
                             "kind": next(r["server"]["kind"] for r in runs if r.get("server")),
                             "top_point_verdict": top["verdict"] if top else None}
    fs_analysis["verdict"] = server_verdict(points, top)
