"""The output directory of a command that records (sweep, attach)."""

from __future__ import annotations

import datetime
from pathlib import Path

from ..errors import UsageError


def new_out_dir(given: str | None, prefix: str) -> Path:
    """``given``, or ``<prefix>-<timestamp>`` here; never one that already holds a recording."""
    out = Path(given or datetime.datetime.now().strftime(f"{prefix}-%Y%m%d-%H%M%S"))
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} exists and is not a directory")
    if (out / "results.json").exists():
        raise UsageError(f"--out: {out}/results.json exists; choose a new directory")
    out.mkdir(parents=True, exist_ok=True)
    return out
