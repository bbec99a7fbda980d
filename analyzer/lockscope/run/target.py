"""What ``lockscope attach`` traces: processes by pid, command name, cgroup or systemd
unit, checked before anything is attached, and watched until they exit."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from .cgroups import cgroup_pids
from .host import cgroup2_root

PROC = Path("/proc")
CGROUP_ROOT = Path("/sys/fs/cgroup")
COMM_MAX = 15  # TASK_COMM_LEN - 1 (include/linux/sched.h)


@dataclass
class Target:
    """A resolved target: how it was named and the recorder's filter for it."""

    how: str                        # pid, comm, cgroup, unit
    value: str
    pids: list[int] = field(default_factory=list)
    comm: str | None = None
    cgroup: str | None = None

    def recorder_filter(self) -> list[str]:
        if self.how == "pid":
            return ["--pid", ",".join(map(str, self.pids))]
        if self.how == "comm":
            return ["--comm", self.comm or ""]
        return ["--cgroup", self.cgroup or ""]

    def alive_pids(self) -> list[int]:
        """Processes of the target now (empty: it has exited)."""
        if self.how == "pid":
            return [p for p in self.pids if _alive(p)]
        if self.how == "comm":
            return comm_pids(self.comm or "")
        return cgroup_pids(Path(self.cgroup or ""))

    def label(self) -> str:
        """A short name for titles and file names."""
        if self.how == "pid":
            names = sorted({process_comm(p) or str(p) for p in self.pids})
            return "+".join(names)[:40]
        if self.how == "comm":
            return self.comm or "comm"
        return Path(self.cgroup or "cgroup").name

    def facts(self) -> dict:
        pids = self.alive_pids() or self.pids
        return {"how": self.how, "value": self.value, "pids": pids,
                "comms": sorted({process_comm(p) or "?" for p in pids}),
                "comm": self.comm, "cgroup": self.cgroup}


def _alive(pid: int) -> bool:
    stat = PROC / str(pid) / "stat"
    try:
        # A zombie has exited: its threads no longer run.
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def process_comm(pid: int) -> str | None:
    try:
        return (PROC / str(pid) / "comm").read_text().strip()
    except OSError:
        return None


def comm_pids(comm: str) -> list[int]:
    """Processes with a thread named ``comm`` (the recorder filters threads by name)."""
    out = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            names = {(t / "comm").read_text().strip() for t in (entry / "task").iterdir()}
        except OSError:
            continue
        if comm in names:
            out.append(int(entry.name))
    return out


def resolve(pid: str | None = None, comm: str | None = None, cgroup: str | None = None,
            unit: str | None = None) -> Target:
    """Check the target; a bad one is one line and exit status 2 (UsageError)."""
    if pid is not None:
        pids = []
        for tok in pid.split(","):
            tok = tok.strip()
            if not tok.isdigit() or int(tok) <= 0:
                raise UsageError(f"--pid: not a process id: '{tok}'")
            if not _alive(int(tok)):
                raise UsageError(f"--pid: no such process: {tok}")
            pids.append(int(tok))
        return Target("pid", pid, pids=sorted(set(pids)))
    if comm is not None:
        if not comm or len(comm) > COMM_MAX:
            raise UsageError(f"--comm: a command name has 1 to {COMM_MAX} characters: '{comm}'")
        pids = comm_pids(comm)
        if not pids:
            raise UsageError(f"--comm: no running thread is named '{comm}'")
        return Target("comm", comm, pids=pids, comm=comm)
    if unit is not None:
        name = unit if "." in unit else f"{unit}.service"
        root = cgroup2_root() or CGROUP_ROOT
        path = root / "system.slice" / name
        if not (path / "cgroup.controllers").exists():
            raise UsageError(f"--unit: no cgroup for {name} (looked for {path}); "
                             "give its cgroup with --cgroup PATH")
        return Target("unit", unit, pids=cgroup_pids(path), cgroup=str(path))
    path = Path(cgroup or "")
    if not path.is_dir():
        raise UsageError(f"--cgroup: {cgroup} is not a directory")
    # Only cgroup v2 directories have cgroup.controllers
    # (kernel/cgroup/cgroup.c, cgroup_base_files).
    if not (path / "cgroup.controllers").exists():
        raise UsageError(f"--cgroup: {cgroup} is not a cgroup v2 directory")
    return Target("cgroup", cgroup or "", pids=cgroup_pids(path), cgroup=str(path.resolve()))
