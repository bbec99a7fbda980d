"""The report's view of a results.json: every figure the HTML and Markdown show.

Templates only read this model, never the raw document, so an absent or
oddly-shaped field is handled once, here, and both formats agree.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any, cast

from .. import __version__
from ..analysis.holders import not_seen_text
from ..analysis.lock_mode import mode_text
from ..analysis.recorder_cost import cost_sentence, shed_notes
from ..analysis.runs import DEFAULT_OPS_UNIT, ops_unit_of
from ..schema import CLASS_KEYS, DeviceFigures, ResultsDoc, Run
from . import fmt
from .device_panel import device_panel
from .flame.graphs import group_runs
from .iowq_line import sweep_hashed_text
from .notes import feature_rows, missing_notes


def _points_from_runs(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Scaling points for a recording without analysis (e.g. made before the analyzer
    ran): the analyzer's own figures, over the runs that are readable."""
    from ..analysis.scaling import build_points

    readable = []
    for run in runs:
        try:
            int(run.get("threads"))  # type: ignore[arg-type]  # None or junk: unreadable
        except (TypeError, ValueError):
            continue
        if isinstance(run.get("workload"), dict):
            readable.append(run)
    # the view reads points as plain dicts, as it reads them from any document
    points = build_points(cast("list[Run]", readable))[0] if readable else []
    return cast("list[dict[str, Any]]", points)


# Every verdict kind (tests/unit/report/test_verdict_tables.py): a sweep's own, and the
# attach kinds a --preset sweep's server verdict gives.
VERDICTS = {
    "scales": ("scales", "good"),
    "inode_lock_contention": ("inode lock contention", "bad"),
    "other_lock_contention": ("lock contention", "bad"),
    "device_bound": ("device-bound", "warn"),
    "io_held_before_device": ("I/O held before the device", "bad"),
    "cpu_bound": ("CPU-bound", "warn"),
    "inconclusive": ("inconclusive", "unknown"),
    "io_uring_serialized": ("io_uring writes serialized in io-wq", "bad"),
    "idle": ("idle", "good"),
    "user_lock_contention": ("user-space lock contention", "bad"),
    "durability_bound": ("durability-bound", "warn"),
    "journal_bound": ("journal-bound", "warn"),
    "memory_pressure": ("memory pressure", "bad"),
}
REASONS = {
    "extending": "writes extend i_size",
    "holes": "writes land in holes (not pure overwrites)",
    "unwritten": "writes land on preallocated (unwritten) extents",
    "unaligned": "unaligned writes",
    "unaligned_unwritten": "unaligned writes onto unwritten extents",
    "buffered": "buffered writes take the inode lock exclusive",
    "not_nosec": "inode is not IS_NOSEC (setuid bits or security xattrs)",
    "dsync_commit": "O_DSYNC writes wait for a journal commit",
    "io_uring_hashed": "io-wq runs the file's writes one at a time (hashed by the inode)",
}
TOP_LOCKS = 12


@dataclass
class FsView:
    """One filesystem's part of the report."""

    name: str
    facts: dict[str, Any]
    points: list[dict[str, Any]]
    from_analysis: bool
    usl: dict[str, Any] | None = None
    verdict: dict[str, Any] | None = None
    verdict_label: str = "no verdict"
    verdict_class: str = "unknown"
    reasons: list[str] = field(default_factory=list)
    causes: list[dict[str, Any]] = field(default_factory=list)
    rules_notes: list[str] = field(default_factory=list)   # kernel_rules: note, disagreements
    iowq: str = ""                      # io-wq's hashed queue (report/iowq_line.py)
    locks: list[dict[str, str]] = field(default_factory=list)
    locks_total: int = 0
    dio: list[dict[str, str]] = field(default_factory=list)
    dio_idle: int = 0                  # files in dio_classes with no I/O at all (not shown)
    point_rows: list[dict[str, str]] = field(default_factory=list)
    server_rows: list[dict[str, str]] = field(default_factory=list)  # database presets
    # the device under the most threads' block waits (report/device_panel.py)
    device: list[tuple[str, str]] = field(default_factory=list)
    headline: str = ""
    usl_text: str = ""
    ops_unit: str = DEFAULT_OPS_UNIT   # TPS for a database preset's client


@dataclass
class ReportModel:
    """Everything a report shows, already formatted."""

    title: str
    generator: str
    source: str
    created: str
    partial: bool
    scenario: str
    description: str
    job: list[tuple[str, str]]
    threads: list[int]
    repeat: Any
    runtime_s: Any
    filesystems: list[FsView]
    comparison: dict[str, Any] | None
    notes: list[str]
    host: list[tuple[str, str]]
    fs_facts: list[dict[str, str]]
    features: list[dict[str, Any]]
    reproduce: list[str]
    command: str
    flame_notes: list[str] = field(default_factory=list)
    recorder_cost: str | None = None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _stat(point: dict[str, Any], key: str) -> dict[str, Any]:
    v = point.get(key)
    if isinstance(v, dict):
        return v
    return {"mean": v} if fmt.as_float(v) is not None else {}


def _point_row(p: dict[str, Any]) -> dict[str, str]:
    bw = _stat(p, "bw_bytes")
    iops = _stat(p, "iops")
    clat = _dict(p.get("clat_ns"))
    mib = fmt.as_float(p.get("mib_s"))
    if mib is None and fmt.as_float(bw.get("mean")) is not None:
        mib = bw["mean"] / 2**20
    spread = ""
    if fmt.as_float(bw.get("min")) is not None and fmt.as_float(bw.get("max")) is not None:
        spread = f"{bw['min'] / 2**20:,.1f}–{bw['max'] / 2**20:,.1f}"
    share = _dict(p.get("time_share"))
    return {"threads": str(p.get("threads", "-")), "repeats": str(p.get("repeats", "-")),
            "mib_s": fmt.number(mib), "mib_range": spread or "-",
            "iops": fmt.count(iops.get("mean")), "efficiency": fmt.share(p.get("efficiency")),
            "p50": fmt.duration_ns(clat.get("p50")), "p99": fmt.duration_ns(clat.get("p99")),
            "p999": fmt.duration_ns(clat.get("p999")),
            "inode_lock": fmt.share(share.get("inode_lock")) if share else "-",
            "traced": "yes" if p.get("traced", True) else "no"}


def _lock_row(lk: dict[str, Any], top_threads: int | None) -> dict[str, str]:
    name = lk.get("name") or lk.get("kind") or lk.get("key") or "?"
    kind = lk.get("kind")
    if name == "unknown" and lk.get("addr"):
        label = f"unknown lock at {lk['addr']}"     # no symbol: its address tells locks apart
    elif not kind or kind in (name, "unknown"):
        label = name
    else:
        label = f"{name} ({kind})"
    share_by = _dict(lk.get("share_by_threads"))
    top_share = share_by.get(str(top_threads)) if top_threads is not None else None
    funcs = [str(f) for f in _list(lk.get("functions"))]
    return {"lock": str(label), "path": str(lk.get("path") or "-"),
            "mode": str(lk.get("mode") or "unknown"), "count": fmt.count(lk.get("count")),
            "total": fmt.duration_ns(lk.get("total_ns")), "max": fmt.duration_ns(lk.get("max_ns")),
            "p99": fmt.duration_ns(lk.get("p99_ns")),
            "functions": ", ".join(funcs) or "-",
            "share_top": fmt.share(top_share, 1),
            "explained": fmt.share(lk.get("explained_loss")),
            "dev_ino": (f"{lk.get('dev')} ino {lk.get('ino')}" if lk.get("ino") is not None
                        else "-"),
            "stack": "\n".join(str(f) for f in _list(lk.get("stack")))}


def _pct_of(n: Any, total: Any) -> str:
    a, b = fmt.as_float(n), fmt.as_float(total)
    if a is None:
        return "-"
    if not b:
        return fmt.count(a)
    return f"{fmt.count(a)} ({100 * a / b:.0f}%)"


def _dio_row(d: dict[str, Any]) -> dict[str, str]:
    w = d.get("writes")
    row = {"path": str(d.get("path") or "-"),
           "file": (f"{d.get('dev')} ino {d.get('ino')}" if d.get("ino") is not None else "-"),
           "writes": fmt.count(w), "write_bytes": fmt.size_bytes(d.get("write_bytes")),
           "reads": fmt.count(d.get("reads")),
           "buffered_writes": fmt.count(d.get("buffered_writes")),
           "latency": fmt.duration_ns(d.get("latency_mean_ns")) if fmt.as_float(w) else "-"}
    for key in CLASS_KEYS:
        row[key] = _pct_of(d.get(key), w)
    return row


def ops_unit(runs: list[dict[str, Any]]) -> str:
    """What one operation is: I/Os for the engine and tools, transactions for a database
    client (the sweep sets ``workload.ops_unit``)."""
    for r in runs:
        if _dict(r.get("workload")).get("ops_unit"):
            return ops_unit_of(r.get("workload"))
    return DEFAULT_OPS_UNIT


def _usl_text(usl: dict[str, Any] | None, unit: str = "IOPS") -> str:
    if not usl:
        return "no USL fit in results.json"
    if not usl.get("ok"):
        return f"no USL fit: {usl.get('note') or 'fit failed'}"
    parts = [f"σ = {fmt.number(usl.get('sigma'), 3)}", f"κ = {fmt.number(usl.get('kappa'), 4)}",
             f"λ = {fmt.number(usl.get('lambda'), 0)} {unit} per thread"]
    peak = fmt.as_float(usl.get("peak_threads"))
    if peak is not None and peak >= 1:
        parts.append(f"peak at N ≈ {fmt.number(peak, 1)}")
    elif peak is not None:
        parts.append("peak at 1 thread (adding threads only loses)")
    if fmt.as_float(usl.get("r2")) is not None:
        parts.append(f"R² = {fmt.number(usl.get('r2'), 3)}")
    return ", ".join(parts) + (f" ({usl['note']})" if usl.get("note") else "")


def _headline(points: list[dict[str, Any]], unit: str = "IOPS") -> str:
    if len(points) < 2:
        return ""
    lo, hi = points[0], points[-1]
    a, b = fmt.as_float(_stat(lo, "iops").get("mean")), fmt.as_float(_stat(hi, "iops").get("mean"))
    if not a or b is None:
        return ""
    eff = fmt.share(hi.get("efficiency"))
    return (f"{b / a:.2f}x {unit} from {lo.get('threads')} to {hi.get('threads')} threads "
            f"(efficiency {eff} at {hi.get('threads')})")


def fs_view(name: str, analysis: dict[str, Any] | None, runs: list[dict[str, Any]],
            facts: dict[str, Any]) -> FsView:
    """Build one filesystem's view from its analysis, or from its runs when that is absent."""
    a = _dict(analysis)
    points = [p for p in _list(a.get("points")) if isinstance(p, dict)]
    from_analysis = bool(points)
    if not points:
        points = _points_from_runs(runs)
    points.sort(key=lambda p: fmt.as_float(p.get("threads")) or 0)
    v = FsView(name=name, facts=facts, points=points, from_analysis=from_analysis)
    v.ops_unit = ops_unit(runs)
    v.usl = _dict(a.get("usl")) or None
    v.usl_text = _usl_text(v.usl, v.ops_unit)
    verdict = _dict(a.get("verdict"))
    if verdict:
        v.verdict = {
            "kind": verdict.get("kind") or "inconclusive",
            "summary": verdict.get("summary") or "",
            "lock": verdict.get("lock"), "path": verdict.get("path"),
            "mode": verdict.get("mode"),
            "explained_loss": fmt.share(verdict.get("explained_loss")),
            "confidence": verdict.get("confidence") or "-",
            "kernel_function": verdict.get("kernel_function"),
            "evidence": [str(e) for e in _list(verdict.get("evidence")) if e],
            "remedies": [str(r) for r in _list(verdict.get("remedies")) if r],
            # what the lock's holder was doing: "journal 72% (a ← b ← c), block_io 16%"
            "holders": _holders_text(verdict),
        }
        v.verdict_label, v.verdict_class = VERDICTS.get(
            v.verdict["kind"], (str(v.verdict["kind"]).replace("_", " "), "unknown"))
        v.reasons = [REASONS.get(r, str(r)) for r in _list(verdict.get("reasons"))]
    v.causes = [{"reason": REASONS.get(str(c.get("reason")), str(c.get("reason") or "")),
                 "rule": str(c.get("rule") or ""),
                 "kernel_source": str(c.get("kernel_source") or ""),
                 "kernels": str(c.get("kernel_range") or ""),
                 "measured": mode_text(c["mode"]) if isinstance(c.get("mode"), dict) else "",
                 "evidence": str(c.get("evidence") or ""),
                 "fraction": fmt.share(c.get("fraction"))}
                for c in [*_list(a.get("causes")), _dict(a.get("io_uring_hashed")).get("cause")]
                if isinstance(c, dict)]
    v.rules_notes = _rules_notes(a)
    v.iowq = sweep_hashed_text(_dict(a.get("io_uring_hashed")))
    top = points[-1].get("threads") if points else None
    locks = [lk for lk in _list(a.get("locks")) if isinstance(lk, dict)]
    v.locks_total = len(locks)
    v.locks = [_lock_row(lk, top) for lk in locks[:TOP_LOCKS]]
    dio = [d for d in _list(a.get("dio_classes")) if isinstance(d, dict)]
    # Inodes the recorder saw but that had no I/O in the timed phase are noise here.
    busy = [d for d in dio if any(fmt.as_float(d.get(k)) for k in
                                  ("writes", "buffered_writes", "reads"))]
    v.dio = [_dio_row(d) for d in busy]
    v.dio_idle = len(dio) - len(busy)
    v.point_rows = [_point_row(p) for p in points]
    v.headline = _headline(points, v.ops_unit)
    from .server_rows import server_rows

    v.server_rows = server_rows(_dict(a.get("server")))
    v.device = device_panel(cast(DeviceFigures, a.get("device")))
    return v


def _holders_text(verdict: dict[str, Any]) -> str:
    """'journal 72% (a ← b ← c), block_io 16%, not seen (40 snapshots) 12%'."""
    shown = [x for x in _list(verdict.get("holders")) if isinstance(x, dict)
             and (fmt.as_float(x.get("share")) or 0) >= 0.01][:4]
    parts = [f"{h.get('activity')} {fmt.share(h.get('share'))}"
             + (f" ({' ← '.join(map(str, h['frames']))})" if i == 0 and h.get("frames") else "")
             for i, h in enumerate(shown)]
    sampled = _dict(verdict.get("holders_sampled"))
    if sampled.get("not_seen_snapshots"):
        parts.append(f"{not_seen_text(int(sampled['not_seen_snapshots']))} "
                     f"{fmt.share(sampled.get('not_seen_share'))}")
    return ", ".join(parts)


def _rules_notes(a: dict[str, Any]) -> list[str]:
    rules = _dict(a.get("kernel_rules"))
    return [str(n) for n in [rules.get("note"), *_list(rules.get("disagreements"))] if n]


def _host_rows(host: dict[str, Any]) -> list[tuple[str, str]]:
    rows = []
    for key, label in (("hostname", "host"), ("kernel", "kernel"), ("machine", "machine"),
                       ("cpus", "CPUs")):
        if host.get(key) is not None:
            rows.append((label, str(host[key])))
    if host.get("memory_bytes") is not None:
        rows.append(("memory", fmt.size_bytes(host["memory_bytes"])))
    known = {"hostname", "kernel", "machine", "cpus", "memory_bytes", "filesystems", "features"}
    for key, value in host.items():
        if key not in known and isinstance(value, (str, int, float, bool)):
            rows.append((key.replace("_", " "), str(value)))
    return rows


def _fs_fact_row(name: str, f: dict[str, Any]) -> dict[str, str]:
    return {"fs": name, "fstype": str(f.get("fstype") or "-"),
            "device": str(f.get("device") or "-"),
            "backing": " on ".join(str(x) for x in (f.get("backing"), f.get("backing_device"))
                                   if x) or "-",
            "mountpoint": str(f.get("mountpoint") or "-"),
            "mount_options": str(f.get("mount_options") or "-"),
            "block_size": fmt.size_bytes(f.get("block_size")),
            "image": fmt.size_bytes(f.get("image_bytes")),
            "made_by_lockscope": ("yes" if f["made_by_lockscope"] else "no")
            if isinstance(f.get("made_by_lockscope"), bool) else "-"}


def _comparison(comp: Any) -> dict[str, Any] | None:
    c = _dict(comp)
    if not c:
        return None
    rows = []
    for fs, e in _dict(c.get("filesystems")).items():
        e = _dict(e)
        rows.append({"fs": fs, "speedup": fmt.ratio(e.get("speedup")),
                     "efficiency": fmt.share(e.get("efficiency")),
                     "verdict": VERDICTS.get(str(e.get("verdict")),
                                             (str(e.get("verdict") or "-"), ""))[0]})
    return {"threads": c.get("threads"), "best": c.get("best"), "ratio": fmt.ratio(c.get("ratio")),
            "difference_lock": c.get("difference_lock"), "summary": c.get("summary") or "",
            "rows": rows}


def build_model(doc: ResultsDoc, source: str = "") -> ReportModel:
    """The whole report model of one results.json document."""
    host = _dict(doc.get("host"))
    wl = _dict(doc.get("workload"))
    analysis = _dict(doc.get("analysis"))
    grouped = group_runs(doc)
    names = list(grouped)
    for fs in analysis:
        if fs != "comparison" and isinstance(analysis[fs], dict) and fs not in names:
            names.append(fs)
    fs_facts = _dict(host.get("filesystems"))
    views = []
    for fs in names:
        runs = [r for n in sorted(grouped.get(fs, {})) for r in grouped[fs][n]]
        views.append(fs_view(fs, analysis.get(fs), runs, _dict(fs_facts.get(fs))))
    threads = sorted({int(p["threads"]) for v in views for p in v.points
                      if fmt.as_float(p.get("threads")) is not None})
    job = [(str(k), str(v)) for k, v in _dict(wl.get("job")).items()]
    cmd = doc.get("command")
    command = shlex.join(str(c) for c in cmd) if isinstance(cmd, list) else str(cmd or "")
    given: Any = doc.get("reproduce")
    reproduce = [given] if isinstance(given, str) else [str(r) for r in _list(given)]
    scenario = str(wl.get("scenario") or "recording")
    runs_list = cast("list[Run]", [r for r in _list(doc.get("runs")) if isinstance(r, dict)])
    return ReportModel(
        title=f"lockscope: {scenario} on {', '.join(names) or 'no filesystem'}",
        generator=f"lockscope report {__version__}", source=source,
        created=str(doc.get("created_wall") or "-"), partial=bool(doc.get("partial")),
        scenario=scenario, description=str(wl.get("description") or ""), job=job,
        threads=threads or [int(t) for t in _list(wl.get("threads")) if isinstance(t, int)],
        repeat=wl.get("repeat", "-"), runtime_s=wl.get("runtime_s", "-"),
        filesystems=views, comparison=_comparison(analysis.get("comparison")),
        notes=missing_notes(doc) + shed_notes(runs_list), host=_host_rows(host),
        fs_facts=[_fs_fact_row(k, _dict(v)) for k, v in fs_facts.items()],
        features=feature_rows(doc), reproduce=reproduce, command=command,
        recorder_cost=cost_sentence(runs_list))
