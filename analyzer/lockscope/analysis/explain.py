"""How much of the lost efficiency each wait explains, and what-if bounds.

Per-thread time per I/O is t(N) = N / X(N). Scaling is lost by exactly
t(N) − t(1). Thread time is partitioned into shares s_k (on-CPU, each lock,
block I/O, ...), so that loss splits additively: wait k explains
(s_k(N)·t(N) − s_k(1)·t(1)) / (t(N) − t(1)), and the parts sum to one.
A wait already there with one thread explains nothing about scaling.

What-if: if wait k vanished and the rest of each thread's time stayed fixed,
each I/O would take (1 − s_k) of its time: X'(N) = X(N) / (1 − s_k). That is
an upper bound: a lock that serializes work still serializes its hold time.
"""

from __future__ import annotations


def explained_loss(points: list[dict], share_by_threads: dict[str, float]) -> float:
    """Fraction of the lost per-I/O thread time, lowest to highest N, due to this wait."""
    lo, hi = points[0], points[-1]
    x_lo, x_hi = lo["iops"]["mean"], hi["iops"]["mean"]
    if x_lo <= 0 or x_hi <= 0 or hi["threads"] == lo["threads"]:
        return 0.0
    t_lo, t_hi = lo["threads"] / x_lo, hi["threads"] / x_hi
    if t_hi <= t_lo:
        return 0.0  # no loss to explain
    s_lo = share_by_threads.get(str(lo["threads"]), 0.0)
    s_hi = share_by_threads.get(str(hi["threads"]), 0.0)
    return min(max((s_hi * t_hi - s_lo * t_lo) / (t_hi - t_lo), 0.0), 1.0)


def what_if(points: list[dict], share_by_threads: dict[str, float]) -> dict:
    lo, hi = points[0], points[-1]
    s_hi = min(share_by_threads.get(str(hi["threads"]), 0.0), 0.99)
    x_lo, x_hi = lo["iops"]["mean"], hi["iops"]["mean"]
    bound = x_hi / (1 - s_hi)
    return {
        "explained_loss": round(explained_loss(points, share_by_threads), 4),
        "what_if": {"threads": hi["threads"], "iops": bound,
                    "speedup": bound / x_lo if x_lo else None},
    }


def evidence_strength(points: list[dict], share_by_threads: dict[str, float],
                      explained: float) -> tuple[str, list[str]]:
    """Confidence from what four points can say: size, monotonic growth, repeat noise.

    A correlation coefficient over four points says little, so the judgment
    rests on the size of the wait, whether it grows at every step, and whether
    the effect stands above the spread between repeats.
    """
    shares = [share_by_threads.get(str(p["threads"]), 0.0) for p in points]
    notes = []
    grows = all(b >= a - 0.02 for a, b in zip(shares, shares[1:])) and shares[-1] > shares[0]
    notes.append(("the wait share grows at every added thread count"
                  if grows else "the wait share does not grow steadily with threads")
                 + " (" + ", ".join(f"{p['threads']}: {s:.0%}" for p, s in zip(points, shares))
                 + ")")
    noisy = any(p["iops"]["mean"] > 0 and p["iops"]["stddev"] / p["iops"]["mean"] > 0.15
                for p in points)
    if noisy:
        notes.append("repeats differ by more than 15%: the throughput figures are noisy")
    few = len(points) < 3
    if few:
        notes.append(f"only {len(points)} thread counts")
    score = 0
    score += shares[-1] >= 0.3
    score += grows
    score += explained >= 0.5
    score -= noisy
    level = "high" if score >= 3 else "medium" if score >= 2 else "low"
    if few and level == "high":
        level = "medium"
    return level, notes
