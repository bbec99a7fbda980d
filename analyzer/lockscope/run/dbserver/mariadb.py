"""MariaDB started for a measurement: its own datadir, a private socket, no TCP, a port
no other server uses, every process in a private cgroup recorded in the process ledger
(procledger) so that a killed lockscope does not leave it running."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

from ...errors import LockscopeError
from .. import procledger
from .common import Lifecycle, Server, free_port, give_to, into_cgroup, run_checked, wait_for
from .templates import make_datadir

USER = "mysql"
# A clean shutdown flushes the buffer pool; the data is thrown away afterwards, so it
# gets this long before it is killed.
STOP_GRACE_S = 30
# how mariadb-install-db makes a datadir (a template made elsewhere must be made so too)
INSTALL_DB_ARGS = ["--no-defaults", f"--user={USER}", "--auth-root-authentication-method=normal",
                   "--skip-test-db"]


def mariadbd_binary() -> str | None:
    """The server binary (Debian installs it in /usr/sbin, often off PATH), or None."""
    return shutil.which("mariadbd") or (
        "/usr/sbin/mariadbd" if os.path.exists("/usr/sbin/mariadbd") else None)


def missing() -> str | None:
    """What keeps a MariaDB server from starting here, or None."""
    if mariadbd_binary() is None:
        return "mariadbd is not installed (apt install mariadb-server)"
    for tool in ("mariadb-install-db", "mariadb"):
        if not shutil.which(tool):
            return f"{tool} is not installed (apt install mariadb-server)"
    return None


def mysql_query(sock: str, sql: str, check: bool = False) -> str | None:
    """One statement as root over the socket; its output, or None when it failed."""
    res = subprocess.run(["mariadb", "--no-defaults", "-uroot", f"--socket={sock}", "-N",
                          "-e", sql], capture_output=True, text=True)
    if res.returncode != 0:
        if check:
            lines = res.stderr.strip().splitlines()
            raise LockscopeError(f"mariadb -e {sql!r}: {lines[-1] if lines else res.returncode}")
        return None
    return res.stdout


class MariaDB(Lifecycle):
    """mariadbd with its data directory under ``base`` (e.g. a loop filesystem), a
    private socket there; a context manager that stops it on every exit path. Root logs
    in without a password over the socket. The server runs as the ``mysql`` user;
    ``made_above`` is the highest directory above ``base`` that lockscope made (it and
    those below it are opened for the user; nothing above is changed)."""

    kind = "mariadb"
    comm = "mariadbd"

    def __init__(self, base: Path, options: list[str] | None = None,
                 made_above: Path | None = None, slowness: float = 1.0):
        self.slowness = slowness
        self.base = Path(base)
        self.made_above = made_above
        self.datadir = self.base / "data"
        self.socket = str(self.base / "mariadbd.sock")
        self.log = self.base / "mariadbd.log"
        self.options = list(options or [])
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.entry: procledger.Managed | None = None
        self.template: Path | None = None     # the datadir was copied from this

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 120) -> None:
        why = missing()
        if why:
            raise LockscopeError(why)
        server = mariadbd_binary() or "mariadbd"
        timeout *= self.slowness
        self.base.mkdir(parents=True, exist_ok=True)
        give_to(USER, self.base, self.made_above)
        self.template = make_datadir(
            self.kind, server, INSTALL_DB_ARGS, self.datadir,
            lambda: run_checked(["mariadb-install-db", *INSTALL_DB_ARGS,
                                 f"--datadir={self.datadir}"],
                                "mariadb-install-db", timeout=self.SET_UP_S * self.slowness))
        self.port = free_port()
        self.entry = procledger.manage("mariadb", signal.SIGTERM, "lockscope-mariadb-",
                                       datadir=str(self.datadir))
        argv = [server, "--no-defaults", f"--user={USER}", f"--datadir={self.datadir}",
                f"--socket={self.socket}", f"--port={self.port}", "--skip-networking",
                f"--pid-file={self.base}/mariadbd.pid", f"--log-error={self.log}",
                "--innodb-flush-method=O_DIRECT", "--innodb-buffer-pool-size=128M",
                "--max-connections=200", *self.options]
        self.proc = subprocess.Popen(into_cgroup(argv, self.entry.cgroup),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        self.entry.started(self.proc.pid)
        wait_for(lambda: os.path.exists(self.socket)
                 and mysql_query(self.socket, "SELECT 1") is not None,
                 timeout, "mariadbd", self.proc, self.log)

    def stop(self) -> None:
        """SIGTERM (mariadbd shuts down cleanly on it), SIGKILL after a grace time, for
        everything in its cgroup; safe to call more than once."""
        if self.entry is not None:
            # mariadbd is this process's child: its zombie is reaped here, not by init
            self.entry.stop(STOP_GRACE_S, reap=self.proc.poll if self.proc else None)
        elif self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            try:
                self.proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def sql(self, statement: str) -> str:
        return mysql_query(self.socket, statement, check=True) or ""

    def server(self) -> Server:
        return Server(self.kind, self.pid, self.datadir, self.socket, self.port, self.comm,
                      cgroup=self.entry.cgroup if self.entry else "", log=str(self.log))


def sysbench_argv(server: Server, test: str = "oltp_write_only", tables: int = 2,
                  table_size: int = 2000) -> list[str]:
    """sysbench's OLTP test against the server's socket, as root, database sbtest."""
    return ["sysbench", test, "--db-driver=mysql", "--mysql-user=root",
            f"--mysql-socket={server.socket}", "--mysql-db=sbtest", f"--tables={tables}",
            f"--table-size={table_size}"]
