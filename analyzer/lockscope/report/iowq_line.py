"""The report's line on io-wq's hashed queue (analysis/iowq.py), for the attach page,
its Markdown and the terminal summary."""

from __future__ import annotations

from ..schema import AttachAnalysis
from .fmt import duration_ns


def hashed_text(a: AttachAnalysis) -> str:
    """One line on io-wq's hashed queue (analysis/iowq.py): measured or not, never a bare
    zero for what was not measured."""
    h = a.get("io_uring_hashed")
    if h is None:
        return ""
    what = "io_uring requests queued one per file in io-wq (hashed)"
    if not h["measured"]:
        return f"{what}: not measured ({h['reason']})."
    if not h["queued"]:
        unhashed = (f"; {h['unhashed']:,} O_DIRECT requests went to io-wq unhashed"
                    if h["unhashed"] else "")
        return f"{what}: measured, none{unhashed}."
    return (f"{what}: {h['queued']:,}, of which {h['behind']:,} queued behind another of "
            f"their file's for {duration_ns(h['behind_ns'])} in all.")
