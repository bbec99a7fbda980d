"""Small statistics helpers: spread over repeats, percentiles from log2 histograms."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence

from ..schema import Spread


def spread(values: Iterable[float]) -> Spread:
    vals = [float(v) for v in values]
    if not vals:
        return {"mean": 0.0, "min": 0.0, "max": 0.0, "stddev": 0.0}
    return {
        "mean": statistics.fmean(vals), "min": min(vals), "max": max(vals),
        "stddev": statistics.stdev(vals) if len(vals) > 1 else 0.0,
    }


def add_hist(total: list[int], hist: Sequence[int]) -> list[int]:
    if len(total) < len(hist):
        total.extend([0] * (len(hist) - len(total)))
    for i, c in enumerate(hist):
        total[i] += int(c)
    return total


def log2_percentile(hist: Sequence[int], pct: float) -> float:
    """Percentile of a log2 histogram (bucket i holds [2^i, 2^(i+1)) ns).

    Interpolates linearly inside the bucket, so the answer is exact to within
    a factor of two, which is what such a histogram can say.
    """
    total = sum(hist)
    if total == 0:
        return 0.0
    rank = pct / 100.0 * total
    seen = 0
    for i, c in enumerate(hist):
        if c and seen + c >= rank:
            lo = float(1 << i) if i else 0.0
            hi = float(1 << (i + 1))
            return lo + (hi - lo) * (rank - seen) / c
        seen += c
    return float(1 << len(hist))
