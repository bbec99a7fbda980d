"""Real database servers for tests: MariaDB started directly (no service manager)
in a directory the test owns, with a private socket, port and pid file, and
stopped on every exit path (use it as a context manager).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from conftest import require_tool

SERVER_USER = "mysql"


def mariadbd_binary() -> str:
    """The server binary (Debian installs it in /usr/sbin, often off PATH)."""
    if os.path.exists("/usr/sbin/mariadbd"):
        return "/usr/sbin/mariadbd"
    return require_tool("mariadbd")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MariaDB:
    """mariadbd with its data directory under ``base`` (e.g. a loop filesystem).

    The server runs as the ``mysql`` user: base's parents must let it through.
    """

    def __init__(self, base: Path):
        self.base = Path(base)
        self.datadir = self.base / "data"
        self.socket = self.base / "mariadbd.sock"
        self.pid_file = self.base / "mariadbd.pid"
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log = self.base / "mariadbd.log"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def __enter__(self) -> "MariaDB":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, timeout: float = 60) -> None:
        install = require_tool("mariadb-install-db")
        server = mariadbd_binary()
        self.base.mkdir(parents=True, exist_ok=True)
        os.chmod(self.base, 0o755)
        shutil.chown(self.base, SERVER_USER, SERVER_USER)
        subprocess.run([install, "--no-defaults", f"--user={SERVER_USER}",
                        f"--datadir={self.datadir}", "--skip-test-db"],
                       check=True, capture_output=True, timeout=120)
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [server, "--no-defaults", f"--user={SERVER_USER}", f"--datadir={self.datadir}",
                 f"--socket={self.socket}", f"--port={self.port}", f"--pid-file={self.pid_file}",
                 "--bind-address=127.0.0.1", "--innodb-flush-method=O_DIRECT",
                 "--innodb-buffer-pool-size=128M", f"--log-error={self.log}"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mariadbd exited: {self.log.read_text()[-2000:]}")
            if self.sql("SELECT 1", check=False).returncode == 0:
                return
            time.sleep(0.3)
        raise RuntimeError("mariadbd did not accept connections in time")

    def sql(self, statement: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([require_tool("mariadb"), "--no-defaults", f"--socket={self.socket}",
                               "-u", "root", "-e", statement],
                              capture_output=True, text=True, timeout=60, check=check)

    def sysbench(self, command: str, *args: str, timeout: float = 300) -> str:
        """sysbench oltp_write_only against this server; returns its output."""
        res = subprocess.run([require_tool("sysbench"), "oltp_write_only", "--db-driver=mysql",
                              f"--mysql-socket={self.socket}", "--mysql-user=root",
                              "--mysql-db=sbtest", *args, command],
                             capture_output=True, text=True, timeout=timeout)
        if res.returncode:
            raise RuntimeError(f"sysbench {command} failed: {res.stdout[-1000:]}{res.stderr[-1000:]}")
        return res.stdout

    def stop(self, timeout: float = 60) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)  # mariadbd shuts down cleanly on TERM
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
