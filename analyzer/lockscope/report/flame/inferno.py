"""Find and run inferno (``inferno-flamegraph``, ``inferno-diff-folded``).

inferno is a Rust program installed by cargo, so besides PATH we also look in
``$CARGO_HOME/bin`` and ``~/.cargo/bin``: a root shell or a venv often lacks
those on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ...errors import LockscopeError

INSTALL = "cargo install inferno --locked"
MISSING_NOTE = ("flame graphs skipped: inferno-flamegraph not found on PATH or in ~/.cargo/bin "
                f"(install it with `{INSTALL}`)")
TIMEOUT_S = 300


class InfernoError(LockscopeError):
    """inferno ran but failed; the message carries its last line of stderr."""


def find_tool(name: str) -> str | None:
    """Path of a cargo-installed tool, or None."""
    found = shutil.which(name)
    if found:
        return found
    dirs = []
    if os.environ.get("CARGO_HOME"):
        dirs.append(Path(os.environ["CARGO_HOME"]) / "bin")
    dirs.append(Path.home() / ".cargo" / "bin")
    for d in dirs:
        cand = d / name
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return None


@dataclass(frozen=True)
class Inferno:
    """Paths of the two inferno programs lockscope uses."""

    flamegraph: str
    diff_folded: str | None

    def render(self, folded: Path, svg: Path, *, title: str, subtitle: str, countname: str,
               colors: str = "hot", minwidth: float = 0.05, negate: bool = False) -> Path:
        """Draw `folded` into `svg` (inferno's interactive SVG)."""
        # --notes stamps the SVG so a later run knows it may overwrite it.
        cmd = [self.flamegraph, "--title", title, "--countname", countname,
               "--colors", colors, "--minwidth", str(minwidth), "--hash",
               "--notes", "lockscope report"]
        if subtitle:
            cmd += ["--subtitle", subtitle]
        if negate:
            cmd.append("--negate")
        cmd.append(str(folded))
        with open(svg, "wb") as out:
            res = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, timeout=TIMEOUT_S)
        if res.returncode != 0:
            raise InfernoError(f"inferno-flamegraph failed on {folded}: {_last_line(res.stderr)}")
        return svg

    def diff(self, before: Path, after: Path, out: Path, *, normalize: bool = True) -> Path:
        """Write the two-column differential folded file of before → after."""
        if not self.diff_folded:
            raise InfernoError(f"inferno-diff-folded not found (install it with `{INSTALL}`)")
        cmd = [self.diff_folded] + (["--normalize"] if normalize else []) + [str(before),
                                                                            str(after)]
        with open(out, "wb") as fh:
            res = subprocess.run(cmd, stdout=fh, stderr=subprocess.PIPE, timeout=TIMEOUT_S)
        if res.returncode != 0:
            raise InfernoError(f"inferno-diff-folded failed: {_last_line(res.stderr)}")
        return out


def _last_line(stderr: bytes) -> str:
    lines = [ln for ln in stderr.decode(errors="replace").splitlines() if ln.strip()]
    return lines[-1] if lines else "no message"


def find_inferno() -> Inferno | None:
    """The installed inferno, or None (callers then skip flame graphs with MISSING_NOTE)."""
    flame = find_tool("inferno-flamegraph")
    if not flame:
        return None
    return Inferno(flame, find_tool("inferno-diff-folded"))
