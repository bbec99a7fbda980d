"""The Markdown report: the same verdict and tables, plots as PNG files next to the .md."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from .flame.graphs import FlameSet
from .html import flame_entries
from .model import ReportModel
from .plots import Plot
from .templating import environment


def render_markdown(model: ReportModel, plots: list[Plot], flames: FlameSet | None,
                    base: Path, follow: list | None = None,
                    verify: list[dict[str, Any]] | None = None) -> str:
    """The report as Markdown; image and flame links are relative to `base`."""
    env = environment()
    images = {}
    for p in plots:
        if p.png is not None:
            try:
                images[p.name] = quote(str(p.png.relative_to(base)))
            except ValueError:
                images[p.name] = quote(str(p.png))
    entries = flame_entries(flames, [v.name for v in model.filesystems], base,
                             embed=False)
    text = env.get_template("report.md.j2").render(m=model, plots=images, flames=entries,
                                                       follow=follow or [],
                                                   verify=verify or [])
    # Collapse the blank-line runs the template's conditionals leave behind, and
    # keep headings apart from the text around them.
    lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        line = line.rstrip()
        if line.startswith("```"):
            fenced = not fenced
        heading = line.startswith("#") and not fenced
        if heading and lines and lines[-1]:
            lines.append("")
        if lines and lines[-1].startswith("#") and line and not fenced:
            lines.append("")
        if not line and lines and not lines[-1]:
            continue
        lines.append(line)
    return "\n".join(lines).strip() + "\n"
