"""Never overwrite a file lockscope did not create.

A path may be (re)written when it does not exist, when it carries lockscope's
stamp (reports, plot PNGs, flame graph SVGs and follow scripts name their
generator near the top), or when the manifest of its directory (``.lockscope-files``) lists it
because lockscope wrote it last time (folded stacks cannot carry a stamp). Otherwise
writing is refused unless the user passed ``--force``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import UsageError

MARKER = "lockscope report"
MANIFEST = ".lockscope-files"
_HEAD = 4096
# Exact generator stamps, so a text that merely mentions lockscope is not taken for ours.
STAMPS = (
    b'<meta name="generator" content="lockscope report',   # HTML
    b"<!-- generator: lockscope report",                   # Markdown
    b'"generator": "lockscope report',                     # JSON
    b"Software\x00lockscope report",                       # PNG tEXt chunk
    b"<!--NOTES: lockscope report",                        # inferno SVG (--notes)
    b"// generator: lockscope follow",                     # bpftrace script (follow)
)


def _manifest(directory: Path) -> set[str]:
    try:
        data = json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError):
        return set()
    return {str(x) for x in data.get("files", [])} if isinstance(data, dict) else set()


def carries_marker(path: Path) -> bool:
    """True when the file's first bytes name lockscope report as their generator."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD)
    except OSError:
        return False
    return any(stamp in head for stamp in STAMPS)


class OutputGuard:
    """Checks each path before it is written and remembers what was written."""

    def __init__(self, force: bool = False):
        self.force = force
        self.written: dict[Path, set[str]] = {}

    def claim(self, path: str | os.PathLike, stamped: bool = True) -> Path:
        """Allow writing `path` or raise a one-line UsageError saying how to force it.

        `stamped` says the file will carry a generator stamp; unstamped files
        (folded stacks) are listed in their directory's manifest instead.
        """
        p = Path(path)
        if p.exists() and not self.force:
            if p.is_dir():
                raise UsageError(f"refusing to write {p}: it is a directory")
            if not (carries_marker(p) or p.name in _manifest(p.parent)):
                raise UsageError(f"refusing to overwrite {p}: it was not written by lockscope "
                                 "(choose another -o, or pass --force to overwrite it)")
        if not stamped:
            self.written.setdefault(p.parent, set()).add(p.name)
        return p

    def save(self) -> None:
        """Add this run's files to each directory's manifest."""
        for directory, names in self.written.items():
            if not directory.is_dir():
                continue
            keep = {n for n in _manifest(directory) | names if (directory / n).exists()}
            tmp = directory / (MANIFEST + ".tmp")
            tmp.write_text(json.dumps({"generator": MARKER, "files": sorted(keep)}, indent=1)
                           + "\n")
            os.replace(tmp, directory / MANIFEST)
