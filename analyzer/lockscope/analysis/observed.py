"""Observed time of a recorder section: how long the recorder's probes were attached
within its interval. With ``--duty`` below 100 they are attached only part of each
period (docs/recorder-json.md, "sampling"), so counts and times cover that part alone:
every rate or time share taken from a section divides by this, not by its duration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def observed_ns(section: Mapping[str, Any] | None) -> float:
    """``interval.observed_ns`` of a trace or series section, else its duration (a
    recorder without sampling, or duty 100); 0 when the section has no interval."""
    iv = (section or {}).get("interval") or {}
    obs = iv.get("observed_ns")
    if obs is not None:
        return float(obs)
    d = iv.get("duration_ns")
    if d is None:
        d = iv.get("end_mono_ns", 0) - iv.get("start_mono_ns", 0)
    return float(max(d or 0, 0))


def observed_share(section: Mapping[str, Any] | None) -> float | None:
    """Observed time over the window (1.0 without sampling); None without a window."""
    iv = (section or {}).get("interval") or {}
    d = iv.get("duration_ns")
    if not d:
        return None
    return min(observed_ns(section) / float(d), 1.0)


def sampling_note(section: Mapping[str, Any] | None) -> str | None:
    """``"observed 30% of the time (--duty)"`` when the probes were attached part of the
    window; None otherwise."""
    share = observed_share(section)
    if share is None or share >= 0.995:
        return None
    return f"observed {share:.0%} of the time (--duty)"


def record_observed_ns(rec: Mapping[str, Any], share: float | None) -> float:
    """An off-CPU record's time within the observed part: a long wait (``long``, at least
    the recorder's --long-wait-us) is recorded in every phase, so only ``share`` of it
    (observed_share of its section) falls there; the others were recorded while
    observed only."""
    ns = float(rec.get("total_ns", 0) or 0)
    return ns * share if rec.get("long") and share is not None else ns
