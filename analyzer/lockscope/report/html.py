"""The self-contained HTML report: Jinja2 (autoescaped), inline CSS and SVG, no network."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from markupsafe import Markup

from .embed import flame_for_embedding, inline_svg, packed
from . import fmt
from .flame import FlameSet, verb
from .model import ReportModel
from .plots import Plot

TEMPLATES = Path(__file__).resolve().parent / "templates"
_HEIGHT = re.compile(rb'<svg[^>]*?\sheight="(\d+(?:\.\d+)?)"', re.S)


def _env():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    # StrictUndefined: a template typo fails the tests instead of printing nothing.
    return Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def flame_entries(flames: FlameSet | None, fs_names: list[str], base: Path,
                   embed: bool = True) -> dict[str, list[dict[str, Any]]]:
    """Per filesystem, the graphs as template entries (with the packed SVG if `embed`)."""
    out: dict[str, list[dict[str, Any]]] = {}
    if flames is None:
        return out
    for fs in fs_names:
        entries = []
        for i, g in enumerate(flames.for_fs(fs)):
            entry = {"id": f"flame-{len(out)}-{i}", "label": g.label, "title": g.title,
                     "amount": f"{fmt.duration_ns(g.total)} {verb(g.kind)}", "error": g.error, "packed": None, "height": 0,
                     "open": bool(g.diff) and g.kind == "lockwait",
                     "svg_name": _rel(g.svg, base), "folded_name": _rel(g.folded, base)}
            if embed and g.svg is not None and g.svg.exists():
                raw = g.svg.read_bytes()
                m = _HEIGHT.search(raw[:4096])
                entry["height"] = int(float(m.group(1))) + 4 if m else 600
                entry["packed"] = packed(flame_for_embedding(raw.decode("utf-8", "replace")))
            entries.append(entry)
        if entries:
            out[fs] = entries
    return out


def _rel(path: Path | None, base: Path) -> str:
    if path is None:
        return "-"
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


def render_html(model: ReportModel, plots: list[Plot], flames: FlameSet | None,
                base: Path) -> str:
    """The whole report page as one string; `base` is the directory the page is written to."""
    env = _env()
    css = (TEMPLATES / "report.css").read_text()
    script = (TEMPLATES / "flames.js").read_text()
    plot_map = {p.name: {"svg": Markup(inline_svg(p.svg, f"plot-{p.name}")), "title": p.title}
                for p in plots if p.svg}
    entries = flame_entries(flames, [v.name for v in model.filesystems], base)
    flame_dir = _rel(next((g.folded.parent for g in flames.graphs if g.folded), None), base) \
        if flames and flames.graphs else "flame"
    return env.get_template("report.html.j2").render(
        m=model, css=Markup(css), script=Markup(script), plots=plot_map, flames=entries,
        flame_dir=flame_dir)
