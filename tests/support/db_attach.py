"""What the database attach tests need: the servers' tools, and an attach during a load."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

import dbservers
from conftest import KERNEL_TESTS_REQUIRED, LOCKSCOPE, not_here, require_kernel, require_tool
from lockscope_cli import attach_with_open_window
from patience import patience

ROOT = Path(__file__).resolve().parents[2]
CARGO_BIN = str(Path.home() / ".cargo" / "bin")
LOAD_S = 4
# the longest an attach window of these tests may stay open (its load ends it sooner)
WINDOW_LIMIT_S = 60


def require_module(name: str) -> None:
    """The db extra (make test installs it); skip, or fail under LOCKSCOPE_KERNEL_TESTS=1."""
    try:
        __import__(name)
    except ImportError:
        if KERNEL_TESTS_REQUIRED:
            pytest.fail(f"LOCKSCOPE_KERNEL_TESTS=1 but {name} is not installed")
        pytest.skip(f"{name} not installed (make test installs it)")


def require_server(kind: str) -> None:
    """Root, BPF and what the package needs to start a `kind` server (its own check), or
    skip (fail under LOCKSCOPE_KERNEL_TESTS=1)."""
    from lockscope.run.dbserver import mariadb, postgres
    require_kernel()
    why = {"mariadb": mariadb.missing, "postgres": postgres.missing}[kind]()
    if why:
        not_here(why)


def require_mariadb() -> None:
    """Root, BPF, mariadbd, sysbench and PyMySQL, or skip (fail under LOCKSCOPE_KERNEL_TESTS=1)."""
    require_kernel()
    for tool in ("mariadbd", "sysbench"):
        require_tool(tool)
    require_module("pymysql")


def _attach_during(server, who: list[str], login: list[str], out: Path,
                   start_load, report: bool = True, after_load=None) -> tuple[dict, str]:
    """Run lockscope attach; start the load once the window is open, and `after_load`
    once it has finished; then end the window as Ctrl-C does (its results kept, marked
    partial), so that it holds the load and what follows it at any speed. Return
    (results.json, the load's own output). Without `report`, attach writes no report
    (--no-report): rendering it is a minute of an emulated guest's time."""
    env = LOCKSCOPE.env(PATH=f"{CARGO_BIN}:{os.environ.get('PATH', '')}")
    # A budget this 2-CPU test load stays under: these tests check what attach finds,
    # not when the recorder sheds probes (its own tests do). The duration is only an
    # upper bound: the window ends when the load and what follows it are done.
    with attach_with_open_window(*who, *login, "--max-overhead", "50", "--duration",
                                 f"{patience(WINDOW_LIMIT_S):.1f}", "--out", out,
                                 *([] if report else ["--no-report"]),
                                 env=env, start_new_session=True) as (proc, err):
        client = start_load()
        with dbservers.running(client):
            load_out = dbservers.finish(client)
        if after_load:
            after_load()
        # a last second of the servers' own counters (PostgreSQL flushes a backend's
        # counts up to a second late) before the window ends
        time.sleep(1.0)
        assert proc.poll() is None, "the window ended before the load: " + "".join(err)
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=patience(120))  # stderr belongs to the reader thread
        stdout = proc.stdout.read()
    assert proc.returncode == 130, "".join(err) + stdout
    doc = json.loads((out / "results.json").read_text())
    assert doc["attach"]["ended"] == "interrupted", doc["attach"]
    doc["_stderr"] = "".join(err)  # the live lines (plain: stderr is not a terminal)
    return doc, load_out


def reports_wanted(request: pytest.FixtureRequest) -> bool:
    """Whether a test of this session reads the attach's report (its module's
    test_report_* tests): the host matrix's guests run none, and save rendering it."""
    return any(item.name.startswith("test_report_") and item.module is request.module
               for item in request.session.items)
