"""How much of the lost efficiency each wait explains, and what-if bounds.

Per-thread time per I/O is t(N) = N / X(N). Scaling is lost by exactly
t(N) − t(1). Thread time is partitioned into shares s_k (on-CPU, each lock,
block I/O, ...), so that loss splits additively: wait k explains
(s_k(N)·t(N) − s_k(1)·t(1)) / (t(N) − t(1)), and the parts sum to one.
A wait already there with one thread explains nothing about scaling.

With C CPUs, threads that need c seconds of CPU per I/O cannot complete
more than C/c I/Os per second, so t(N) cannot fall below N·c/C however
little they wait: that part of the growth is the machine's capacity (c is
measured at the lowest thread count), charged to no wait and taken out of
the loss to explain.

What-if: if wait k vanished and the rest of each thread's time stayed fixed,
each I/O would take (1 − s_k) of its time: X'(N) = X(N) / (1 − s_k). That is
an upper bound: a lock that serializes work still serializes its hold time.
"""

from __future__ import annotations

from typing import TypedDict

from ..schema import Point, WhatIf


class PerIoTimes(TypedDict):
    t_lo: float
    t_hi: float
    floor: float
    lo: str     # the lowest and highest thread counts, as share_by_threads keys
    hi: str


class WhatIfBound(TypedDict):
    explained_loss: float
    what_if: WhatIf | None


def per_io_times(points: list[Point], cpus: int | None) -> PerIoTimes | None:
    """t at the lowest and highest N, and the floor the CPUs put under t at the highest."""
    lo, hi = points[0], points[-1]
    x_lo, x_hi = lo["iops"]["mean"], hi["iops"]["mean"]
    if x_lo <= 0 or x_hi <= 0 or hi["threads"] == lo["threads"]:
        return None
    t_lo, t_hi = lo["threads"] / x_lo, hi["threads"] / x_hi
    floor = t_lo
    oncpu_lo = (lo.get("time_share") or {}).get("oncpu")
    if cpus and oncpu_lo is not None:
        floor = max(t_lo, hi["threads"] * oncpu_lo * t_lo / cpus)
    return {"t_lo": t_lo, "t_hi": t_hi, "floor": floor, "lo": str(lo["threads"]),
            "hi": str(hi["threads"])}


def _grew(t: PerIoTimes, share_by_threads: dict[str, float]) -> float:
    """Growth of a category's time per I/O from the lowest to the highest N."""
    return (share_by_threads.get(t["hi"], 0.0) * t["t_hi"]
            - share_by_threads.get(t["lo"], 0.0) * t["t_lo"])


def explained_loss(points: list[Point], share_by_threads: dict[str, float],
                   cpus: int | None = None) -> float:
    """Fraction of the lost per-I/O thread time, lowest to highest N, due to this wait."""
    t = per_io_times(points, cpus)
    if not t or t["t_hi"] <= t["floor"]:
        return 0.0  # no loss beyond what the CPUs allow
    return min(max(_grew(t, share_by_threads) / (t["t_hi"] - t["floor"]), 0.0), 1.0)


CATEGORIES = ("oncpu", "runqueue", "block_io", "journal", "other_lock", "other_offcpu")


def category_losses(points: list[Point], cpus: int | None) -> dict[str, float]:
    """Explained loss of each time category.

    On-CPU growth (more CPU work per I/O) and runqueue growth (waiting for a
    CPU) stay apart: the first is work, the second a wait, and a lock's
    hand-offs and optimistic spinning (not covered by lock:contention_*) show
    up in both. The CPUs' capacity is taken out of the runqueue first, since
    threads beyond the CPUs wait for one, and out of on-CPU time for the rest.
    """
    t = per_io_times(points, cpus)
    if not t or t["t_hi"] <= t["floor"]:
        return dict.fromkeys(CATEGORIES, 0.0)
    grew = {k: _grew(t, {str(p["threads"]): (p.get("time_share") or {}).get(k, 0.0)
                         for p in points}) for k in CATEGORIES}
    capacity = t["floor"] - t["t_lo"]
    from_runqueue = min(capacity, max(grew["runqueue"], 0.0))
    grew["runqueue"] -= from_runqueue
    grew["oncpu"] -= capacity - from_runqueue
    loss = t["t_hi"] - t["floor"]
    return {k: min(max(v / loss, 0.0), 1.0) for k, v in grew.items()}


def cpu_capacity_bound(points: list[Point], cpus: int | None) -> bool:
    """True when the highest thread count is within 10% of what the CPUs allow."""
    t = per_io_times(points, cpus)
    return t is not None and t["floor"] > t["t_lo"] and t["t_hi"] <= 1.1 * t["floor"]


def what_if(points: list[Point], share_by_threads: dict[str, float],
            cpus: int | None = None) -> WhatIfBound:
    lo, hi = points[0], points[-1]
    s_hi = min(share_by_threads.get(str(hi["threads"]), 0.0), 0.99)
    x_lo, x_hi = lo["iops"]["mean"], hi["iops"]["mean"]
    bound = x_hi / (1 - s_hi)
    return {
        "explained_loss": round(explained_loss(points, share_by_threads, cpus), 4),
        "what_if": {"threads": hi["threads"], "iops": bound,
                    "speedup": bound / x_lo if x_lo else None},
    }


def evidence_strength(points: list[Point], share_by_threads: dict[str, float],
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
