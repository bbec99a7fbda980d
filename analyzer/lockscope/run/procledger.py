"""Processes lockscope starts that must not outlive it (database servers), each in a
private cgroup written to a ledger before it exists.

A server started as a daemon survives a SIGKILL of lockscope and keeps its loop
filesystem busy. The ledger entry (owner pid, cgroup, server pid and its start
time) lets the next run, before it tears down stale loop filesystems
(loopfs.cleanup_stale), stop exactly those processes: every process in the
cgroup, and the recorded pid only if its start time still matches (a reused pid
is someone else's).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .cgroups import cgroup_members, end_cgroup
from .host import cgroup2_root
from .pids import pid_exists

LEDGER_DIR = Path(os.environ.get("LOCKSCOPE_PROC_LEDGER_DIR", "/run/lockscope/servers"))
GRACE_S = 10.0
# how long a stopped server's processes may stay zombies before stop() returns anyway
REAP_TIMEOUT_S = 10.0


def start_time(pid: int, zombie: bool = False) -> int | None:
    """Field 22 of /proc/PID/stat (clock ticks after boot), None if gone or (unless
    ``zombie``) a zombie: a process that ended but is not reaped yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    if fields[0] == "Z" and not zombie:
        return None
    return int(fields[19])


def _wait_reaped(seen: dict[int, int], timeout: float,
                 reap: Callable[[], object] | None = None) -> None:
    """Until none of ``seen`` (pid: start time) is in the process table any more, zombies
    included. A killed server process leaves its cgroup at once, but stays a zombie
    until its parent (init, for a daemon) reaps it; until then ps and pgrep still list
    it as the server's. ``reap`` is called at each look: where the caller is that parent
    (a server started as its child), nobody else would reap it before the timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if reap is not None:
            reap()
        if not any(start_time(pid, zombie=True) == start for pid, start in seen.items()):
            return
        time.sleep(0.05)


@dataclass
class Managed:
    """One server (or process group) lockscope started: how to find and stop it."""

    name: str
    cgroup: str = ""
    pid: int = 0
    pid_start: int = 0
    stop_signal: int = int(signal.SIGTERM)
    owner_pid: int = field(default_factory=os.getpid)
    # private directories made for it (socket, log), removed once it has stopped
    dirs: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    def _path(self) -> Path:
        return LEDGER_DIR / f"{self.name}.json"

    def save(self) -> None:
        LEDGER_DIR.mkdir(parents=True, exist_ok=True)
        tmp = self._path().with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self)))
        tmp.replace(self._path())

    def started(self, pid: int) -> None:
        """Record the main process once it runs."""
        self.pid, self.pid_start = pid, start_time(pid) or 0
        self.save()

    def pids(self) -> list[int]:
        out = cgroup_members(Path(self.cgroup)) if self.cgroup else []
        if self.pid and start_time(self.pid) == self.pid_start and self.pid not in out:
            out.append(self.pid)
        return out

    def stop(self, grace: float = GRACE_S, reap: Callable[[], object] | None = None) -> None:
        """The stop signal to the main process, then SIGKILL to whatever is left (the
        whole cgroup) after ``grace`` seconds; the cgroup, the private directories and
        the ledger entry go. Returns once every process of it that was seen is reaped
        (gone from the process table, not only from the cgroup); ``reap`` reaps the ones
        the caller is the parent of (``Popen.poll``). Safe to call more than once."""
        seen: dict[int, int] = {}

        def look() -> list[int]:
            pids = self.pids()
            for pid in pids:
                start = start_time(pid)
                if start is not None:
                    seen.setdefault(pid, start)
            return pids

        if self.pid and start_time(self.pid) == self.pid_start:
            look()
            _signal(self.pid, self.stop_signal)
        deadline = time.monotonic() + grace
        while look() and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.pid and start_time(self.pid) == self.pid_start:
            _signal(self.pid, signal.SIGKILL)
        if self.cgroup:
            end_cgroup(Path(self.cgroup))
        _wait_reaped(seen, REAP_TIMEOUT_S, reap)
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)
        self._path().unlink(missing_ok=True)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def new_cgroup(prefix: str) -> Path | None:
    """A path for a new cgroup v2 directory (not made yet), or None without cgroup v2."""
    root = cgroup2_root()
    if root is None:
        return None
    return root / f"{prefix}{os.getpid()}-{time.monotonic_ns()}"


def manage(name: str, stop_signal: int = signal.SIGTERM, cgroup_prefix: str | None = None,
           **extra) -> Managed:
    """A ledger entry, saved, with its cgroup made (when cgroup v2 is mounted): whatever
    is started into it from here on is cleaned up after a kill."""
    cg = new_cgroup(cgroup_prefix) if cgroup_prefix else None
    name = f"{name}-{os.getpid()}-{time.monotonic_ns()}"
    entry = Managed(name=name, cgroup=str(cg or ""), stop_signal=int(stop_signal), extra=extra)
    entry.save()  # ledger first: a crash below is still cleaned up
    if cg is not None:
        cg.mkdir()
    return entry



def cleanup_stale() -> list[str]:
    """Stop the processes of ledger entries whose lockscope process no longer exists."""
    cleaned: list[str] = []
    if not LEDGER_DIR.is_dir():
        return cleaned
    for path in sorted(LEDGER_DIR.glob("*.json")):
        try:
            entry = Managed(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            continue
        if pid_exists(entry.owner_pid):
            continue
        entry.stop()
        cleaned.append(entry.name)
    return cleaned
