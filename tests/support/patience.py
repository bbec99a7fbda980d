"""How long the tests wait: every wait (a timeout, a deadline) goes through ``patience``.

The kernel tests also run in QEMU guests under emulation (no KVM), several times slower
than the machine their waits were tuned on. tools/kernels measures how much slower a guest
is and exports the factor as LOCKSCOPE_TIME_SCALE (unset: 1, as on that machine). Only
upper bounds on waiting are scaled, never a workload's duration or a measured threshold.
"""

from __future__ import annotations

import math
import os

VARIABLE = "LOCKSCOPE_TIME_SCALE"


def _scale(raw: str | None) -> float:
    if not raw:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 1:
        raise SystemExit(f"{VARIABLE}={raw!r}: the tests' time scale must be a finite "
                         "number >= 1")
    return value


SCALE: float = _scale(os.environ.get(VARIABLE))


def patience(seconds: float) -> float:
    """``seconds`` of waiting on the machine the waits were tuned on, here."""
    return seconds * SCALE
