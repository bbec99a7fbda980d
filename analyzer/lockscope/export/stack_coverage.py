"""How much of a profile's delay has no stack, and why (docs/long-waits.md).

A sample has no stack when neither its kernel nor its user stack was taken. Why is told
by its ``sampling`` label (export.interval_digest): a long wait (``long``) is recorded
with its stacks in every phase, so one without is a loss (the stack map was full or the
walk failed: the recorder's drops ``long_wait_*_stack_missing`` count them); a short one
was not among the waits whose stacks were sampled (one per thread and place per
--stack-refresh-ms, none while the budget has shed stacks). A short wait's stack may be
spread from earlier samples of the same wait (``stack="carried"``,
export.stack_carry): counted as with a stack, and its share said apart."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .pprof_writer import SampleKey

REASONS = {
    "not_sampled": "short waits without a stack sample (between samples, or stacks shed "
                   "by the budget)",
    "stack_lost": "long waits whose stack could not be taken (stack map full or the walk "
                  "failed)",
}


def sample_reason(key: SampleKey) -> str | None:
    """Why a sample has no stack; None when it has one."""
    kstack, ustack, labels = key
    if any(kstack) or any(ustack):
        return None
    return "stack_lost" if dict(labels).get("sampling") == "long" else "not_sampled"


@dataclass(frozen=True)
class StackCoverage:
    """Delay (ns) of a profile in all, and without a stack by reason."""

    delay_ns: int = 0
    without_ns: Mapping[str, int] = field(default_factory=dict)
    carried_ns: int = 0

    @property
    def without_share(self) -> float | None:
        """Share of the delay without a stack; None when there was no delay at all."""
        if self.delay_ns <= 0:
            return None
        return sum(self.without_ns.values()) / self.delay_ns

    def share(self, reason: str) -> float | None:
        if self.delay_ns <= 0:
            return None
        return self.without_ns.get(reason, 0) / self.delay_ns

    @property
    def carried_share(self) -> float | None:
        """Share of the delay whose stack was carried from earlier samples."""
        return self.carried_ns / self.delay_ns if self.delay_ns > 0 else None

    def comment(self) -> str:
        """The profile's comment line."""
        total = self.without_share
        if total is None:
            return "stack coverage: no delay recorded"
        parts = [f"{self.share(r) or 0:.1%} {what}" for r, what in REASONS.items()]
        return (f"delay without a stack: {total:.1%} ({'; '.join(parts)}); "
                f"{self.carried_share or 0:.1%} with a stack carried from samples of the "
                "same wait in an earlier interval (stack=carried)")


def stack_coverage(samples: Mapping[SampleKey, tuple[int, int]]) -> StackCoverage:
    total = 0
    without: dict[str, int] = {r: 0 for r in REASONS}
    carried = 0
    for key, (_count, ns) in samples.items():
        total += ns
        reason = sample_reason(key)
        if reason:
            without[reason] += ns
        elif ("stack", "carried") in key[2]:
            carried += ns
    return StackCoverage(total, without, carried)
