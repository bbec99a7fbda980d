"""The report's line on io-wq's hashed queue (analysis/iowq.py), for the attach page,
its Markdown and the terminal summary, and the sweep's per filesystem
(analysis/iowq_sweep.py)."""

from __future__ import annotations

from typing import Any

from ..schema import AttachAnalysis
from .fmt import duration_ns, share


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


def sweep_hashed_text(h: dict[str, Any]) -> str:
    """A sweep's line on io-wq's hashed queue at its top thread count, in request time:
    measured or not, never a bare zero for what was not measured."""
    if not h:
        return ""
    what = f"io-wq's hashed queue at {h.get('threads')} threads"
    if not h.get("measured"):
        return f"{what}: not measured ({h.get('reason') or 'no reason given'})."
    if not h.get("queued"):
        unhashed = (f"; {h['unhashed']:,} O_DIRECT requests went to io-wq unhashed"
                    if h.get("unhashed") else "")
        return f"{what}: measured, no request hashed{unhashed}."
    loss = h.get("explained_loss")
    return (f"{what}: {h['queued']:,} requests hashed, {h.get('behind', 0):,} queued behind "
            f"another of their file's for {duration_ns(h.get('behind_ns'))}: "
            f"{share(h.get('share'))} of request time"
            + (f", {share(loss)} of the lost efficiency" if loss is not None else "")
            + (" (the verdict names it)." if h.get("named") else "."))
