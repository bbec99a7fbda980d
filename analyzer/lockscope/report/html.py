"""The self-contained HTML report: Jinja2 (autoescaped), inline CSS and SVG, no network.

SVGs are prepared for one page:
- Plots are inlined as ``<svg>`` elements. Each matplotlib SVG numbers its ids
  the same way (``figure_1``, ``axes_1`` …), so ids and their references get a
  per-plot prefix to stay unique in the page.
- inferno's flame graphs carry their own script and ids, so each one is shown
  in its own sandboxed ``<iframe>``: scripts and ids stay isolated and the
  graph stays interactive (hover, click to zoom, search). They are stored
  gzip-compressed and base64-encoded in the page (about a tenth of their
  size) and unpacked by a few lines of inline script when opened.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from markupsafe import Markup

from . import fmt
from .flame.embed import embedding
from .flame.graphs import FlameSet, verb
from .model import ReportModel
from .plots import Plot
from .templating import TEMPLATES, environment


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
                     "amount": f"{fmt.duration_ns(g.total)} {verb(g.kind)}", "error": g.error,
                     "packed": None, "height": 0,
                     "open": bool(g.diff) and g.kind == "lockwait",
                     "svg_name": _rel(g.svg, base), "folded_name": _rel(g.folded, base)}
            if embed and g.svg is not None and (g.embedded or g.svg.exists()):
                # packed by the thread that drew it (Drawer), or here
                entry["height"], entry["packed"] = g.embedded or embedding(g.svg)
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
                base: Path, follow: list | None = None,
                verify: list[dict[str, Any]] | None = None) -> str:
    """The whole report page as one string; `base` is the directory the page is written to."""
    env = environment()
    css = (TEMPLATES / "report.css").read_text()
    script = (TEMPLATES / "flames.js").read_text()
    plot_map = {p.name: {"svg": Markup(inline_svg(p.svg, f"plot-{p.name}")), "title": p.title}
                for p in plots if p.svg}
    entries = flame_entries(flames, [v.name for v in model.filesystems], base)
    flame_dir = _rel(next((g.folded.parent for g in flames.graphs if g.folded), None), base) \
        if flames and flames.graphs else "flame"
    for v in verify or []:
        v["svg"] = Markup(inline_svg(v["svg"], f"plot-verify-{v['fs']}")) if v["svg"] else None
    return env.get_template("report.html.j2").render(
        m=model, css=Markup(css), script=Markup(script), plots=plot_map, flames=entries,
        flame_dir=flame_dir, follow=follow or [], verify=verify or [])


_PROLOG = re.compile(r"\A\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_IDS = re.compile(r'(\sid=")|(url\(#)|((?:xlink:)?href="#)')


def inline_svg(svg: str, prefix: str) -> str:
    """An SVG document as an element to paste into HTML, with ids prefixed by `prefix`."""
    body = _PROLOG.sub("", svg, count=1)
    body = _METADATA.sub("", body, count=1)
    return _IDS.sub(lambda m: m.group(0) + f"{prefix}-", body)
