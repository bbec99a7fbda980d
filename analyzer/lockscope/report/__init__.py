"""Reports of a recording: HTML, Markdown and JSON, plots, and inferno flame graphs.

The entry point for other modules (the sweep calls it at its end)::

    from lockscope.report import render_report
    result = render_report(doc, out_dir, formats=("html",))

matplotlib and Jinja2 are imported only when a report is rendered.
"""

__all__ = ["FORMATS", "RenderResult", "render_report"]


def __getattr__(name: str):
    # Imported on first use, so that the CLI (e.g. lockscope doctor) starts
    # without matplotlib, Jinja2 or numpy.
    if name in __all__:
        from . import render

        return getattr(render, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
