"""The one place a results.json's ``kind`` is read: each kind of recording has its form
of the report. A sweep (no ``kind``) is compared per filesystem from its runs; an attach
(``"kind": "attach"``) is explained from its one window (``analysis.attach``).

A form builds the report's model, draws its plots (from what ``plot_data`` takes of the
document: small and picklable, so a child process can draw them) and writes its html,
md and json;
``render.render_report`` and ``lockscope report`` pick the form with ``form_of`` and
never look at the kind themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import LockscopeError
from ..schema import ResultsDoc
from .jsonout import report_json
from .model import build_model
from .plots import render_plots

# A page writer: (doc, model, plots, flames, base directory, source, the follow scripts
# written beside it: render.render_report) -> text
Page = Callable[[ResultsDoc, Any, list, Any, Path, str, list], str]


@dataclass(frozen=True)
class Form:
    kind: str
    model: Callable[[ResultsDoc, str], Any]          # None for a form without one
    plot_names: tuple[str, ...]                      # the md form's PNGs, report-<name>.png
    plot_data: Callable[[ResultsDoc, Any], Any]      # (doc, model) -> what plots draw
    plots: Callable[..., list]                       # (plot_data, **render_plots options)
    html: Page
    md: Page
    json: Callable[[ResultsDoc, Any, str], dict]     # (doc, model, source)


def _sweep_plot_data(doc: ResultsDoc, model: Any) -> Any:
    return model.filesystems


def _sweep_plots(views: Any, **opts: Any) -> list:
    return render_plots(views, **opts)


def _verify(doc, base: Path, source: str, **opts: Any) -> list:
    """The --verify section's entries; the reruns' files are under results.json's
    directory."""
    from .verify_section import verify_view

    return verify_view(doc, base, Path(source).parent if source else base, **opts)


def _sweep_html(doc, model, plots, flames, base, source, follow) -> str:
    from .html import render_html

    return render_html(model, plots, flames, base, follow,
                       _verify(doc, base, source, embed=True))


def _sweep_md(doc, model, plots, flames, base, source, follow) -> str:
    from .markdown import render_markdown

    return render_markdown(model, plots, flames, base, follow,
                           _verify(doc, base, source, embed=False, png_dir=base))


def _attach_plot_data(doc: ResultsDoc, model: Any) -> Any:
    from .attach_report import attach_analysis

    return attach_analysis(doc)


def _attach_plots(analysis: Any, **opts: Any) -> list:
    from .attach_plots import FIGURES

    return render_plots(analysis, figures=FIGURES, **opts)


def _attach_html(doc, model, plots, flames, base, source, follow) -> str:
    from .attach_report import render_attach_html

    return render_attach_html(doc, plots, flames, base, source, follow)


def _attach_md(doc, model, plots, flames, base, source, follow) -> str:
    from .attach_report import render_attach_markdown

    return render_attach_markdown(doc, plots, source, follow)


def _attach_json(doc, model, source) -> dict:
    from .attach_report import attach_json

    return attach_json(doc, source)


def _attach_plot_names() -> tuple[str, ...]:
    from .attach_plots import FIGURES

    return tuple(name for name, _, _ in FIGURES)


FORMS = {
    "sweep": Form("sweep", build_model, ("scaling", "time-share", "latency"), _sweep_plot_data,
                  _sweep_plots, _sweep_html, _sweep_md,
                  lambda doc, model, source: report_json(doc, model)),
    "attach": Form("attach", lambda doc, source: None, _attach_plot_names(), _attach_plot_data,
                   _attach_plots, _attach_html, _attach_md, _attach_json),
}


def form_of(doc: ResultsDoc) -> Form:
    kind = doc.get("kind") or "sweep"
    if kind not in FORMS:
        raise LockscopeError(f"results.json of kind '{kind}': this lockscope reports "
                             f"{' and '.join(FORMS)} recordings")
    return FORMS[kind]
