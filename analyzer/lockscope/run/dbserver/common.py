"""What MariaDB and PostgreSQL servers have in common: the running server's handle,
a free port, waiting for readiness, and running as the server's own user."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from ...errors import LockscopeError

_S = TypeVar("_S", bound="Lifecycle")


class Lifecycle:
    """A server as a context manager: started on entry, stopped on exit, and stopped
    again when starting fails half way (a process or ledger entry may already exist).
    ``slowness``: how many times slower than a usual machine this one runs (an emulated
    one: several); the limits on making the datadir and on starting are multiplied by it."""

    # the longest a new datadir (initdb, mariadb-install-db) may take, at slowness 1
    SET_UP_S = 180
    slowness = 1.0

    def start(self, timeout: float = 120) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self: _S) -> _S:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class Server:
    """A running database: its pid, datadir, socket, port, and how to reach it."""

    kind: str                     # "mariadb" or "postgres"
    pid: int
    datadir: Path
    socket: str                   # socket file (MariaDB) or socket directory (PostgreSQL)
    port: int
    comm: str                     # the command name of its threads or processes
    cgroup: str = ""              # every process of the server ("" without cgroup v2)
    log: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def dsn(self) -> str:
        """The login for lockscope attach (--mysql SOCKET / --postgres DSN)."""
        if self.kind == "mariadb":
            return self.socket
        return f"host={self.socket} port={self.port} user=postgres dbname=postgres"

    def facts(self) -> dict:
        """What results.json keeps of it."""
        return {"kind": self.kind, "pid": self.pid, "datadir": str(self.datadir),
                "socket": self.socket, "port": self.port, "comm": self.comm,
                "cgroup": self.cgroup or None}


def free_port() -> int:
    """A TCP port nothing listens on now: the kernel picks it for a bind to port 0. The
    servers listen on no TCP socket; the port names their socket and lock files."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(ready: Callable[[], bool], timeout: float, what: str,
             proc: subprocess.Popen | None = None, log: Path | None = None) -> None:
    """Poll until ready; a process that exits first, or the timeout, is an error carrying
    the last line of the server's log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        if proc is not None and proc.poll() is not None:
            raise LockscopeError(f"{what} exited {proc.returncode} while starting"
                                 + _log_tail(log))
        time.sleep(0.1)
    raise LockscopeError(f"{what} did not start within {timeout:.0f} s" + _log_tail(log))


def _log_tail(log: Path | None) -> str:
    try:
        lines = [ln for ln in (log.read_text(errors="replace") if log else "").splitlines()
                 if ln.strip()]
    except OSError:
        return ""
    return f": {lines[-1].strip()}" if lines else ""


def into_cgroup(argv: list[str], cgroup: str) -> list[str]:
    """argv started inside ``cgroup`` (so that everything it forks is too): a shell moves
    itself there and execs the command, keeping its pid."""
    if not cgroup:
        return argv
    return ["sh", "-c", f'echo $$ > "{cgroup}/cgroup.procs" && exec "$@"', "sh"] + argv


def as_user(user: str, argv: list[str]) -> list[str]:
    return ["runuser", "-u", user, "--"] + argv


def run_checked(argv: list[str], what: str, timeout: float = 300, **kw) -> str:
    """Run a setup step; failure is one line with the tool's last output line."""
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    except FileNotFoundError:
        raise LockscopeError(f"{what}: {argv[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise LockscopeError(f"{what} took more than {timeout:.0f} s") from None
    if res.returncode != 0:
        lines = (res.stderr.strip() or res.stdout.strip()).splitlines()
        raise LockscopeError(f"{what} exited {res.returncode}"
                             + (f": {lines[-1].strip()}" if lines else ""))
    return res.stdout


def user_can_enter(user: str, path: Path) -> bool:
    """Whether ``user`` can reach and write ``path`` (every parent searchable)."""
    res = subprocess.run(as_user(user, ["test", "-w", str(path), "-a", "-x", str(path)]),
                         capture_output=True)
    return res.returncode == 0


def give_to(user: str, path: Path, made_above: Path | None = None) -> None:
    """Hand a directory lockscope made to the server's user. Parents up to
    ``made_above`` (also lockscope's) become searchable by others; nothing above is
    changed: a directory the user cannot reach is an error saying so."""
    subprocess.run(["chown", "-R", f"{user}:{user}", str(path)], check=True)
    if made_above is not None and made_above in path.parents:
        p = path
        while p != made_above:
            p = p.parent
            os.chmod(p, os.stat(p).st_mode | 0o011)
    if not user_can_enter(user, path):
        raise LockscopeError(f"user {user} cannot reach {path}: a directory above it is "
                             "not searchable by others (chmod o+x it, or use a loop image)")
