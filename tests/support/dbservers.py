"""Real MariaDB and PostgreSQL servers for tests and benchmarks, started without systemd.

Each server lives on a loop-backed ext4 or XFS image made for it, listens only
on a private Unix socket (no TCP port), and is stopped, its image unmounted and
deleted, on every exit path of the ``with`` block. The servers' lifecycle is the
package's (lockscope.run.dbserver); load comes from the databases' own benchmark
clients (sysbench ``oltp_write_only``, pgbench), whose own TPS the tests compare
against.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

from lockscope.run import dbserver
from lockscope.run.dbserver import Server
from lockscope.run.dbserver.mariadb import mariadbd_binary, mysql_query, sysbench_argv
from lockscope.run.dbserver.postgres import pgbench_argv, psql
from lockscope.run.loopfs import make_loopfs
from lockscope.run.workload.parsers import ToolOutputError, parse_pgbench, parse_sysbench

from patience import patience

__all__ = ["MariaDB", "Server", "mariadb", "mariadbd_binary", "mysql_query", "postgres"]


class MariaDB(dbserver.MariaDB):
    """The package's server, with sysbench at hand for tests."""

    def sysbench(self, command: str, *args: str, timeout: float = 300) -> str:
        """sysbench oltp_write_only against this server; returns its output."""
        res = subprocess.run(["sysbench", "oltp_write_only", "--db-driver=mysql",
                              f"--mysql-socket={self.socket}", "--mysql-user=root",
                              "--mysql-db=sbtest", *args, command],
                             capture_output=True, text=True, timeout=patience(timeout))
        if res.returncode:
            raise RuntimeError(f"sysbench {command} failed: {res.stdout[-1000:]}"
                               f"{res.stderr[-1000:]}")
        return res.stdout


@contextmanager
def mariadb(fstype: str = "ext4", size: int = 2 << 30,
            options: list[str] | None = None) -> Iterator[Server]:
    """MariaDB on a fresh loop image with binary logs; database ``sbtest`` exists."""
    fs = make_loopfs(fstype, size_bytes=size)
    try:
        base = fs.path / "mariadb"
        binlog = [f"--log-bin={base}/data/binlog", "--server-id=1",
                  "--innodb-log-file-size=64M"]
        with MariaDB(base, binlog + list(options or []), made_above=fs.path.parent,
                     slowness=patience(1)) as db:
            db.sql("CREATE DATABASE IF NOT EXISTS sbtest")
            yield db.server()
    finally:
        fs.destroy()


def sysbench_args(server: Server, tables: int = 2, table_size: int = 2000) -> list[str]:
    """sysbench oltp_write_only against the server's socket, as root."""
    return sysbench_argv(server, tables=tables, table_size=table_size)


def sysbench_prepare(server: Server, **kw) -> None:
    subprocess.run(sysbench_args(server, **kw) + ["prepare"], check=True, capture_output=True)


def sysbench_start(server: Server, threads: int, seconds: float, **kw) -> subprocess.Popen:
    """sysbench running in the background; its output says its own TPS (see sysbench_tps)."""
    return subprocess.Popen(sysbench_args(server, **kw) + [
        f"--threads={threads}", f"--time={int(seconds)}", "--report-interval=1", "run"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def sysbench_tps(output: str) -> dict:
    """sysbench's own TPS, read by the sweep's parser (None without its report)."""
    return {"tps": _tps(parse_sysbench, output)}


# ---------------------------------------------------------------- PostgreSQL

@contextmanager
def postgres(fstype: str = "ext4", size: int = 2 << 30,
             options: list[str] | None = None) -> Iterator[Server]:
    """PostgreSQL on a fresh loop image, socket only, trust login as postgres, all its
    processes in a private cgroup (``server.cgroup``): its backends are children of the
    postmaster, which ``--pid`` alone would not cover."""
    fs = make_loopfs(fstype, size_bytes=size)
    try:
        with dbserver.Postgres(fs.path / "postgres", options, made_above=fs.path.parent,
                               slowness=patience(1)) as db:
            yield db.server()
    finally:
        fs.destroy()


def pgbench_args(server: Server) -> list[str]:
    return pgbench_argv(server)


def pgbench_init(server: Server, scale: int = 1) -> None:
    """pgbench's tables, and its commits counted in pg_stat_database before this returns:
    the statistics are reported late (before 15, through the collector), and an init's
    commits counted inside a later window would be taken for the load's."""
    subprocess.run(pgbench_args(server) + ["-i", "-q", "-s", str(scale), "postgres"],
                   check=True, capture_output=True)
    _commits_settled(server)


# What one psql reading of the counts adds to them: its backend's start-up transaction
# and its query (measured: 2 a reading on PostgreSQL 15)
READING_COMMITS = 2


def _commits(server: Server) -> int:
    return int(psql(server, "SELECT sum(xact_commit) FROM pg_stat_database"))


def _commits_settled(server: Server, timeout: float = 60) -> int:
    """Until sum(xact_commit) grows by no more than this loop's own readings over a
    second, twice in a row; the last reading."""
    deadline = time.monotonic() + patience(timeout)
    last, calm = _commits(server), 0
    while calm < 2 and time.monotonic() < deadline:
        time.sleep(1)
        now = _commits(server)
        calm = calm + 1 if now - last <= READING_COMMITS else 0
        last = now
    return last


def pgbench_fixed_commits(server: Server, clients: int) -> int:
    """The commits a pgbench run adds to pg_stat_database beyond its transactions (each
    connection's start-up, its own queries before the run), measured on this server: a
    run of one transaction per client between two settled readings, less the readings'
    own commits as the readings themselves show them."""
    before = _commits_settled(server)
    subprocess.run(_pgbench_clients(server, clients) + ["-t", "1", "postgres"],
                   check=True, capture_output=True)
    time.sleep(1)  # a backend's counts reach the totals as it exits, after its client
    after = _commits(server)
    time.sleep(1)
    reading = _commits(server) - after
    return max(0, after - before - reading - clients)


def pgbench_start(server: Server, clients: int, seconds: float) -> subprocess.Popen:
    """pgbench running in the background; its output says its own TPS (see pgbench_tps).
    -n: no vacuum of its tables first, transactions of its own outside its count."""
    return subprocess.Popen(
        _pgbench_clients(server, clients) + ["-T", str(int(seconds)), "-P", "1", "postgres"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _pgbench_clients(server: Server, clients: int) -> list[str]:
    """pgbench with `clients` connections and no vacuum of its tables first."""
    return pgbench_args(server) + ["-n", "-c", str(clients), "-j", str(min(clients, 2))]


def pgbench_tps(output: str) -> dict:
    """pgbench's own TPS, read by the sweep's parser (None without its report)."""
    return {"tps": _tps(parse_pgbench, output)}


# ---------------------------------------------------------------- shared

def _tps(parse, output: str) -> float | None:
    try:
        return parse(output).ops_s
    except ToolOutputError:
        return None


def finish(client: subprocess.Popen, timeout: float = 120) -> str:
    """Wait for a benchmark client and return its output; killed if it hangs."""
    try:
        out, _ = client.communicate(timeout=patience(timeout))
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
