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

import base64
import gzip
import re
from pathlib import Path
from typing import Any

from markupsafe import Markup

from . import fmt
from .flame.graphs import FlameSet, verb
from .model import ReportModel
from .plots import Plot
from .templating import TEMPLATES, environment

_HEIGHT = re.compile(rb'<svg[^>]*?\sheight="(\d+(?:\.\d+)?)"', re.S)


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
    env = environment()
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


_PROLOG = re.compile(r"\A\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_IDS = re.compile(r'(\sid=")|(url\(#)|((?:xlink:)?href="#)')


def inline_svg(svg: str, prefix: str) -> str:
    """An SVG document as an element to paste into HTML, with ids prefixed by `prefix`."""
    body = _PROLOG.sub("", svg, count=1)
    body = _METADATA.sub("", body, count=1)
    return _IDS.sub(lambda m: m.group(0) + f"{prefix}-", body)


# inferno saves zoom/search state with history.replaceState, which an embedded
# data: document may not do (it throws a SecurityError). Guard that one call.
_REPLACE = "history.replaceState("
_GUARD = ("function lockscopeReplaceState(a, b, c) { try { history.replaceState(a, b, c); } "
          "catch (e) { /* embedded: no URL state */ } }\n")


# A frame laid out at zero width (a closed section, a resize while printing or
# taking a screenshot) would make inferno compute negative widths and infinite
# text positions, and log errors: skip such layouts; the next resize redraws.
_RESIZE = "var update_for_width_change = function() {"
_RESIZE_SAFE = _RESIZE + " if (!(svg.width.baseVal.value > xpad * 2)) { return; }"


def flame_for_embedding(svg: str) -> str:
    """inferno's SVG made safe inside an iframe: guarded URL state, no zero-width layout."""
    svg = svg.replace(_RESIZE, _RESIZE_SAFE, 1)
    if _REPLACE not in svg:
        return svg
    svg = svg.replace(_REPLACE, "lockscopeReplaceState(")
    # Define the guard at the top of inferno's first script block.
    return svg.replace("<![CDATA[", "<![CDATA[\n" + _GUARD, 1)


def packed(svg: str) -> str:
    """gzip + base64 of an SVG document, as the page's script unpacks it."""
    # mtime=0: the same input gives the same report, byte for byte.
    return base64.b64encode(gzip.compress(svg.encode("utf-8"), compresslevel=6, mtime=0)
                            ).decode("ascii")
