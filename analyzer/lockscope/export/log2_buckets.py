"""The recorder's log2 histograms (slot i counts [2^i, 2^(i+1)) ns) as Prometheus
histogram buckets, for every family that has one (lock waits, device service times)."""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client.utils import floatToGoString

# every other power of two from ~1 us to ~17 s (recorder slots are [2^i, 2^(i+1)) ns,
# so these edges are exact)
HIST_EXPONENTS = tuple(range(10, 36, 2))


def log2_buckets(slots: Sequence[int]) -> list[tuple[str, float]]:
    """Cumulative (le, count) buckets of a log2 histogram, "+Inf" last."""
    buckets: list[tuple[str, float]] = [(floatToGoString(2 ** k / 1e9), sum(slots[:k]))
                                        for k in HIST_EXPONENTS]
    buckets.append(("+Inf", sum(slots)))
    return buckets
