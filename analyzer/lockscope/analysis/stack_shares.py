"""How much of a recording's wait delay has no stack, and why (docs/long-waits.md): the
same measure as the exporter's profiles, over one recording. Delay is that of the
off-CPU records that are not idle (the block profile) and of the lock waits (the mutex
profile); waits recorded only while observed count scaled to the window, long ones
(``long``, recorded in every phase) as they are."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ..schema import StackShares, Trace
from .observed import observed_share
from .waitclass import UserClassifier, classify


def _has_stack(rec: Mapping[str, Any]) -> bool:
    return bool(rec.get("kstack") or rec.get("ustack"))


def _shares(records: Iterable[Mapping[str, Any]], scale: float) -> StackShares:
    delay = 0.0
    without = {"not_sampled": 0.0, "stack_lost": 0.0}
    deep = 0.0
    for r in records:
        long = bool(r.get("long"))
        ns = float(r.get("total_ns", 0) or 0) * (1.0 if long else scale)
        delay += ns
        if not _has_stack(r):
            without["stack_lost" if long else "not_sampled"] += ns
        elif len(r.get("kstack") or []) + len(r.get("ustack") or []) >= 4:
            deep += ns
    return {"delay_ns": delay, "without_ns": without, "four_frames_ns": deep}


def stack_shares(trace: Trace, lock_kinds: Mapping[str | None, str],
                 idle_tids: Collection[int | None],
                 user_classifier: UserClassifier | None) -> dict[str, StackShares]:
    """{"block": ..., "mutex": ...} for the trace."""
    share = observed_share(trace)
    scale = 1.0 / share if share else 1.0
    block = [r for r in trace.get("offcpu") or []
             if r.get("reason") == "runqueue"
             or classify(r, dict(lock_kinds), idle_tids, user_classifier).cls != "idle"]
    waits = [w for lk in trace.get("locks") or [] for w in lk.get("waits") or []]
    return {"block": _shares(block, scale), "mutex": _shares(waits, scale)}


def stacks_phrase(shares: Mapping[str, StackShares]) -> str | None:
    """``"delay without a stack: block 1.2% (1.0% not sampled, 0.2% lost), mutex 0.0%"``;
    None when nothing waited."""
    parts = []
    for name, s in shares.items():
        d = s["delay_ns"]
        if d <= 0:
            continue
        w = s["without_ns"]
        parts.append(f"{name} {sum(w.values()) / d:.1%} ({w['not_sampled'] / d:.1%} not "
                     f"sampled, {w['stack_lost'] / d:.1%} lost)")
    return "delay without a stack: " + ", ".join(parts) if parts else None
