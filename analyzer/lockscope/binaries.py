"""Find lockscope's C binaries: installed next to the package, or built in the checkout."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from .errors import LockscopeError

_PACKAGE_BIN = Path(__file__).resolve().parent / "_bin"
# analyzer/lockscope/binaries.py -> checkout root
_CHECKOUT_BIN = Path(__file__).resolve().parents[2] / "build" / "bin"


def find_binary(name: str) -> str:
    """Return the path of ``name`` (e.g. ``lockscope-record``), or raise with how to build it."""
    candidates = []
    if os.environ.get("LOCKSCOPE_BIN_DIR"):
        candidates.append(Path(os.environ["LOCKSCOPE_BIN_DIR"]) / name)
    candidates += [_CHECKOUT_BIN / name, _PACKAGE_BIN / name]
    for cand in candidates:
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    found = shutil.which(name)
    if found:
        return found
    raise LockscopeError(f"{name} not found: run 'make' in the lockscope checkout "
                         "or 'pip install .' to build it")


@functools.cache
def recorder_facts() -> dict[str, Any]:
    """The recorder's fixed names (``lockscope-record --list-facts``): the system calls
    it follows by kind (``syscalls.write``, ``.sync``, ``.sync_range``, ``.received``,
    ``.sent``), the
    DIO write classes, the inode lock kinds and the attach kinds. Read once per process;
    it loads nothing and needs no root."""
    exe = find_binary("lockscope-record")
    try:
        res = subprocess.run([exe, "--list-facts"], capture_output=True, text=True, timeout=60)
        facts = json.loads(res.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError) as e:
        raise LockscopeError(f"{exe} --list-facts: {e}") from None
    if res.returncode or not isinstance(facts, dict):
        raise LockscopeError(f"{exe} --list-facts failed: {res.stderr.strip()[:200]}")
    return facts


def recorder_syscalls(kind: str) -> tuple[str, ...]:
    """The system calls the recorder follows of one kind: write, sync (durability),
    sync_range (starts writeback only), received, sent."""
    return tuple(str(n) for n in recorder_facts()["syscalls"][kind])
