"""Real MariaDB and PostgreSQL servers for tests and benchmarks, started without systemd.

Each server lives on a loop-backed ext4 or XFS image made for it, listens only
on a private Unix socket (no TCP port), and is stopped, its image unmounted and
deleted, on every exit path of the ``with`` block. Load comes from the
databases' own benchmark clients (sysbench ``oltp_write_only``, pgbench), whose
own TPS the tests compare against.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lockscope.host import cgroup2_root
from lockscope.loopfs import make_loopfs

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def _chown_tree(path: Path, user: str) -> None:
    subprocess.run(["chown", "-R", f"{user}:{user}", str(path)], check=True)


def _open_path(path: Path) -> None:
    """Let a server's user traverse the private directories above its datadir."""
    for p in [path, *path.parents]:
        if str(p) in ("/", "/var", "/tmp", "/var/tmp"):
            break
        os.chmod(p, os.stat(p).st_mode | 0o011)


def _wait_for(predicate, timeout: float, what: str, proc: subprocess.Popen | None = None,
              log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.1)
    tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
    raise RuntimeError(f"{what} did not start within {timeout:.0f} s\n{tail}")


@dataclass
class Server:
    """A running database: its pid, datadir, socket, and how to reach it."""

    kind: str                     # "mariadb" or "postgres"
    pid: int
    datadir: Path
    socket: str                   # socket file (MariaDB) or socket directory (PostgreSQL)
    port: int = 5432
    comm: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def dsn(self) -> str:
        """The read-only login for lockscope attach (--mysql SOCKET / --postgres DSN)."""
        if self.kind == "mariadb":
            return self.socket
        return f"host={self.socket} port={self.port} user=postgres dbname=postgres"


# ---------------------------------------------------------------- MariaDB

def mariadbd_binary() -> str | None:
    """The server binary (Debian installs it in /usr/sbin, often off PATH), or None."""
    return shutil.which("mariadbd") or (
        "/usr/sbin/mariadbd" if os.path.exists("/usr/sbin/mariadbd") else None)


class MariaDB:
    """mariadbd with its data directory under ``base`` (e.g. a loop filesystem), a
    private socket there and no TCP port; a context manager that stops it on every
    exit path. Root logs in without a password over the socket. The server runs as
    the ``mysql`` user: ``base``'s parents must let it through (see _open_path)."""

    def __init__(self, base: Path, options: list[str] | None = None):
        self.base = Path(base)
        self.datadir = self.base / "data"
        self.socket = str(self.base / "mariadbd.sock")
        self.log = self.base / "mariadbd.log"
        self.options = list(options or [])
        self.proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def __enter__(self) -> MariaDB:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, timeout: float = 60) -> None:
        server = mariadbd_binary()
        if server is None:
            raise RuntimeError("mariadbd not installed")
        self.base.mkdir(parents=True, exist_ok=True)
        os.chmod(self.base, 0o755)
        shutil.chown(self.base, "mysql", "mysql")
        subprocess.run(["mariadb-install-db", "--no-defaults", "--user=mysql",
                        f"--datadir={self.datadir}", "--auth-root-authentication-method=normal",
                        "--skip-test-db"], check=True, capture_output=True, timeout=120)
        self.proc = subprocess.Popen(
            [server, "--no-defaults", "--user=mysql", f"--datadir={self.datadir}",
             f"--socket={self.socket}", "--skip-networking",
             f"--pid-file={self.base}/mariadbd.pid", f"--log-error={self.log}",
             "--innodb-flush-method=O_DIRECT", "--innodb-buffer-pool-size=128M",
             "--max-connections=200", *self.options],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        _wait_for(lambda: os.path.exists(self.socket)
                  and mysql_query(self.socket, "SELECT 1") is not None,
                  timeout, "mariadbd", self.proc, self.log)

    def stop(self, timeout: float = 60) -> None:
        if self.proc is not None:
            _stop(self.proc, signal.SIGTERM, timeout)  # mariadbd shuts down cleanly on TERM

    def sql(self, statement: str) -> str:
        return mysql_query(self.socket, statement, check=True) or ""

    def sysbench(self, command: str, *args: str, timeout: float = 300) -> str:
        """sysbench oltp_write_only against this server; returns its output."""
        res = subprocess.run(["sysbench", "oltp_write_only", "--db-driver=mysql",
                              f"--mysql-socket={self.socket}", "--mysql-user=root",
                              "--mysql-db=sbtest", *args, command],
                             capture_output=True, text=True, timeout=timeout)
        if res.returncode:
            raise RuntimeError(f"sysbench {command} failed: {res.stdout[-1000:]}"
                               f"{res.stderr[-1000:]}")
        return res.stdout

    def server(self) -> Server:
        return Server("mariadb", self.pid, self.datadir, self.socket, comm="mariadbd",
                      extra={"log": str(self.log)})


@contextmanager
def mariadb(fstype: str = "ext4", size: int = 2 << 30,
            options: list[str] | None = None) -> Iterator[Server]:
    """MariaDB on a fresh loop image with binary logs; database ``sbtest`` exists."""
    fs = make_loopfs(fstype, size_bytes=size)
    try:
        _open_path(fs.path)
        base = fs.path / "mariadb"
        binlog = [f"--log-bin={base}/data/binlog", "--server-id=1",
                  "--innodb-log-file-size=64M"]
        with MariaDB(base, binlog + list(options or [])) as db:
            db.sql("CREATE DATABASE IF NOT EXISTS sbtest")
            yield db.server()
    finally:
        fs.destroy()


def mysql_query(sock: str, sql: str, check: bool = False) -> str | None:
    res = subprocess.run(["mariadb", "--no-defaults", "-uroot", f"--socket={sock}", "-N",
                          "-e", sql], capture_output=True, text=True)
    if res.returncode != 0:
        if check:
            raise RuntimeError(f"mariadb -e {sql!r}: {res.stderr.strip()}")
        return None
    return res.stdout


def sysbench_args(server: Server, tables: int = 2, table_size: int = 2000) -> list[str]:
    """sysbench oltp_write_only against the server's socket, as root."""
    return ["sysbench", "oltp_write_only", "--db-driver=mysql", "--mysql-user=root",
            f"--mysql-socket={server.socket}", "--mysql-db=sbtest", f"--tables={tables}",
            f"--table-size={table_size}"]


def sysbench_prepare(server: Server, **kw) -> None:
    subprocess.run(sysbench_args(server, **kw) + ["prepare"], check=True, capture_output=True)


def sysbench_start(server: Server, threads: int, seconds: float, **kw) -> subprocess.Popen:
    """sysbench running in the background; its output says its own TPS (see sysbench_tps)."""
    return subprocess.Popen(sysbench_args(server, **kw) + [
        f"--threads={threads}", f"--time={int(seconds)}", "--report-interval=1", "run"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def sysbench_tps(output: str) -> dict:
    """sysbench's own figures: total TPS and the per-second report lines."""
    total = re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", output)
    per_s = [float(m) for m in re.findall(r"\]\s+thds:\s+\d+\s+tps:\s+([\d.]+)", output)]
    return {"tps": float(total.group(1)) if total else None, "per_second": per_s}


# ---------------------------------------------------------------- PostgreSQL

def _as_postgres(argv: list[str], cgroup: Path | None = None,
                 **kw) -> subprocess.CompletedProcess:
    """Run as user postgres; inside ``cgroup`` (so that all its children are) if given."""
    pre = ["sh", "-c", f'echo $$ > "{cgroup}/cgroup.procs" && exec "$@"', "sh"] \
        if cgroup else []
    return subprocess.run(pre + ["runuser", "-u", "postgres", "--"] + argv, **kw)


@contextmanager
def private_cgroup(prefix: str) -> Iterator[Path]:
    """A new empty cgroup v2 directory, removed at the end (after its tasks are gone)."""
    root = cgroup2_root()
    if root is None:
        raise RuntimeError("no cgroup v2 hierarchy mounted")
    path = root / f"{prefix}{os.getpid()}-{time.monotonic_ns()}"
    path.mkdir()
    try:
        yield path
    finally:
        for _ in range(100):
            try:
                path.rmdir()
                break
            except OSError:
                time.sleep(0.1)


@contextmanager
def postgres(fstype: str = "ext4", size: int = 2 << 30,
             options: list[str] | None = None) -> Iterator[Server]:
    """PostgreSQL 15 on a fresh loop image, socket only, trust login as postgres, all
    its processes in a private cgroup (``extra["cgroup"]``): its backends are children
    of the postmaster, which ``--pid`` alone would not cover."""
    if not (PG_BIN / "postgres").exists():
        raise RuntimeError("postgresql-15 not installed")
    with private_cgroup("lockscope-pg-") as cgroup:
        with _postgres(fstype, size, options, cgroup) as server:
            yield server


@contextmanager
def _postgres(fstype, size, options, cgroup: Path) -> Iterator[Server]:
    fs = make_loopfs(fstype, size_bytes=size)
    started = False
    rundir = Path(tempfile.mkdtemp(prefix="lockscope-pg-"))
    datadir = fs.path / "pgdata"
    try:
        _open_path(fs.path)
        datadir.mkdir()
        _chown_tree(datadir, "postgres")
        os.chmod(rundir, 0o755)
        _chown_tree(rundir, "postgres")
        _as_postgres([str(PG_BIN / "initdb"), "-D", str(datadir), "-A", "trust"],
                     check=True, capture_output=True)
        port = 5432
        opts = [f"-p {port}", f"-k {rundir}", "-c listen_addresses=", "-c shared_buffers=64MB"]
        opts += [f"-c {o}" for o in options or []]
        log = rundir / "server.log"
        _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(datadir), "-l", str(log), "-w",
                      "-t", "60", "-o", " ".join(opts), "start"], cgroup=cgroup, check=True,
                     capture_output=True)
        started = True
        pid = int((datadir / "postmaster.pid").read_text().split()[0])
        yield Server("postgres", pid, datadir, str(rundir), port=port, comm="postgres",
                     extra={"log": str(log), "cgroup": str(cgroup)})
    finally:
        if started:
            _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(datadir), "-m", "immediate",
                          "-w", "stop"], capture_output=True)
        fs.destroy()
        shutil.rmtree(rundir, ignore_errors=True)


def pgbench_args(server: Server) -> list[str]:
    return ["runuser", "-u", "postgres", "--", str(PG_BIN / "pgbench"), "-h", server.socket,
            "-p", str(server.port), "-U", "postgres"]


def pgbench_init(server: Server, scale: int = 1) -> None:
    subprocess.run(pgbench_args(server) + ["-i", "-q", "-s", str(scale), "postgres"],
                   check=True, capture_output=True)


def pgbench_start(server: Server, clients: int, seconds: float) -> subprocess.Popen:
    """pgbench running in the background; its output says its own TPS (see pgbench_tps)."""
    return subprocess.Popen(pgbench_args(server) + [
        "-c", str(clients), "-j", str(min(clients, 2)), "-T", str(int(seconds)), "-P", "1",
        "postgres"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)


def pgbench_tps(output: str) -> dict:
    total = re.search(r"tps = ([\d.]+)", output)
    per_s = [float(m) for m in re.findall(r"progress: [\d.]+ s, ([\d.]+) tps", output)]
    return {"tps": float(total.group(1)) if total else None, "per_second": per_s}


# ---------------------------------------------------------------- shared

def _stop(proc: subprocess.Popen, sig: int, timeout: float) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def finish(client: subprocess.Popen, timeout: float = 120) -> str:
    """Wait for a benchmark client and return its output; killed if it hangs."""
    try:
        out, _ = client.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(client.pid, signal.SIGKILL)
        out, _ = client.communicate()
    return out or ""


@contextmanager
def running(client: subprocess.Popen) -> Iterator[subprocess.Popen]:
    """Kill a background client's process group if the block is left early."""
    try:
        yield client
    finally:
        if client.poll() is None:
            try:
                os.killpg(client.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            client.wait()
