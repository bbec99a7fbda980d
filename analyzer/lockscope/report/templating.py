"""One Jinja2 environment for every report template, HTML and Markdown alike.

Templates named ``*.html.j2`` are autoescaped; Markdown ones (``*.md.j2``) are not,
and get the ``cell`` and ``urlpath`` filters.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

from ..analysis.recorder_cost import shed_phrase

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _cell(value: object) -> str:
    """Text safe inside a Markdown table cell: no pipes, no line breaks."""
    return str(value).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


@lru_cache(maxsize=1)
def environment():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    # StrictUndefined: a template typo fails the tests instead of printing nothing.
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)),
                      autoescape=select_autoescape(enabled_extensions=("html.j2",),
                                                   default_for_string=False),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True)
    env.filters["cell"] = _cell
    env.filters["shed_phrase"] = shed_phrase
    env.filters["urlpath"] = lambda p: quote(str(p))
    return env
