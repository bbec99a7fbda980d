"""Where a command's processes are traced: a cgroup v2 directory made for the point
(all descendants, forked or not), or, without cgroup v2, the pids the sweep started.

The cgroup's name carries the sweep's pid: after a kill, the next sweep finds cgroups
whose owner is gone, ends what still runs in them and removes them.
"""

from __future__ import annotations

import os
import re
from itertools import count
from pathlib import Path

from ..cgroups import end_cgroup
from ..host import cgroup2_root
from ..pids import pid_exists

PREFIX = "lockscope-cmd-"
NAME = re.compile(rf"^{PREFIX}([0-9]+)-[0-9]+$")
_serial = count()


class Scope:
    """A cgroup made for one point (``path``), or None for pid tracing."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    @classmethod
    def make(cls) -> Scope:
        root = cgroup2_root()
        if root is None or not os.access(root, os.W_OK):
            return cls(None)
        path = root / f"{PREFIX}{os.getpid()}-{next(_serial)}"
        try:
            path.mkdir()
        except OSError:
            return cls(None)
        return cls(path)

    @property
    def procs(self) -> str:
        """The file a process writes its pid into to join ("" for pid tracing)."""
        return str(self.path / "cgroup.procs") if self.path else ""

    def recorder_filter(self, pids: list[int]) -> list[str]:
        if self.path:
            return ["--cgroup", str(self.path)]
        return ["--pid", ",".join(map(str, pids))]

    def remove(self) -> None:
        """End whatever still runs in the cgroup and remove it."""
        if self.path:
            end_cgroup(self.path)
            self.path = None


def cleanup_stale() -> list[str]:
    """Remove the point cgroups of sweeps that no longer run."""
    root = cgroup2_root()
    cleaned: list[str] = []
    if root is None:
        return cleaned
    try:
        entries = list(root.iterdir())
    except OSError:
        return cleaned
    for entry in entries:
        m = NAME.match(entry.name)
        if m and not pid_exists(int(m.group(1))):
            end_cgroup(entry)
            cleaned.append(str(entry))
    return cleaned
