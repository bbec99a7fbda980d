"""Reports of a recording: HTML, Markdown and JSON, plots, and inferno flame graphs.

The entry point for other modules (the sweep calls it at its end)::

    from lockscope.report import render_report
    result = render_report(doc, out_dir, formats=("html",))

matplotlib and Jinja2 are imported only when a report is rendered.
"""

from .render import FORMATS, RenderResult, render_report

__all__ = ["FORMATS", "RenderResult", "render_report"]
