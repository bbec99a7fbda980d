"""Run the matrix as a slower machine would (run-matrix --cpu-share F): each CPU at F of
this one's speed. So each guest's emulator is held to F of one CPU, and all the guests
together to F of all the CPUs: three guests on a 2-CPU machine at half speed share one
CPU's worth, as they would there, and a guest left alone gets its F of a CPU back.
A CPU cgroup for the run (the machine) with one per guest inside it, each with a CFS
quota: cgroup v1's `cpu` controller (cpu.cfs_quota_us over cpu.cfs_period_us) where it
is mounted, else cgroup v2's cpu.max. Each cgroup is removed when its guest or the run
ends; those a killed run left are removed by the next (their processes are gone)."""

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
    """Remove the cgroups an earlier run left, guests' before the run's (rmdir refuses
    one still in use, or with a cgroup inside)."""
    try:
        root, _ = controller_root()
    except (CpuLimitError, OSError):
        return
    for d in root.glob(PREFIX + "*"):
        for inner in (d.glob("*") if d.is_dir() else []):
            if inner.is_dir():
                try:
                    inner.rmdir()
                except OSError:
                    pass
        try:
            d.rmdir()
        except OSError:
            pass


class CpuLimit:
    """A cgroup holding what joins it to `share` of one CPU; inside `parent` (another
    CpuLimit) when given, which holds it and its siblings together."""

    def __init__(self, name: str, share: float, parent: CpuLimit | None = None) -> None:
        if not 0 < share <= 1024:
            raise CpuLimitError(f"CPU share {share} out of range (0, 1024]")
        root, self.v2 = controller_root()
        if parent is not None:
            root = parent.path
            if self.v2:
                subtree = root / "cgroup.subtree_control"
                if "cpu" not in subtree.read_text().split():
                    subtree.write_text("+cpu")
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


def machine_limit(share: float) -> CpuLimit:
    """The run's cgroup: `share` of each of this machine's CPUs, all guests together."""
    return CpuLimit("machine", share * (os.cpu_count() or 1))
