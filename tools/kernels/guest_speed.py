"""How fast this machine runs a matrix guest, and the time limits that follow from it.

Emulated guests (TCG) run at whatever speed the machine's CPUs and what runs beside them
allow: the same guest took 2.2-2.8 times as long on another machine of the same kind. So
no limit is fixed. Each guest first times a fixed piece of work (guest-run's calibration:
a shell loop and process starts, the two things the tests' Python and tools spend
emulated time on) against the seconds the same work took in the same guest in the
checked-in run (docs/kernel-matrix.json), where each guest's expected length was measured
too. The reference is per kernel: process starts cost each kernel its own (three guests
side by side, two runs: 6.12 9.6 and 13.1 s, 6.1 11.4 and 13.0 s, 5.10 12.2 and 14.1 s).
The ratio, never below 1, scales the guest's own limit and every wait of its tests
(LOCKSCOPE_TIME_SCALE, tests/support/patience.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

# a guest's limit is its expected length times the factor times this: what a guest's
# length varies by between runs at one speed (one guest took 1.4x another run's time)
MARGIN = 2.0
# a guest that has not written its speed yet (booting) is given this long
BOOT_SECONDS = 900.0
# the length of a guest the checked-in run has no figures of (a kernel new to the pins)
UNKNOWN_SECONDS = 1800.0
# the time kept at the end of a run for judging and reporting after the last guest
JUDGE_SECONDS = 120.0


# guest-run's steps that are a fixed piece of work too: the factor is raised to their
# ratio against the reference once each has run (the calibration alone, seconds long,
# once read 1.0 where the guest ran at a third of its reference speed)
FIXED_STEPS = ("install", "doctor")


@dataclass(frozen=True)
class Reference:
    """One guest in the checked-in run, brought to factor 1: its calibration's seconds,
    its fixed steps' seconds and its whole length."""

    calibration: float
    length: float
    steps: tuple[float, ...] = (0.0,) * len(FIXED_STEPS)    # FIXED_STEPS' seconds


def references(matrix_json: Path) -> dict[str, Reference]:
    """Each kernel's reference from the checked-in measurement (its figures divided by the
    factor it ran at, so the two always come from one run)."""
    try:
        doc = json.loads(matrix_json.read_text())
        got = {}
        for k in doc["kernels"]:
            speed = k.get("speed") or {}
            if speed.get("seconds"):
                f = float(speed.get("factor") or 1.0)
                got[k["release"]] = Reference(
                    float(speed["seconds"]) / f, float(k["seconds"]["wall"]) / f,
                    tuple(float(k["seconds"].get(s) or 0) / f for s in FIXED_STEPS))
        return got
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def reference_for(release: str, refs: dict[str, Reference]) -> Reference | None:
    """The kernel's own reference; for a kernel without one, the slowest calibration and
    longest length of the others (a longer wait, never a shorter one); None when the
    checked-in run has none at all."""
    if release in refs:
        return refs[release]
    if not refs:
        return None
    return Reference(max(r.calibration for r in refs.values()),
                     max(r.length for r in refs.values()),
                     tuple(max(r.steps[i] for r in refs.values())
                           for i in range(len(FIXED_STEPS))))


def read_speed(out: Path) -> tuple[float, float] | None:
    """(seconds, factor) from the guest's `speed` file, None until it wrote one."""
    try:
        seconds, f = (float(x) for x in (out / "speed").read_text().split()[:2])
    except (OSError, ValueError):
        return None
    return seconds, f


def limit(expected: float | None, speed: float | None, started: float, end_by: float | None
          ) -> float:
    """The monotonic time by which a guest started at `started` must have ended: its
    expected length times the measured factor (the boot allowance until it is measured),
    never past the run's own end (`end_by`, less the time to judge)."""
    if speed is None:
        until = started + BOOT_SECONDS
    else:
        until = started + (expected or UNKNOWN_SECONDS) * speed * MARGIN
    return min(until, end_by - JUDGE_SECONDS) if end_by is not None else until
