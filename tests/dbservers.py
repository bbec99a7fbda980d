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
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from lockscope.loopfs import make_loopfs
from lockscope.host import cgroup2_root

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

@contextmanager
def mariadb(fstype: str = "ext4", size: int = 2 << 30,
            options: list[str] | None = None) -> Iterator[Server]:
    """MariaDB on a fresh loop image; database ``sbtest`` exists, root logs in without
    a password over the socket."""
    if not shutil.which("mariadbd"):
        raise RuntimeError("mariadbd not installed")
    fs = make_loopfs(fstype, size_bytes=size)
    proc = None
    rundir = Path(tempfile.mkdtemp(prefix="lockscope-mariadb-"))
    try:
        _open_path(fs.path)
        datadir = fs.path / "mysql"
        datadir.mkdir()
        _chown_tree(datadir, "mysql")
        os.chmod(rundir, 0o755)
        _chown_tree(rundir, "mysql")
        log = rundir / "error.log"
        subprocess.run(["mariadb-install-db", "--user=mysql", f"--datadir={datadir}",
                        "--auth-root-authentication-method=normal", "--skip-test-db"],
                       check=True, capture_output=True)
        sock = str(rundir / "mysqld.sock")
        argv = ["mariadbd", "--no-defaults", "--user=mysql", f"--datadir={datadir}",
                f"--socket={sock}", "--skip-networking", f"--pid-file={rundir}/mysqld.pid",
                f"--log-error={log}", "--innodb-flush-method=O_DIRECT",
                "--innodb-buffer-pool-size=128M", "--innodb-log-file-size=64M",
                f"--log-bin={datadir}/binlog", "--server-id=1", "--max-connections=200"]
        argv += options or []
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        _wait_for(lambda: os.path.exists(sock) and mysql_query(sock, "SELECT 1") is not None,
                  60, "mariadbd", proc, log)
        mysql_query(sock, "CREATE DATABASE IF NOT EXISTS sbtest", check=True)
        yield Server("mariadb", proc.pid, datadir, sock, comm="mariadbd",
                     extra={"log": str(log)})
    finally:
        if proc is not None:
            _stop(proc, signal.SIGTERM, 60)
        fs.destroy()
        shutil.rmtree(rundir, ignore_errors=True)


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
