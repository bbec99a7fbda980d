"""The report's ``sweep --verify`` section: per filesystem, the sweep's throughput curve
and each remedied rerun's on one plot, the blamed lock's share at every thread count
before and after, the one-line outcome, and the differential flame graph."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from .flame.embed import embedding
from .outputs import carries_marker


def _pct(x: Any) -> str:
    return "-" if x is None else f"{x:.0%}"


def _rows(row: dict[str, Any]) -> list[dict[str, str]]:
    """threads, IOPS and the lock's share before and after, one row per thread count."""
    b, a = row.get("before") or {}, row.get("after") or {}
    threads = sorted(set(b.get("threads", [])) | set(a.get("threads", [])))

    def at(c: dict[str, Any], key: str, n: int) -> Any:
        return c[key][c["threads"].index(n)] if n in c.get("threads", []) else None

    return [{"threads": str(n),
             "iops_before": f"{v:,.0f}" if (v := at(b, "iops", n)) is not None else "-",
             "iops_after": f"{v:,.0f}" if (v := at(a, "iops", n)) is not None else "-",
             "share_before": _pct(at(b, "lock_share", n)),
             "share_after": _pct(at(a, "lock_share", n))} for n in threads]


def _flame(row: dict[str, Any], base: Path, results_dir: Path, embed: bool,
           ident: str) -> dict[str, Any]:
    fd = row.get("flame_diff") or {}
    svg = results_dir / fd["svg"] if fd.get("svg") else None
    entry: dict[str, Any] = {"error": fd.get("error"), "packed": None, "height": 0,
                             "svg_name": "-", "id": ident}
    if svg is not None and svg.exists():
        try:
            entry["svg_name"] = str(svg.relative_to(base))
        except ValueError:
            entry["svg_name"] = str(svg)
        if embed:
            entry["height"], entry["packed"] = embedding(svg)
    elif not entry["error"]:
        entry["error"] = "no differential flame graph"
    return entry


def verify_view(doc: Any, base: Path, results_dir: Path, *, embed: bool = True,
                png_dir: Path | None = None) -> list[dict[str, Any]]:
    """Template entries, one per filesystem (empty without a ``verify`` section)."""
    section = doc.get("verify") if isinstance(doc, dict) else None
    if not isinstance(section, dict):
        return []
    out = []
    for f, (fs, entry) in enumerate((section.get("filesystems") or {}).items()):
        remedies = []
        for r, row in enumerate(entry.get("remedies") or []):
            ran = "before" in row
            remedies.append({"title": row.get("title") or row.get("remedy"),
                             "remedy": row.get("remedy"), "outcome": row.get("outcome"),
                             "line": row.get("line"), "command": row.get("command"),
                             "out": row.get("out"), "rows": _rows(row) if ran else [],
                             "flame": _flame(row, base, results_dir, embed, f"verify-{f}-{r}")
                             if ran else None})
        svg, png = _plot(fs, entry, png_dir)
        out.append({"fs": fs, "lock": (entry.get("lock") or {}).get("name"),
                    "note": entry.get("note"), "confidence": entry.get("confidence"),
                    "confidence_after": entry.get("confidence_after"),
                    "remedies": remedies, "svg": svg,
                    "png": png.name if png is not None else None})
    return out


def _plot(fs: str, entry: dict[str, Any], png_dir: Path | None) -> tuple[str | None, Path | None]:
    """Throughput against threads: the sweep and each rerun, on one plot."""
    runs = [r for r in entry.get("remedies") or [] if r.get("after")]
    if not runs:
        return None, None
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return None, None
    fig = Figure(figsize=(6.4, 3.4), layout="constrained")
    ax = fig.add_subplot()
    b = runs[0]["before"]
    ax.plot(b["threads"], b["iops"], "o-", color="black", label="before (the sweep)")
    for r in runs:
        ax.plot(r["after"]["threads"], r["after"]["iops"], "s--",
                label=f"after: {r.get('title')} ({r.get('outcome')})")
    ax.set_xlabel("threads")
    ax.set_ylabel("throughput (ops/s)")
    ax.set_title(f"{fs}: before and after each remedy")
    ax.set_xticks(sorted(set(b["threads"]) | {n for r in runs for n in r["after"]["threads"]}))
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    png = None
    if png_dir is not None:
        png = png_dir / f"report-verify-{fs}.png"
        if png.exists() and not carries_marker(png):
            return buf.getvalue(), None     # not ours: never overwritten
        fig.savefig(png, format="png", dpi=110, metadata={"Software": "lockscope report"})
    return buf.getvalue(), png
