"""Tests of published claims on measured figures: pure functions of the figures.

The thresholds are wide on purpose: the figures come from a shared machine, and a claim
is about a shape (flat, scaling, ahead), not a decimal. Between "clearly yes" and
"clearly no" a claim is inconclusive rather than forced."""

from __future__ import annotations

from collections.abc import Iterable

from .definition import Measured, Outcome

FLAT = 1.15      # a speedup below this is "does not scale"
SCALES = 1.3     # a speedup at or above this is "scales"
LEAD = 1.10      # one filesystem "beats" another at or above this ratio
LOSS = 0.95      # a speedup below this is "de-scales" (adding threads lost throughput)

HOLDS, FAILS, INCONCLUSIVE, MISSING = "holds", "does not hold", "inconclusive", "not measured"


def _x(value: float) -> str:
    return f"{value:.2f}x"


def _n(threads: int) -> str:
    return f"{threads} thread" + ("s" if threads != 1 else "")


def _missing(what: str) -> Outcome:
    return Outcome(MISSING, f"no figure for {what}")


def scales(m: Measured, case: str, fs: str, threads: int, base: int = 1) -> Outcome:
    """``fs`` gains throughput from ``base`` to ``threads`` threads."""
    s = m.speedup(case, fs, threads, base)
    if s is None:
        return _missing(f"{fs} {case} at {base} and {threads} threads")
    detail = f"{fs} {case}: {_n(threads)} / {base} = {_x(s)}"
    if s >= SCALES:
        return Outcome(HOLDS, detail)
    return Outcome(FAILS if s < FLAT else INCONCLUSIVE, detail)


def descales(m: Measured, case: str, fs: str, threads: int, base: int = 1) -> Outcome:
    """``fs`` loses throughput from ``base`` to ``threads`` threads."""
    s = m.speedup(case, fs, threads, base)
    if s is None:
        return _missing(f"{fs} {case} at {base} and {threads} threads")
    detail = f"{fs} {case}: {_n(threads)} / {base} = {_x(s)}"
    return Outcome(HOLDS if s < LOSS else FAILS, detail)


def flat_while_other_scales(m: Measured, cases: Iterable[str], fs: str, other: str,
                            threads: int, base: int = 1) -> Outcome:
    """``fs`` does not scale where ``other`` does, in every case. Where neither scales
    the device, not the filesystem, is the limit: inconclusive."""
    details, statuses = [], []
    cases = list(cases)
    if not cases:
        return _missing(f"{fs} and {other} at {base} and {threads} threads")
    for case in cases:
        s, so = m.speedup(case, fs, threads, base), m.speedup(case, other, threads, base)
        if s is None or so is None:
            return _missing(f"{case} at {base} and {threads} threads")
        details.append(f"{case}: {fs} {_x(s)}, {other} {_x(so)}")
        if s >= FLAT:
            statuses.append(FAILS)
        elif so >= SCALES:
            statuses.append(HOLDS)
        else:
            statuses.append(INCONCLUSIVE)
    return Outcome(_all(statuses), f"{_n(threads)} / {base}: " + "; ".join(details))


def beats(m: Measured, case: str, fs: str, other: str, threads: Iterable[int],
          most: bool = False) -> Outcome:
    """``fs`` is ahead of ``other`` (by LEAD) at every thread count, or at most of them."""
    found = {n: m.versus(case, fs, other, n) for n in threads}
    ratios = {n: r for n, r in found.items() if r is not None}
    if not found or len(ratios) < len(found):
        return _missing(f"{case} on {fs} and {other} at {sorted(found)} threads")
    wins = sum(r >= LEAD for r in ratios.values())
    need = len(ratios) // 2 + 1 if most else len(ratios)
    detail = f"{case} {fs}/{other}: " + ", ".join(
        f"{_x(r)} at {n}" for n, r in sorted(ratios.items()))
    if wins >= need:
        return Outcome(HOLDS, detail)
    return Outcome(FAILS, detail)


def converges(m: Measured, case: str, fs: str, other: str, low: int, high: int) -> Outcome:
    """``fs`` leads ``other`` at ``low`` threads and falls to its level by ``high``."""
    lo, hi = m.versus(case, fs, other, low), m.versus(case, fs, other, high)
    if lo is None or hi is None:
        return _missing(f"{case} on {fs} and {other} at {low} and {high} threads")
    detail = f"{case} {fs}/{other}: {_x(lo)} at {_n(low)}, {_x(hi)} at {high}"
    if lo < LEAD:
        return Outcome(INCONCLUSIVE, detail + f" ({fs} does not lead at {low})")
    return Outcome(HOLDS if hi < LEAD else FAILS, detail)


def all_of(outcomes: list[Outcome]) -> Outcome:
    """A claim made of several parts (cases), each tested alone: it holds if every
    measured part holds, fails if every measured part fails; mixed is inconclusive."""
    seen = [o for o in outcomes if o.status != MISSING]
    if not seen:
        return outcomes[0] if outcomes else _missing("any case")
    statuses = {o.status for o in seen}
    status = statuses.pop() if len(statuses) == 1 else INCONCLUSIVE
    return Outcome(status, "; ".join(o.detail for o in seen))


def _all(statuses: list[str]) -> str:
    """A claim over several cases: holds only if it holds in each."""
    if FAILS in statuses:
        return FAILS
    if INCONCLUSIVE in statuses or MISSING in statuses:
        return INCONCLUSIVE
    return HOLDS
