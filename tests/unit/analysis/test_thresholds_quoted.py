"""The docs name the share that explains (``EXPLAINS``, analysis/thresholds.py) where
they quote it: every figure in a sentence naming it is its value, so a change there
fails here until the docs follow."""

from __future__ import annotations

import re
from pathlib import Path

from lockscope.analysis.thresholds import EXPLAINS

ROOT = Path(__file__).resolve().parents[3]
DOCS = sorted((ROOT / "docs").glob("*.md"))
# where a sentence (or a table row) starts
SENTENCE_START = re.compile(r"\.\s|\n\n|\n\|")


def quoted(name: str) -> list[tuple[str, str]]:
    """(doc, sentence up to the name) for each place a doc names a threshold."""
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for m in re.finditer(rf"`{name}`", text):
            starts = [s.end() for s in SENTENCE_START.finditer(text, 0, m.start())]
            out.append((doc.name, text[starts[-1] if starts else 0:m.start()]))
    return out


def test_each_figure_quoted_beside_the_explains_share_is_its_value():
    places = quoted("EXPLAINS")
    assert {"sweep.md", "results-schema.md"} <= {doc for doc, _ in places}
    for doc, sentence in places:
        figures = re.findall(r"\d+%", sentence)
        assert figures and set(figures) == {f"{EXPLAINS:.0%}"}, (doc, sentence)
