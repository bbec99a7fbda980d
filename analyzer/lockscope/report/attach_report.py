"""The report of an attach (results.json with ``"kind": "attach"``): verdict, wait
classes, files by role, per-second plots and the window's flame graphs.

render_report() hands attach recordings here; the files written have the
sweep report's names (report.html / report.md / report.json, flame/).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from markupsafe import Markup

from .. import __version__
from ..analysis.attach import analyze_attach
from ..analysis.stack_shares import stacks_phrase
from ..schema import CLASS_KEYS, AttachAnalysis, ResultsDoc
from ..schema import attach_analysis as stored_analysis
from .device_panel import device_panel
from .fmt import duration_ns, size_bytes
from .html import inline_svg
from .iowq_line import hashed_text
from .model import VERDICTS
from .outputs import MARKER

# Every verdict kind's colour: the sweep report's (tests/unit/report/test_verdict_tables.py).
VERDICT_CLASS = {kind: colour for kind, (_label, colour) in VERDICTS.items()}


def attach_analysis(doc: ResultsDoc) -> AttachAnalysis:
    """analysis.attach of the document, recomputed when absent."""
    a = stored_analysis(doc.get("analysis"))
    return a if isinstance(a, dict) and "classes" in a else analyze_attach(doc)


def _calls(f: Any, count: str, ns: str) -> str:
    """``12,345 (1.2 s)``; n/a in a results.json from before the figure existed."""
    if count not in f:
        return "n/a"
    return f"{f[count]:,}" + (f" ({duration_ns(f[ns])})" if f.get(ns) else "")


def attach_model(doc: ResultsDoc, source: str = "") -> dict[str, Any]:
    """Everything the attach templates show, already formatted."""
    a = attach_analysis(doc)
    t = doc.get("target") or {}
    at = doc.get("attach") or {}
    wall = a.get("window_s") or 0.0
    window = a.get("observed_s") or wall  # thread averages: over the observed time
    v = a.get("verdict") or {}
    classes = [{"name": c["name"], "threads": f"{c['threads']:.2f}",
                "share": f"{c['share']:.0%}",
                "loss": "not lost" if c["class"] == "idle" else f"{c['loss_share']:.0%}",
                "how": "; ".join(f"{h['method']}: {h['detail']} ({duration_ns(h['ns'])})"
                                 for h in c["how"][:3])}
               for c in a.get("classes") or [] if c["ns"] > 0]
    files = [{"path": f["path"] or f"{f['dev']}:{f['ino']}", "role": f["label"],
              "writes": f"{f['dio_writes']:,} DIO / {f['buffered_writes']:,} buffered",
              "bytes": size_bytes(f["dio_write_bytes"] + f["buffered_write_bytes"]),
              "fsyncs": (f"{f['fsyncs']:,}" + (f" ({duration_ns(f['fsync_ns'])})"
                                                if f["fsync_ns"] else ""))
              if a.get("fsyncs_per_file") else "n/a",
              "dsync_writes": _calls(f, "dsync_writes", "dsync_write_ns")
              if a.get("fsyncs_per_file") else "n/a",
              "sync_file_ranges": _calls(f, "sync_file_ranges", "sync_file_range_ns")
              if a.get("fsyncs_per_file") else "n/a",
              "dio": ", ".join(f"{k} {f[k]:,}" for k in CLASS_KEYS if f.get(k)),
              "lock": (f"{'/'.join(f['inode_lock_kinds'])}: {f['inode_lock_waits']:,} waits, "
                       f"{duration_ns(f['inode_lock_ns'])}") if f["inode_lock_ns"] else "",
              "rule": "; ".join(f"{c['rule']} ({c['kernel_source']})" for c in f["causes"])}
             for f in (a.get("files") or [])[:40]]
    db = a.get("db") or {}
    fall = a.get("falls") or {}
    db_waits: dict[str, float] = {}
    for r in a.get("series") or []:
        for k, n in (r.get("db_waits") or {}).items():
            db_waits[k] = db_waits.get(k, 0.0) + n / max(len(a["series"]), 1)
    return {
        "generator": f"{MARKER} {__version__}",
        "title": f"lockscope: attach to {', '.join(t.get('comms') or []) or t.get('value')}",
        "source": source, "created": doc.get("created_wall", ""),
        "partial": bool(doc.get("partial")),
        "target": t, "ended": at.get("ended", ""), "window": f"{wall:.1f}",
        "sampling": a.get("sampling"),
        "stacks": stacks_phrase(a.get("stacks") or {}),
        "threads": a.get("threads", 0), "idle_threads": a.get("idle_threads", 0),
        "verdict": v, "verdict_class": VERDICT_CLASS.get(str(v.get("kind")), "bad"),
        "oncpu": f"{a.get('oncpu_ns', 0) / 1e9 / window:.2f}" if window else "0",
        "lost": f"{a.get('lost_ns', 0) / 1e9:.1f}", "idle": f"{a.get('idle_ns', 0) / 1e9:.1f}",
        "classes": classes, "files": files, "io_uring_hashed": hashed_text(a),
        "device": device_panel(a.get("device")),
        "throughput": a.get("throughput") or {}, "intervals": len(a.get("series") or []),
        "falls": fall, "fall_classes": [
            {"name": c["class"], "r": f"{c['r']:.2f}", "lag": c["lag_s"], "n": c["n"],
             "slope": f"{c['slope_per_thread']:+,.1f}",
             "in_falls": c.get("threads_in_falls", ""), "otherwise": c.get("threads_otherwise", "")}
            for c in fall.get("classes") or []],
        "db": db, "db_waits": sorted(db_waits.items(), key=lambda kv: -kv[1])[:12],
        "user_classifier": a.get("user_stacks_classifier"),
        "overhead": a.get("overhead"),
        "host": [(k, str((doc.get("host") or {}).get(k))) for k in
                 ("hostname", "kernel", "machine", "cpus", "memory_bytes")],
        "command": " ".join(doc.get("command") or []),
        "recorder": " ".join(at.get("recorder_argv") or []),
        # a group of a filesystem the target does not use (--fs) misses nothing
        "features": [f for f in ((doc.get("window") or {}).get("trace") or {}).get(
            "features") or [] if not f.get("enabled") and not f.get("not_needed")],
    }


def render_attach_html(doc: ResultsDoc, plots, flames, base: Path, source: str = "",
                       follow: list | None = None) -> str:
    from .html import flame_entries
    from .templating import TEMPLATES, environment

    m = attach_model(doc, source)
    css = (TEMPLATES / "report.css").read_text()
    script = (TEMPLATES / "flames.js").read_text()
    plot_map = {p.name: {"svg": Markup(inline_svg(p.svg, f"plot-{p.name}")), "title": p.title}
                for p in plots if p.svg}
    label = (doc.get("window") or {}).get("label", "")
    entries = flame_entries(flames, [label], base).get(label, [])
    return environment().get_template("attach.html.j2").render(
        m=m, css=Markup(css), script=Markup(script), plots=plot_map, flames=entries,
        flame_notes=flames.notes if flames else [], follow=follow or [])


def render_attach_markdown(doc: ResultsDoc, plots, source: str = "",
                           follow: list | None = None) -> str:
    from .templating import environment

    m = attach_model(doc, source)
    return environment().get_template("attach.md.j2").render(
        m=m, plots=[p for p in plots if p.png is not None], follow=follow or [])


def attach_json(doc: ResultsDoc, source: str = "") -> dict[str, Any]:
    return {"generator": f"{MARKER} {__version__}", "source": source,
            "schema": doc.get("schema"), "kind": "attach",
            "created_wall": doc.get("created_wall"),
            "analysis": {"attach": attach_analysis(doc)}, "notes": []}
