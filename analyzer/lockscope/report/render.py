"""render_report(): turn one results.json document into report files.

This is what ``lockscope report`` runs and what ``lockscope sweep`` calls at
its end. Files written into `out_dir` (names can be overridden per format):

- ``report.html``: one self-contained page (inline CSS/SVG, flame graphs as
  data: URLs), if "html" is in `formats`;
- ``report.md`` with ``report-scaling.png``, ``report-time-share.png`` and
  ``report-latency.png`` beside it, if "md" is in `formats`;
- ``report.json``: the analysis as JSON, if "json" is in `formats`;
- ``follow-<N>.bt``: a standalone bpftrace script per i_rwsem finding (lockscope
  follow), for html or md;
- ``flame/<fs>-<kind>-<N>threads.{folded,svg}`` and
  ``flame/<fs>-<kind>-diff-<lo>to<hi>threads.{folded,svg}`` for html or md
  (SVGs only when inferno is installed).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..schema import ResultsDoc
from .flame.graphs import Drawer, FlameSet, collect, files_written
from .flame.inferno import MISSING_NOTE, find_inferno
from .follow_targets import write_follow_scripts
from .forked import Forked, Standby
from .forms import FORMS, form_of
from .jsonout import dumps
from .outputs import OutputGuard
from .plots import PLOT_MODULES, Plot

FORMATS = ("html", "md", "json")
DEFAULT_NAMES = {"html": "report.html", "md": "report.md", "json": "report.json"}


@dataclass
class RenderResult:
    """What render_report wrote, and notes for the user (e.g. inferno missing).

    It reads as the path of the main report (HTML if written): ``str(result)``
    and ``os.fspath(result)`` give that path, so callers may print it or open it.
    """

    outputs: dict[str, Path] = field(default_factory=dict)   # format -> report file
    files: list[Path] = field(default_factory=list)          # every file written
    flame_dir: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def path(self) -> Path | None:
        """The main report file: HTML, else Markdown, else JSON."""
        for fmt in FORMATS:
            if fmt in self.outputs:
                return self.outputs[fmt]
        return None

    def __fspath__(self) -> str:
        return str(self.path or "")

    def __str__(self) -> str:
        return str(self.path or "")


def _write(path: Path, text: str) -> Path:
    # Write beside, then rename: a reader never sees half a report.
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def plot_standby() -> Standby:
    """A child that imports matplotlib while the caller loads the results; hand it to
    render_report (as a context manager: it ends the child if unused)."""
    return Standby(PLOT_MODULES)


def _draw_plots(kind: str, data: object, png_dir: Path | None, prefix: str,
                svg: bool) -> list[Plot]:
    # module-level, by the form's kind: what Standby hands its child is pickled
    return FORMS[kind].plots(data, png_dir=png_dir, png_prefix=prefix, svg=svg)


def render_report(doc: ResultsDoc, out_dir: str | os.PathLike,
                  formats: Iterable[str] = ("html",), *,
                  names: dict[str, str | os.PathLike] | None = None,
                  flame: bool = True, force: bool = False, source: str = "",
                  jobs: int | None = None, standby: Standby | None = None) -> RenderResult:
    """Render `doc` (a loaded results.json) into `out_dir`; returns what was written.

    `formats` is any of "html", "md", "json". `names` overrides the file of a
    format (relative to `out_dir`, or absolute). `flame=False` skips flame
    graphs. Existing files not written by lockscope are never overwritten
    unless `force` (UsageError otherwise). `source` is the results.json path
    shown in the report. `jobs` caps parallel inferno processes. `standby` (from
    plot_standby(), made before `doc` was loaded) draws the plots if given.
    """
    formats = list(dict.fromkeys(formats))
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise UsageError(f"unknown report format {', '.join(bad) or '(none)'}: "
                         f"choose from {', '.join(FORMATS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    guard = OutputGuard(force)
    targets = {f: guard.claim(out / (names or {}).get(f, DEFAULT_NAMES[f])) for f in formats}
    result = RenderResult()
    form = form_of(doc)
    model = form.model(doc, source)

    visual = [f for f in formats if f in ("html", "md")]
    # follow-<N>.bt beside the report, one per i_rwsem finding, listed on the pages
    follow = write_follow_scripts(doc, out, guard.claim, source) if visual else []
    result.files.extend(out / f["name"] for f in follow if f["name"])
    # The plots are drawn in a forked child while this process sums and writes the
    # flame-graph stacks (forked before inferno's processes and threads exist).
    pending: Forked[list[Plot]] | None = None
    if visual:
        png_dir = None
        if "md" in formats:
            png_dir = targets["md"].parent
            for name in form.plot_names:
                guard.claim(png_dir / f"{targets['md'].stem}-{name}.png")
        prefix = targets["md"].stem if "md" in formats else "report"
        data = form.plot_data(doc, model)
        if standby is not None:
            pending = standby.run(_draw_plots, form.kind, data, png_dir, prefix,
                                  "html" in formats)
        else:
            pending = Forked(lambda: _draw_plots(form.kind, data, png_dir, prefix,
                                                 "html" in formats))

    flames: FlameSet | None = None
    drawer: Drawer | None = None
    if visual and flame:
        result.flame_dir = out / "flame"
        inferno = find_inferno()
        # inferno draws each graph in its own process as soon as its stacks are
        # written, while this thread sums the next ones; the drawing thread then
        # packs it for the page.
        drawer = Drawer(inferno, jobs, embed="html" in formats)
        try:
            flames = collect(doc, result.flame_dir, claim=guard.claim, on_graph=drawer.submit)
        except BaseException:
            if pending is not None:
                pending.cancel()  # a refused path: the plots' child is not left waiting
            raise
        if inferno is None:
            flames.notes.insert(0, MISSING_NOTE)

    plots: list[Plot] = pending.result() if pending is not None else []
    if drawer is not None and flames is not None:
        drawer.finish(flames)
    if flames is not None:
        if model is not None:
            model.flame_notes = flames.notes
        result.notes.extend(flames.notes)
        result.files.extend(files_written(flames))
    result.files.extend(p.png for p in plots if p.png is not None)

    if "html" in formats:
        result.outputs["html"] = _write(targets["html"], form.html(
            doc, model, plots, flames, targets["html"].parent, source, follow))
    if "md" in formats:
        result.outputs["md"] = _write(targets["md"], form.md(
            doc, model, plots, flames, targets["md"].parent, source, follow))
    if "json" in formats:
        result.outputs["json"] = _write(targets["json"], dumps(form.json(doc, model, source)))
    result.files.extend(result.outputs.values())
    guard.save()
    return result


def print_notes(result: RenderResult) -> None:
    """One line per note on stderr (used by the CLI)."""
    for note in result.notes:
        print(f"lockscope report: {note}", file=sys.stderr)
