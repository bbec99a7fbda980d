"""Hold a guest's emulator to a share of one CPU (run-matrix --cpu-share): how the matrix
is tried as a slower machine would run it. A CPU cgroup per guest, with a CFS quota:
cgroup v1's `cpu` controller (cpu.cfs_quota_us over cpu.cfs_period_us) where it is
mounted, else cgroup v2's cpu.max. Each cgroup is removed when its guest ends; one a
killed run left is removed by the next (its processes are gone by then)."""

from __future__ import annotations

import os
from pathlib import Path

PREFIX = "lockscope-matrix-"
PERIOD_US = 100_000


class CpuLimitError(RuntimeError):
    """No CPU controller to hold the guests with."""


def _mounts() -> list[tuple[str, str, list[str]]]:
    got = []
    for line in Path("/proc/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 4:
            got.append((parts[2], parts[1], parts[3].split(",")))
    return got


def controller_root() -> tuple[Path, bool]:
    """(the directory to make cgroups in, whether it is cgroup v2)."""
    for fstype, where, opts in _mounts():
        if fstype == "cgroup" and "cpu" in opts:
            return Path(where), False
    for fstype, where, _ in _mounts():
        root = Path(where)
        if fstype == "cgroup2" and "cpu" in (root / "cgroup.controllers").read_text().split():
            subtree = root / "cgroup.subtree_control"
            if "cpu" not in subtree.read_text().split():
                subtree.write_text("+cpu")
            return root, True
    raise CpuLimitError("no cgroup CPU controller is mounted (v1 cpu or v2 with cpu)")


def clean_stale() -> None:
    """Remove the cgroups an earlier run left (rmdir refuses one still in use)."""
    try:
        root, _ = controller_root()
    except (CpuLimitError, OSError):
        return
    for d in root.glob(PREFIX + "*"):
        try:
            d.rmdir()
        except OSError:
            pass


class CpuLimit:
    """A cgroup holding what joins it to `share` of one CPU."""

    def __init__(self, name: str, share: float) -> None:
        if not 0 < share <= 64:
            raise CpuLimitError(f"CPU share {share} out of range (0, 64]")
        root, self.v2 = controller_root()
        self.path = root / (PREFIX + name)
        self.path.mkdir(exist_ok=True)
        quota = max(1000, int(share * PERIOD_US))
        if self.v2:
            (self.path / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        else:
            (self.path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (self.path / "cpu.cfs_quota_us").write_text(str(quota))

    def join(self) -> None:
        """Move the calling process into the cgroup (a Popen's preexec_fn: its children,
        the emulator among them, are born inside)."""
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def throttled_seconds(self) -> float:
        """How long the quota held the cgroup back, for the run's record."""
        stat = self.path / "cpu.stat"
        try:
            fields = dict(line.split() for line in stat.read_text().splitlines())
        except (OSError, ValueError):
            return 0.0
        if "throttled_usec" in fields:
            return int(fields["throttled_usec"]) / 1e6
        return int(fields.get("throttled_time", 0)) / 1e9

    def remove(self) -> None:
        try:
            self.path.rmdir()
        except OSError:
            pass
