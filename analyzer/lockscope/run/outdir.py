"""Directories lockscope writes into: the output directory of a command that records
(sweep, attach, experiments), and every other option that names where files go, checked
before anything is made."""

from __future__ import annotations

import datetime
import os
import tempfile
from pathlib import Path

from ..errors import UsageError


def check_dir(path: str | os.PathLike, option: str, *, fresh: bool = False) -> None:
    """That ``path`` is a directory lockscope can write into, or can be made as one;
    ``fresh``: an output directory, which must not hold a recording yet. A bad one is
    one line (exit status 2) before anything is made: the nearest directory that exists
    on the way must take a new directory (a probe, removed at once), which also refuses
    pseudo filesystems (/proc), read-only mounts and directories without write access."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{option}: {p} exists and is not a directory")
    if fresh and (p / "results.json").exists():
        raise UsageError(f"{option}: {p}/results.json exists; choose a new directory")
    existing = p
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{option}: cannot make {p}: {existing} is not a directory")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".lockscope-check-", dir=existing))
    except OSError as exc:
        raise UsageError(f"{option}: cannot make {p}: {exc.strerror or exc}") from None


def default_out_dir(prefix: str) -> Path:
    return Path(datetime.datetime.now().strftime(f"{prefix}-%Y%m%d-%H%M%S"))


def new_out_dir(given: str | None, prefix: str) -> Path:
    """``given``, or ``<prefix>-<timestamp>`` here; never one that already holds a recording."""
    out = Path(given) if given else default_out_dir(prefix)
    check_dir(out, "--out", fresh=True)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out: cannot make {out}: {exc.strerror or exc}") from None
    return out
