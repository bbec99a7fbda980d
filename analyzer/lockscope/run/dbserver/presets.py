"""Database presets of ``lockscope sweep --preset``: a server, how its data is prepared,
the benchmark client run at each client count, and the parser of the client's report.

Per filesystem a preset makes the datadir there, initializes the database, starts the
server (private socket, unique port, own cgroup), prepares the data, and hands the
sweep a command template ({threads}, {runtime}) for the client and the server's
processes to trace. ``--db-scale`` sizes the data: pgbench's scale factor (100,000
accounts each), and as many rows for sysbench (4 tables of 25,000 rows each).
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ...sweep_choices import PRESET_DESCRIPTIONS
from .common import Server, run_checked
from .mariadb import MariaDB, sysbench_argv
from .mariadb import missing as mariadb_missing
from .postgres import Postgres, pg_bin, pgbench_argv
from .postgres import missing as postgres_missing

SYSBENCH_TABLES = 4
SYSBENCH_ROWS_PER_SCALE = 25_000
PREPARE_TIMEOUT_S = 1800


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    server: type[MariaDB | Postgres]
    options: tuple[str, ...]              # server options
    throughput: str                       # parser name (lockscope.run.workload.parsers)
    client: str                           # the client tool, for messages
    missing: Callable[[], str | None]     # what keeps it from running here
    prepare: Callable[[Server, int], None]
    command: Callable[[Server, int], list[str]]  # argv with {threads} and {runtime}

    def template(self, server: Server, scale: int) -> str:
        """The client's command line as a sweep template."""
        return " ".join(_template_word(a) for a in self.command(server, scale))

    @contextmanager
    def running(self, base: Path, scale: int, made_above: Path | None = None
                ) -> Iterator[Server]:
        """The server on ``base`` (its datadir inside), data prepared; stopped on exit."""
        with self.server(base, list(self.options), made_above=made_above) as db:
            server = db.server()
            self.prepare(server, scale)
            yield server


def _template_word(arg: str) -> str:
    """A word of the client's argv in a template: fields as they are, anything else
    shell-quoted with its braces doubled (a path is never read as a field)."""
    if arg.startswith("--") and arg.endswith(("={threads}", "={runtime}")) or \
            arg in ("{threads}", "{runtime}"):
        return arg
    return shlex.quote(arg).replace("{", "{{").replace("}", "}}")


def _sysbench(server: Server, scale: int) -> list[str]:
    return sysbench_argv(server, "oltp_write_only", tables=SYSBENCH_TABLES,
                         table_size=SYSBENCH_ROWS_PER_SCALE * scale)


def _sysbench_prepare(server: Server, scale: int) -> None:
    run_checked(["mariadb", "--no-defaults", "-uroot", f"--socket={server.socket}", "-e",
                 "CREATE DATABASE IF NOT EXISTS sbtest"], "mariadb CREATE DATABASE")
    run_checked(_sysbench(server, scale) + [f"--threads={SYSBENCH_TABLES}", "prepare"],
                "sysbench prepare", timeout=PREPARE_TIMEOUT_S)


def _sysbench_run(server: Server, scale: int) -> list[str]:
    return _sysbench(server, scale) + ["--threads={threads}", "--time={runtime}",
                                       "--report-interval=1", "run"]


def _tool(name: str, package: str) -> str | None:
    return None if shutil.which(name) else f"{name} is not installed (apt install {package})"


def _pgbench_missing() -> str | None:
    b = pg_bin()
    return None if b and (b / "pgbench").exists() else \
        "pgbench is not installed (it comes with the PostgreSQL server package)"


def _pgbench_prepare(server: Server, scale: int) -> None:
    run_checked(pgbench_argv(server) + ["-i", "-q", "-s", str(scale), "postgres"],
                "pgbench -i", timeout=PREPARE_TIMEOUT_S)


def _pgbench_run(server: Server, scale: int) -> list[str]:
    return pgbench_argv(server) + ["-c", "{threads}", "-j", "{threads}", "-T", "{runtime}",
                                   "-P", "1", "postgres"]


PRESETS = {p.name: p for p in (
    Preset("mariadb-oltp", PRESET_DESCRIPTIONS["mariadb-oltp"],
           MariaDB, ("--log-bin=binlog", "--server-id=1", "--sync-binlog=1",
                     "--innodb-log-file-size=64M"),
           "sysbench", "sysbench", lambda: mariadb_missing() or _tool("sysbench", "sysbench"),
           _sysbench_prepare, _sysbench_run),
    Preset("postgres-pgbench", PRESET_DESCRIPTIONS["postgres-pgbench"],
           Postgres, (), "pgbench", "pgbench",
           lambda: postgres_missing() or _pgbench_missing(), _pgbench_prepare,
           _pgbench_run),
)}
