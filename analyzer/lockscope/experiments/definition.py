"""What an experiment is: the published figures and claims, and the sweeps that rerun it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# Keys of one figure: (case, filesystem, thread count).
Key = tuple[str, str, int]


@dataclass(frozen=True)
class Ratio:
    """A ratio column: each figure over a base figure of the same case, either the same
    filesystem at ``base`` threads (``over="threads"``) or filesystem ``base`` at the same
    thread count (``over="fs"``)."""

    over: str          # "threads" | "fs"
    base: int | str
    header: str


@dataclass(frozen=True)
class Sweep:
    """One ``lockscope sweep`` of a case: its arguments (without --out and --runtime), and
    the thread counts and filesystems it measures."""

    case: str
    fss: tuple[str, ...]
    threads: tuple[int, ...]
    args: tuple[str, ...]
    job: dict | None = None   # an engine job (written to a job file and given as --job)


@dataclass(frozen=True)
class Outcome:
    status: str        # holds | does not hold | inconclusive | not measured
    detail: str        # the measured figures behind the status


@dataclass(frozen=True)
class Claim:
    """A published claim, tested on the measured figures. ``test`` returns an Outcome;
    ``why`` maps a status to the kernel rule that explains it on this kernel."""

    text: str
    test: Callable[[Measured], Outcome]
    why: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Scale:
    """How big a rerun is: the full set for the docs, or a quick one for the tests."""

    name: str
    runtime_s: float
    sizes: dict[str, str]     # named sizes the sweeps use (per experiment)
    repeat: int = 1


@dataclass(frozen=True)
class Experiment:
    number: int
    title: str
    published: str                  # the original description, as published
    tool: str                       # what reruns it here
    unit: str                       # the published figures' unit
    figures: dict[Key, float]       # published figures
    ratios: tuple[Ratio, ...]
    claims: tuple[Claim, ...]
    sweeps: Callable[[Scale], list[Sweep]]
    scaled: Callable[[Scale], str]  # the scaled-down parameters, in words
    notes: str = ""                 # what differs from the published setup


class Measured:
    """This kernel's figures (MiB/s) and lockscope's verdicts, looked up by key."""

    def __init__(self, mib_s: dict[Key, float], verdicts: dict[tuple[str, str], dict],
                 facts: dict[tuple[str, str], dict] | None = None) -> None:
        self.mib_s = mib_s
        self.verdicts = verdicts
        self.facts = facts or {}

    def get(self, case: str, fs: str, threads: int) -> float | None:
        return self.mib_s.get((case, fs, threads))

    def speedup(self, case: str, fs: str, threads: int, base: int = 1) -> float | None:
        return ratio(self.get(case, fs, threads), self.get(case, fs, base))

    def versus(self, case: str, fs: str, other: str, threads: int) -> float | None:
        return ratio(self.get(case, fs, threads), self.get(case, other, threads))

    def verdict(self, case: str, fs: str) -> str | None:
        v = self.verdicts.get((case, fs))
        return v.get("kind") if v else None


def ratio(num: float | None, den: float | None) -> float | None:
    if num is None or den is None or den <= 0:
        return None
    return num / den


def ratio_of(values: dict[Key, float], key: Key, r: Ratio) -> float | None:
    """Ratio ``r`` of the figure at ``key`` within ``values`` (published or measured)."""
    case, fs, threads = key
    base: Key = (case, fs, int(r.base)) if r.over == "threads" else (case, str(r.base), threads)
    if base == key:
        return None  # the base itself: 1 by definition, shown as such by the table
    return ratio(values.get(key), values.get(base))
