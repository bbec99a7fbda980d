"""Human-readable numbers for tables and captions: durations, sizes, shares, counts."""

from __future__ import annotations

import math
from typing import Any


def _num(value: Any) -> float | None:
    """A finite float, or None for missing / non-numeric / NaN values."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def duration_ns(value: Any) -> str:
    """``1234567`` → ``1.23 ms``; ``-`` when unknown."""
    v = _num(value)
    if v is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.0f} ns"


def size_bytes(value: Any) -> str:
    """``4294967296`` → ``4.0 GiB``."""
    v = _num(value)
    if v is None:
        return "-"
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(v) >= scale:
            return f"{v / scale:.1f} {unit}"
    return f"{v:.0f} B"


def share(value: Any, digits: int = 0) -> str:
    """``0.853`` → ``85%``."""
    v = _num(value)
    return "-" if v is None else f"{100 * v:.{digits}f}%"


def count(value: Any) -> str:
    """``1234567`` → ``1,234,567``."""
    v = _num(value)
    return "-" if v is None else f"{v:,.0f}"


def number(value: Any, digits: int = 1) -> str:
    """A plain number with fixed decimals; ``-`` when unknown."""
    v = _num(value)
    return "-" if v is None else f"{v:,.{digits}f}"


def ratio(value: Any) -> str:
    """``3.91`` → ``3.9x``."""
    v = _num(value)
    return "-" if v is None else f"{v:.1f}x"


def as_float(value: Any) -> float | None:
    """Public alias of the numeric check, for plots and models."""
    return _num(value)
