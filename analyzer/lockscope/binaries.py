"""Find lockscope's C binaries: installed next to the package, or built in the checkout."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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
