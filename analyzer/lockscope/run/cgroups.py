"""Who is in a cgroup v2 directory, and ending them all: the one place lockscope reads
cgroup membership (``cgroup.procs``)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def cgroup_members(path: Path) -> list[int]:
    """The processes directly in ``path`` (not in its child cgroups)."""
    try:
        return [int(p) for p in (path / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def end_cgroup(path: Path, timeout: float = 10.0) -> None:
    # cgroup.kill (kernel/cgroup/cgroup.c, cgroup_kill_write) kills the whole subtree,
    # forks included; where it is missing, SIGKILL each member until none is left.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        members = cgroup_members(path)
        if not members:
            break
        if (path / "cgroup.kill").exists():
            try:
                (path / "cgroup.kill").write_text("1")
            except OSError:
                pass
        else:
            for pid in members:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        time.sleep(0.05)
    while time.monotonic() < deadline:
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)  # the last member is still being reaped


def cgroup_pids(path: Path) -> list[int]:
    """The processes in ``path`` and every cgroup below it."""
    out: list[int] = []
    try:
        for procs in [path / "cgroup.procs", *path.rglob("cgroup.procs")]:
            out += [int(x) for x in procs.read_text().split()]
    except OSError:
        pass
    return sorted(set(out))
