"""``--long-wait MS``: waits at least this long are recorded with their stacks in every
phase of the recorder's duty (lockscope-record --long-wait-us, docs/long-waits.md)."""

from __future__ import annotations

from typing import Any

from ..errors import UsageError

MAX_LONG_WAIT_MS = 60_000.0


def check_long_wait(args: Any) -> None:
    ms = getattr(args, "long_wait", None)
    if ms is not None and not 0 <= ms <= MAX_LONG_WAIT_MS:
        raise UsageError(f"--long-wait must be in [0, {MAX_LONG_WAIT_MS:.0f}] milliseconds")
    if ms and ms * 1000 < 1:
        raise UsageError("--long-wait must be 0 or at least 0.001 ms (1 us)")


# the budget judged on one second in 4 of BPF run-time statistics, their clock taken
# out: with them on throughout, their clock alone costs ~50 ns a run (bench/stats_cost)
BUDGET_STATS_EVERY = 4


def long_wait_args(args: Any) -> list[str]:
    """The recorder's options for ``args.long_wait`` (milliseconds; 0: off) and the
    sampled judging of its budget that keeps the cost of following them low."""
    out = ["--budget-stats-every", str(BUDGET_STATS_EVERY)]
    ms = getattr(args, "long_wait", None)
    if ms is None:
        return out
    return out + ["--long-wait-us", str(int(round(ms * 1000)))]
