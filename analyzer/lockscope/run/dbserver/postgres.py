"""PostgreSQL started for a measurement: its own datadir, a private socket directory, no
TCP, a port no other server uses, the postmaster and every backend in a private cgroup
recorded in the process ledger (procledger) so that a killed lockscope does not leave
them running. Backends are children of the postmaster, not its threads: the cgroup (or
their command name) covers them, its pid alone would not."""

from __future__ import annotations

import shutil
import signal
import tempfile
from pathlib import Path

from ...errors import LockscopeError
from .. import procledger
from .common import Lifecycle, Server, as_user, free_port, give_to, into_cgroup, run_checked
from .templates import make_datadir

USER = "postgres"
# how initdb makes a datadir (a template made elsewhere must be made so too)
INITDB_ARGS = ["-A", "trust", "-N"]
STOP_GRACE_S = 30


def pg_bin(root: Path = Path("/")) -> Path | None:
    """The newest installed PostgreSQL's bin directory (Debian: /usr/lib/postgresql/N/bin);
    of the root filesystem at `root`, as its own host sees it."""
    versions = [d.name for d in (root / "usr/lib/postgresql").glob("*")
                if d.name.isdigit() and (d / "bin" / "postgres").exists()]
    return Path("/usr/lib/postgresql", max(versions, key=int), "bin") if versions else None


def missing() -> str | None:
    """What keeps a PostgreSQL server from starting here, or None."""
    if pg_bin() is None:
        return "PostgreSQL is not installed (apt install postgresql-15)"
    if not shutil.which("runuser"):
        return "runuser is not installed (util-linux)"
    return None


class Postgres(Lifecycle):
    """postgres with its datadir under ``base``; a context manager that stops it on every
    exit path. Trust login as ``postgres`` over the private socket directory.
    ``made_above``: as for MariaDB, the highest directory lockscope made above ``base``."""

    kind = "postgres"
    comm = "postgres"

    def __init__(self, base: Path, options: list[str] | None = None,
                 made_above: Path | None = None, slowness: float = 1.0):
        self.slowness = slowness
        self.base = Path(base)
        self.made_above = made_above
        self.datadir = self.base / "pgdata"
        self.options = list(options or [])
        self.port = 0
        self.rundir: Path | None = None
        self.pid = 0
        self.entry: procledger.Managed | None = None
        self.bin = pg_bin()
        self.template: Path | None = None     # the datadir was copied from this

    @property
    def log(self) -> Path:
        return (self.rundir or self.base) / "server.log"

    def start(self, timeout: float = 120) -> None:
        why = missing()
        if why:
            raise LockscopeError(why)
        assert self.bin is not None
        timeout *= self.slowness
        self.datadir.mkdir(parents=True)
        give_to(USER, self.base, self.made_above)
        # The socket directory is short-named in /tmp: a socket path has at most 107
        # bytes (struct sockaddr_un), and a --target may be deep.
        self.entry = procledger.manage("postgres", signal.SIGQUIT, "lockscope-postgres-",
                                       datadir=str(self.datadir))
        self.rundir = Path(tempfile.mkdtemp(prefix="lockscope-pg-"))
        self.entry.dirs.append(str(self.rundir))
        self.entry.save()
        give_to(USER, self.rundir)
        initdb = [str(self.bin / "initdb"), "-D", str(self.datadir), *INITDB_ARGS]
        self.template = make_datadir(
            self.kind, str(self.bin / "postgres"), INITDB_ARGS, self.datadir,
            lambda: run_checked(as_user(USER, initdb), "initdb",
                                timeout=self.SET_UP_S * self.slowness))
        self.port = free_port()
        opts = [f"-p {self.port}", f"-k {self.rundir}", "-c listen_addresses=",
                "-c shared_buffers=128MB", "-c max_connections=200"]
        opts += [f"-c {o}" for o in self.options]
        run_checked(into_cgroup(as_user(USER, [
            str(self.bin / "pg_ctl"), "-D", str(self.datadir), "-l", str(self.log), "-w",
            "-t", f"{timeout:.0f}", "-o", " ".join(opts), "start"]), self.entry.cgroup),
            # a session of its own: a Ctrl-C at the terminal reaches lockscope, which
            # stops the server after the point, not the postmaster directly
            "pg_ctl start", timeout=timeout + 10, start_new_session=True)
        self.pid = int((self.datadir / "postmaster.pid").read_text().split()[0])
        self.entry.started(self.pid)

    def stop(self) -> None:
        """Immediate shutdown (SIGQUIT: the postmaster kills its backends; the data is
        thrown away), SIGKILL for whatever is left in its cgroup; safe to call twice."""
        if self.entry is not None:
            self.entry.stop(STOP_GRACE_S)
        elif self.rundir is not None:
            shutil.rmtree(self.rundir, ignore_errors=True)

    def server(self) -> Server:
        return Server(self.kind, self.pid, self.datadir, str(self.rundir), self.port,
                      self.comm, cgroup=self.entry.cgroup if self.entry else "",
                      log=str(self.log))


def pgbench_argv(server: Server) -> list[str]:
    """pgbench as user postgres against the server's socket directory and port."""
    b = pg_bin()
    return as_user(USER, [str(b / "pgbench") if b else "pgbench", "-h", server.socket,
                          "-p", str(server.port), "-U", "postgres"])


def psql(server: Server, sql: str) -> str:
    b = pg_bin()
    return run_checked(as_user(USER, [str(b / "psql") if b else "psql", "-h", server.socket,
                                      "-p", str(server.port), "-U", "postgres", "-At",
                                      "-c", sql]), "psql")
