"""How much of the lost efficiency each wait explains, and what-if bounds.

If a wait took share s of every thread's time at N threads and vanished while
the rest of each thread's time stayed fixed, each I/O would take (1 − s) of
its time: X'(N) = X(N) / (1 − s). That is an upper bound: a lock that
serializes work still serializes its hold time. The loss explained at the
highest thread count is (E'(N) − E(N)) / (1 − E(N)), with E' computed from X'
at both ends, so a wait that is already there with one thread explains
nothing about scaling.
"""

from __future__ import annotations


def what_if(points: list[dict], share_by_threads: dict[str, float]) -> dict:
    lo, hi = points[0], points[-1]
    s_lo = min(share_by_threads.get(str(lo["threads"]), 0.0), 0.99)
    s_hi = min(share_by_threads.get(str(hi["threads"]), 0.0), 0.99)
    x_lo, x_hi = lo["iops"]["mean"], hi["iops"]["mean"]
    if x_lo <= 0 or hi["threads"] == lo["threads"]:
        return {"explained_loss": 0.0, "what_if": None}
    e = (x_hi / hi["threads"]) / (x_lo / lo["threads"])
    x_hi2, x_lo2 = x_hi / (1 - s_hi), x_lo / (1 - s_lo)
    e2 = min(1.0, (x_hi2 / hi["threads"]) / (x_lo2 / lo["threads"]))
    explained = (e2 - e) / (1 - e) if e < 1 else 0.0
    return {
        "explained_loss": round(min(max(explained, 0.0), 1.0), 4),
        "what_if": {"threads": hi["threads"], "iops": x_hi2, "speedup": x_hi2 / x_lo},
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
